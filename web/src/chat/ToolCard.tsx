import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { mcpToolOrigin } from "./mcpTool";
import {
  ID_KEYS,
  isSubagentTool,
  jsonObject,
  RUN_ID_KEYS,
  subagentHeadline,
  subagentOutcome,
} from "./subagentTool";
import type { ToolItem } from "./transcript";

/** JSON text re-indented for reading; anything else as it came. */
function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

type ToolState = "interrupted" | "running" | "cancelled" | "timeout" | "failed" | "noResult" | "done";

function state(
  item: ToolItem,
  result: Record<string, unknown> | null,
): { label: ToolState; className: string } {
  if (item.interrupted && item.result === null) return { label: "interrupted", className: "interrupted" };
  if (!item.done) return { label: "running", className: "running" };
  // A cancelled or timed-out child is its own state, even when the call reports it as an error.
  const outcome = isSubagentTool(item.name) ? subagentOutcome(result) : null;
  if (outcome) return { label: outcome, className: outcome };
  if (item.isError) return { label: "failed", className: "error" };
  return { label: item.result === null ? "noResult" : "done", className: "success" };
}

/** The tool's name; for an MCP tool, its server and its own name. */
function ToolName({ name }: { name: string }) {
  const { t } = useTranslation();
  const origin = mcpToolOrigin(name);
  if (!origin) return <span className="tool-name">{name}</span>;
  return (
    <span className="tool-name" title={name}>
      <span className="badge muted tool-origin" data-testid="tool-mcp-server" data-server={origin.server}>
        {t("tool.mcpServer", { server: origin.server })}
      </span>
      <span data-testid="tool-own-name">
        {origin.tool}
        {origin.shortened && "…"}
      </span>
    </span>
  );
}

/** One field's value: run ids open the child's popup (when the page can), other ids are chips. */
function FieldValue({
  name,
  value,
  onOpenRun,
}: {
  name: string;
  value: unknown;
  onOpenRun?: (runId: string) => void;
}) {
  const { t } = useTranslation();
  if (typeof value === "string" && RUN_ID_KEYS.has(name) && onOpenRun) {
    return (
      <button
        type="button"
        className="link id-chip"
        data-testid="tool-open-run"
        title={t("tool.openRun")}
        onClick={() => onOpenRun(value)}
      >
        {value}
      </button>
    );
  }
  if (typeof value === "string" && (RUN_ID_KEYS.has(name) || ID_KEYS.has(name))) {
    return (
      <code className="id-chip" data-testid="tool-id-chip">
        {value}
      </code>
    );
  }
  const text = typeof value === "string" ? value : JSON.stringify(value, null, 2);
  return <span className="field-text">{text}</span>;
}

/** A JSON object as labelled fields. */
function Fields({
  value,
  onOpenRun,
}: {
  value: Record<string, unknown>;
  onOpenRun?: (runId: string) => void;
}) {
  const { t } = useTranslation();
  return (
    <dl className="tool-fields" data-testid="tool-fields">
      {Object.entries(value).map(([name, field]) => (
        <div key={name}>
          <dt>{t(`tool.field.${name}`, { defaultValue: name })}</dt>
          <dd>
            <FieldValue name={name} value={field} onOpenRun={onOpenRun} />
          </dd>
        </div>
      ))}
    </dl>
  );
}

interface ToolCardProps {
  item: ToolItem;
  extra?: ReactNode;
  /** Opens a subagent run's popup by its id (the page shows one). */
  onOpenRun?: (runId: string) => void;
}

/**
 * A tool call: its name and state, expandable to its arguments and result. A subagent call
 * names its child and task when collapsed, and shows its arguments and result as fields.
 */
export function ToolCard({ item, extra, onOpenRun }: ToolCardProps) {
  const { t } = useTranslation();
  const args = jsonObject(item.arguments);
  const result = jsonObject(item.result);
  const { label, className } = state(item, result);
  const subagent = isSubagentTool(item.name);
  const headline = subagent ? subagentHeadline(args, result) : null;
  return (
    <details className="tool-card" data-testid="tool-card" data-tool={item.name} data-state={label}>
      <summary>
        <ToolName name={item.name} />
        {headline && (
          <span className="tool-headline" data-testid="tool-subagent" title={headline.task}>
            {headline.task
              ? t("tool.subagentTask", { who: headline.who, task: headline.task })
              : headline.who}
          </span>
        )}
        <span className={`status ${className}`}>{t(`tool.state.${label}`)}</span>
      </summary>
      <div className="tool-body">
        <h4>{t("tool.arguments")}</h4>
        {subagent && args ? (
          <Fields value={args} onOpenRun={onOpenRun} />
        ) : (
          <pre>{item.arguments ? pretty(item.arguments) : t("tool.noArguments")}</pre>
        )}
        <h4>{t("tool.result")}</h4>
        {subagent && result ? (
          <Fields value={result} onOpenRun={onOpenRun} />
        ) : (
          <pre className={item.isError ? "error" : undefined}>
            {item.result === null ? (item.done ? t("tool.noResult") : "…") : pretty(item.result)}
          </pre>
        )}
      </div>
      {extra}
    </details>
  );
}
