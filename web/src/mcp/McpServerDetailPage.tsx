import { useState, type ReactNode } from "react";
import { Trans, useTranslation } from "react-i18next";
import { Link, useNavigate, useParams } from "react-router-dom";
import {
  deleteMcpServer,
  getMcpServer,
  patchMcpServer,
  type McpServerView,
  type McpValueView,
} from "../api/mcp";
import { ConfirmDeleteDialog } from "../components/ConfirmDeleteDialog";
import { LoadedPage } from "../components/LoadState";
import { SharingSection } from "../components/SharingSection";
import { useAsync } from "../lib/useAsync";
import { McpCheckPanel } from "./McpCheck";
import { mcpServerUrl, transportTarget } from "./serverModel";
import { TransportBadge } from "./TransportBadge";

/** `/mcp-servers/<id>`: one server's settings, sharing, connection test and deletion. */
export function McpServerDetailPage() {
  const { id = "" } = useParams();
  const loaded = useAsync(() => getMcpServer(id), id);
  const { t } = useTranslation();

  return (
    <LoadedPage
      state={loaded}
      back={{ to: "/mcp-servers", label: t("mcp.backToList") }}
      errorTestId="mcp-error"
    >
      {(server) => <McpServerDetail key={id} server={server} onChanged={loaded.setData} />}
    </LoadedPage>
  );
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
      {server.can_manage && (
        <SharingSection
          prefix="mcp"
          texts="mcp.detail"
          shareConfig={server.share_config}
          save={async (shareConfig) =>
            onChanged(await patchMcpServer(server.id, { share_config: shareConfig }))
          }
        />
      )}
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
