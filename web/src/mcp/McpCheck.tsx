import { useState } from "react";
import { useTranslation } from "react-i18next";
import { errorMessage } from "../api";
import { checkMcpServer, patchMcpServer, type McpCheckView, type McpServerView } from "../api/mcp";
import { formatNumber } from "../lib/format";
import { checkErrorKind, isToolEnabled, toggleTool } from "./serverModel";

/** What a check found: the server, its protocol version and latency, and its tools. */
export function McpCheckResult({
  check,
  enabledTools,
  canManage,
  busy,
  onToggle,
  onEnableAll,
}: {
  check: McpCheckView;
  /** The server's allow-list (`null`: every tool). */
  enabledTools: readonly string[] | null;
  canManage: boolean;
  busy: boolean;
  onToggle: (name: string, on: boolean) => void;
  onEnableAll: () => void;
}) {
  const { t } = useTranslation();
  const ms = formatNumber(check.latency_ms);
  if (!check.ok) {
    const kind = checkErrorKind(check.error?.kind ?? "");
    return (
      <div className="check-result" role="alert" data-testid="mcp-check-error" data-kind={kind}>
        <p className="error">
          <strong>{t(`mcp.check.errors.${kind}`)}</strong> {t("mcp.check.afterMs", { ms })}
        </p>
        {check.error?.message && (
          <p className="muted" data-testid="mcp-check-message">
            {/* A refusal is ARS's own word: nothing reached the server. */}
            {t(kind === "refused_address" ? "mcp.check.why" : "mcp.check.serverSaid", {
              message: check.error.message,
            })}
          </p>
        )}
      </div>
    );
  }
  const offered = check.tools.filter((tool) => isToolEnabled(enabledTools, tool.name)).length;
  const info = check.server_info;
  return (
    <div className="check-result" data-testid="mcp-check-ok">
      <p className="success" role="status">
        {t("mcp.check.ok", { ms })}
      </p>
      <dl className="facts">
        {info && (
          <div>
            <dt>{t("mcp.check.server")}</dt>
            <dd data-testid="mcp-check-server">
              {info.title ? `${info.title} (${info.name})` : info.name}{" "}
              <span className="muted">{info.version}</span>
            </dd>
          </div>
        )}
        {check.protocol_version && (
          <div>
            <dt>{t("mcp.check.protocol")}</dt>
            <dd data-testid="mcp-check-protocol">
              <code>{check.protocol_version}</code>
            </dd>
          </div>
        )}
        <div>
          <dt>{t("mcp.check.latency")}</dt>
          <dd data-testid="mcp-check-latency">{t("mcp.check.latencyValue", { ms })}</dd>
        </div>
      </dl>
      {check.instructions && (
        <details className="schema">
          <summary>{t("mcp.check.instructions")}</summary>
          <pre className="pre">{check.instructions}</pre>
        </details>
      )}
      <h3>{t("mcp.check.tools")}</h3>
      {check.tools.length === 0 ? (
        <p className="muted">{t("mcp.check.noTools")}</p>
      ) : (
        <>
          <p className="hint" data-testid="mcp-tools-summary">
            {enabledTools == null
              ? t("mcp.check.allOffered")
              : t("mcp.check.someOffered", { count: offered, total: check.tools.length })}{" "}
            {canManage && enabledTools != null && (
              <button
                type="button"
                className="link"
                data-testid="mcp-tools-all"
                disabled={busy}
                onClick={onEnableAll}
              >
                {t("mcp.check.offerAll")}
              </button>
            )}
          </p>
          <ul className="mcp-tools" data-testid="mcp-tools">
            {check.tools.map((tool) => (
              <li key={tool.name} data-testid={`mcp-tool-${tool.name}`}>
                <label className="check">
                  <input
                    type="checkbox"
                    data-testid={`mcp-tool-toggle-${tool.name}`}
                    checked={isToolEnabled(enabledTools, tool.name)}
                    disabled={!canManage || busy}
                    aria-label={t("mcp.check.offer", { name: tool.name })}
                    onChange={(e) => onToggle(tool.name, e.target.checked)}
                  />
                  <code className="tool-title">{tool.name}</code>
                  {tool.title && <span className="muted tool-subtitle">{tool.title}</span>}
                </label>
                {tool.description && <p className="tool-description">{tool.description}</p>}
                {tool.problem && (
                  <p className="error" role="alert" data-testid={`mcp-tool-problem-${tool.name}`}>
                    {t("mcp.check.leftOut", { reason: tool.problem })}
                  </p>
                )}
                <p className="hint">
                  {t("mcp.check.agentName")} <code>{tool.agent_name}</code>
                </p>
                <details className="schema">
                  <summary>{t("mcp.check.schema")}</summary>
                  <pre data-testid={`mcp-tool-schema-${tool.name}`}>
                    {JSON.stringify(tool.input_schema, null, 2)}
                  </pre>
                </details>
              </li>
            ))}
          </ul>
        </>
      )}
    </div>
  );
}

/** "Test connection" for a saved server, and the tool choice from what it lists. */
export function McpCheckPanel({
  server,
  onChanged,
}: {
  server: McpServerView;
  onChanged: (server: McpServerView) => void;
}) {
  const { t } = useTranslation();
  const [checking, setChecking] = useState(false);
  const [check, setCheck] = useState<McpCheckView | null>(null);
  // The allow-list being saved, shown at once; the stored one again once the server answered.
  const [pending, setPending] = useState<{ tools: string[] | null } | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function run() {
    setChecking(true);
    setError(null);
    try {
      setCheck(await checkMcpServer(server.id));
    } catch (failure) {
      setCheck(null);
      setError(errorMessage(failure));
    } finally {
      setChecking(false);
    }
  }

  async function save(enabledTools: string[] | null) {
    setPending({ tools: enabledTools });
    setError(null);
    try {
      onChanged(await patchMcpServer(server.id, { enabled_tools: enabledTools }));
    } catch (failure) {
      setError(t("mcp.check.toggleFailed", { message: errorMessage(failure) }));
    } finally {
      setPending(null);
    }
  }

  const listed = check?.tools.map((tool) => tool.name) ?? [];
  const enabledTools = pending ? pending.tools : (server.enabled_tools ?? null);
  return (
    <section aria-labelledby="mcp-check-title" className="mcp-check">
      <h2 id="mcp-check-title">{t("mcp.check.title")}</h2>
      <p className="hint">{t("mcp.check.hint")}</p>
      <div className="test-connection">
        <button type="button" data-testid="mcp-test" disabled={checking} onClick={() => void run()}>
          {checking ? t("mcp.check.running") : t("mcp.check.run")}
        </button>
      </div>
      {error && (
        <p className="error" role="alert" data-testid="mcp-check-failure">
          {error}
        </p>
      )}
      {check && !checking && (
        <McpCheckResult
          check={check}
          enabledTools={enabledTools}
          canManage={server.can_manage}
          busy={pending !== null}
          onToggle={(name, on) => void save(toggleTool(enabledTools, listed, name, on))}
          onEnableAll={() => void save(null)}
        />
      )}
    </section>
  );
}
