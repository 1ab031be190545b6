import { useState } from "react";
import { Trans, useTranslation } from "react-i18next";
import { Link } from "react-router-dom";
import { deleteMcpServer, listMcpServers, type McpServerView } from "../api/mcp";
import { ConfirmDeleteDialog } from "../components/ConfirmDeleteDialog";
import { ListTable } from "../components/ListTable";
import { ErrorNote, Loading } from "../components/LoadState";
import { useAsync } from "../lib/useAsync";
import { mcpServerUrl, sortServers, transportTarget } from "./serverModel";
import { TransportBadge } from "./TransportBadge";

/** `/mcp-servers`: every MCP server the user can see. */
export function McpServersPage() {
  const { t } = useTranslation();
  const servers = useAsync(listMcpServers, "mcp-servers");
  const [deleting, setDeleting] = useState<McpServerView | null>(null);
  const shown = sortServers(servers.data ?? []);

  return (
    <main className="page">
      <div className="page-head">
        <h1>{t("mcp.title")}</h1>
        <Link className="button primary" to="/mcp-servers/new" data-testid="mcp-new">
          {t("mcp.new")}
        </Link>
      </div>
      <p className="hint">{t("mcp.intro")}</p>
      <ErrorNote error={servers.error} />
      {servers.loading && !servers.data ? (
        <Loading text={t("mcp.loading")} />
      ) : shown.length === 0 ? (
        <p className="empty" data-testid="mcp-empty">
          {t("mcp.empty")}
        </p>
      ) : (
        <ListTable testId="mcp-server-list">
          <thead>
            <tr>
              <th scope="col">{t("mcp.columns.name")}</th>
              <th scope="col">{t("mcp.columns.slug")}</th>
              <th scope="col">{t("mcp.columns.transport")}</th>
              <th scope="col" className="wide-only">
                {t("mcp.columns.target")}
              </th>
              <th scope="col" className="wide-only">
                {t("mcp.columns.sharing")}
              </th>
              <th scope="col">
                <span className="visually-hidden">{t("mcp.columns.actions")}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {shown.map((server) => (
              <ServerRow key={server.id} server={server} onDelete={setDeleting} />
            ))}
          </tbody>
        </ListTable>
      )}
      {deleting && (
        <ConfirmDeleteDialog
          title={t("mcp.deleteTitle", { name: deleting.name })}
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await deleteMcpServer(deleting.id);
            setDeleting(null);
            servers.reload();
          }}
        >
          <p>
            <Trans
              i18nKey="mcp.deleteBody"
              values={{ slug: deleting.slug }}
              components={{ code: <code /> }}
            />
          </p>
        </ConfirmDeleteDialog>
      )}
    </main>
  );
}

function ServerRow({
  server,
  onDelete,
}: {
  server: McpServerView;
  onDelete: (server: McpServerView) => void;
}) {
  const { t } = useTranslation();
  const visibility = server.share_config.visibility ?? "private";
  return (
    <tr data-testid={`mcp-row-${server.slug}`} data-server-id={server.id}>
      <td>
        <Link to={mcpServerUrl(server)} data-testid={`mcp-open-${server.slug}`}>
          {server.name}
        </Link>{" "}
        {server.problem && (
          <span className="badge warning-badge" title={server.problem} data-testid="mcp-problem">
            {t("mcp.problem")}
          </span>
        )}
      </td>
      <td>
        <code>{server.slug}</code>
      </td>
      <td>
        <TransportBadge type={server.transport.type} />
      </td>
      <td className="wide-only target">
        <code data-testid="mcp-target">{transportTarget(server.transport)}</code>
      </td>
      <td className="wide-only">{t(`agents.visibility.${visibility}`)}</td>
      <td>
        <div className="row-actions">
          {server.can_manage && (
            <Link
              className="button"
              to={`${mcpServerUrl(server)}/edit`}
              data-testid={`mcp-edit-${server.slug}`}
            >
              {t("common.edit")}
            </Link>
          )}
          {server.can_delete && (
            <button
              type="button"
              className="danger"
              data-testid={`mcp-delete-${server.slug}`}
              onClick={() => onDelete(server)}
            >
              {t("common.delete")}
            </button>
          )}
        </div>
      </td>
    </tr>
  );
}
