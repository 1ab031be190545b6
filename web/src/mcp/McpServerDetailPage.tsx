import { useState, type ReactNode } from "react";
import { Trans, useTranslation } from "react-i18next";
import { Link, useNavigate, useParams } from "react-router-dom";
import { errorMessage } from "../api";
import {
  deleteMcpServer,
  getMcpServer,
  patchMcpServer,
  type McpServerView,
  type McpValueView,
} from "../api/mcp";
import { ConfirmDeleteDialog } from "../components/ConfirmDeleteDialog";
import { ShareToggle } from "../components/ShareToggle";
import { isPublic, withPublic } from "../lib/sharing";
import { useAsync } from "../lib/useAsync";
import { McpCheckPanel } from "./McpCheck";
import { mcpServerUrl, transportTarget } from "./serverModel";
import { TransportBadge } from "./TransportBadge";

/** `/mcp-servers/<id>`: one server's settings, sharing, connection test and deletion. */
export function McpServerDetailPage() {
  const { id = "" } = useParams();
  const loaded = useAsync(() => getMcpServer(id), id);
  const { t } = useTranslation();

  if (loaded.error != null) {
    return (
      <main className="page">
        <p className="error" role="alert" data-testid="mcp-error">
          {errorMessage(loaded.error)}
        </p>
        <Link to="/mcp-servers">{t("mcp.backToList")}</Link>
      </main>
    );
  }
  if (!loaded.data) {
    return (
      <main className="page">
        <p className="loading">{t("common.loading")}</p>
      </main>
    );
  }
  return <McpServerDetail key={id} server={loaded.data} onChanged={loaded.setData} />;
}

function McpServerDetail({
  server,
  onChanged,
}: {
  server: McpServerView;
  onChanged: (server: McpServerView) => void;
}) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const [deleting, setDeleting] = useState(false);
  return (
    <main className="page mcp-detail" data-testid="mcp-detail" data-server-id={server.id}>
      <p>
        <Link to="/mcp-servers" data-testid="mcp-back">
          {t("mcp.back")}
        </Link>
      </p>
      <div className="page-head">
        <h1>{server.name}</h1>
        <TransportBadge type={server.transport.type} />
        <div className="row-actions">
          {server.can_manage && (
            <Link className="button" to={`${mcpServerUrl(server)}/edit`} data-testid="mcp-edit">
              {t("common.edit")}
            </Link>
          )}
          {server.can_delete && (
            <button
              type="button"
              className="danger"
              data-testid="mcp-delete"
              onClick={() => setDeleting(true)}
            >
              {t("common.delete")}
            </button>
          )}
        </div>
      </div>
      {server.description && <p className="description">{server.description}</p>}
      {server.problem && (
        <p className="notice-box warning" role="note" data-testid="mcp-problem">
          {server.problem}
        </p>
      )}
      {!server.can_manage && (
        <p className="hint" data-testid="mcp-read-only">
          {server.transport.type === "stdio" ? t("mcp.detail.stdioAdminOnly") : t("mcp.detail.readOnly")}
        </p>
      )}
      <Settings server={server} />
      {server.can_manage && <Sharing server={server} onChanged={onChanged} />}
      <McpCheckPanel server={server} onChanged={onChanged} />
      {deleting && (
        <ConfirmDeleteDialog
          title={t("mcp.deleteTitle", { name: server.name })}
          onClose={() => setDeleting(false)}
          onConfirm={async () => {
            await deleteMcpServer(server.id);
            navigate("/mcp-servers");
          }}
        >
          <p>
            <Trans i18nKey="mcp.deleteBody" values={{ slug: server.slug }} components={{ code: <code /> }} />
          </p>
        </ConfirmDeleteDialog>
      )}
    </main>
  );
}

/** Environment variables or headers: plain values shown, secret ones only as set. */
function Values({ values }: { values: readonly McpValueView[] }) {
  const { t } = useTranslation();
  if (values.length === 0) return <>{t("common.none")}</>;
  return (
    <ul className="plain-list">
      {values.map((v) => (
        <li key={v.name} data-testid={`mcp-value-${v.name}`}>
          <code>{v.name}</code>{" "}
          {v.secret ? (
            <span className="badge muted">{t("mcp.detail.secretSet")}</span>
          ) : (
            <code>{v.value ?? ""}</code>
          )}
        </li>
      ))}
    </ul>
  );
}

function Settings({ server }: { server: McpServerView }) {
  const { t } = useTranslation();
  const transport = server.transport;
  const rows: Array<[string, ReactNode]> = [[t("mcp.detail.slug"), <code key="slug">{server.slug}</code>]];
  if (transport.type === "stdio") {
    rows.push(
      [t("mcp.detail.command"), <code key="command">{transportTarget(transport)}</code>],
      [
        t("mcp.detail.cwd"),
        transport.cwd ? <code key="cwd">{transport.cwd}</code> : t("mcp.detail.cwdDefault"),
      ],
      [
        t("mcp.detail.network"),
        transport.network ? t("mcp.detail.networkAllowed") : t("mcp.detail.networkBlocked"),
      ],
      [t("mcp.detail.env"), <Values key="env" values={transport.env} />],
    );
  } else {
    rows.push(
      [t("mcp.detail.url"), <code key="url">{transport.url}</code>],
      [t("mcp.detail.headers"), <Values key="headers" values={transport.headers} />],
    );
  }
  rows.push([
    t("mcp.detail.tools"),
    server.enabled_tools == null
      ? t("mcp.detail.toolsAll")
      : server.enabled_tools.length === 0
        ? t("mcp.detail.toolsNone")
        : t("mcp.detail.toolsSome", { names: server.enabled_tools.join(", ") }),
  ]);
  return (
    <section aria-labelledby="mcp-settings-title">
      <h2 id="mcp-settings-title">{t("mcp.detail.settings")}</h2>
      <table className="frontmatter" data-testid="mcp-settings">
        <tbody>
          {rows.map(([label, value]) => (
            <tr key={label}>
              <th scope="row">{label}</th>
              <td>{value}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </section>
  );
}

function Sharing({
  server,
  onChanged,
}: {
  server: McpServerView;
  onChanged: (server: McpServerView) => void;
}) {
  const { t } = useTranslation();
  const [error, setError] = useState<string | undefined>();
  // The choice being saved, shown at once; the stored one again once the server answered.
  const [pending, setPending] = useState<boolean | null>(null);
  async function change(shared: boolean) {
    setError(undefined);
    setPending(shared);
    try {
      onChanged(await patchMcpServer(server.id, { share_config: withPublic(shared, server.share_config) }));
    } catch (failure) {
      setError(t("mcp.detail.sharingFailed", { message: errorMessage(failure) }));
    } finally {
      setPending(null);
    }
  }
  const shared = pending ?? isPublic(server.share_config);
  return (
    <section aria-labelledby="mcp-sharing-title">
      <h2 id="mcp-sharing-title">{t("mcp.detail.sharing")}</h2>
      <ShareToggle
        testId="mcp-share"
        field="mcp-share"
        checked={shared}
        disabled={pending !== null}
        onChange={(shared) => void change(shared)}
        error={error}
      />
      <p className="hint" data-testid="mcp-visibility">
        {shared
          ? t("mcp.detail.visibilityPublic")
          : server.share_config.visibility === "users"
            ? t("mcp.detail.visibilityUsers")
            : t("mcp.detail.visibilityPrivate")}
      </p>
    </section>
  );
}
