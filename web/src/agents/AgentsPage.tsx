import { useState } from "react";
import { Trans, useTranslation } from "react-i18next";
import { Link } from "react-router-dom";
import { api, unwrap } from "../api";
import { listAllAgents } from "../api/agents";
import type { Agent } from "../api/types";
import { ConfirmDeleteDialog } from "../components/ConfirmDeleteDialog";
import { ListTable } from "../components/ListTable";
import { ErrorNote, Loading } from "../components/LoadState";
import { agentDescription, agentName } from "../lib/builtinText";
import { useAsync } from "../lib/useAsync";
import { ResolvedContextDialog } from "./ResolvedContextDialog";

function matches(agent: Agent, query: string): boolean {
  const q = query.trim().toLowerCase();
  const texts = [agent.name, agent.slug, agent.description, agentName(agent), agentDescription(agent)];
  return !q || texts.some((text) => text.toLowerCase().includes(q));
}

/** `/agents`: every agent the user can see, subagents marked. */
export function AgentsPage() {
  const { t } = useTranslation();
  const agents = useAsync(listAllAgents, "agents");
  const [query, setQuery] = useState("");
  const [deleting, setDeleting] = useState<Agent | null>(null);
  const [inspecting, setInspecting] = useState<Agent | null>(null);

  const shown = (agents.data ?? []).filter((a) => matches(a, query));
  return (
    <main className="page">
      <div className="page-head">
        <h1>{t("agents.title")}</h1>
        <input
          type="search"
          aria-label={t("agents.search")}
          placeholder={t("agents.searchPlaceholder")}
          data-testid="agent-search"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
        <Link className="button primary" to="/agents/new" data-testid="agent-new">
          {t("agents.new")}
        </Link>
      </div>
      <ErrorNote error={agents.error} />
      {agents.loading && !agents.data ? (
        <Loading text={t("agents.loading")} />
      ) : shown.length === 0 ? (
        <p className="empty">{query ? t("agents.noMatch") : t("agents.empty")}</p>
      ) : (
        <ListTable>
          <thead>
            <tr>
              <th scope="col">{t("agents.columns.name")}</th>
              <th scope="col">{t("agents.columns.slug")}</th>
              <th scope="col" className="wide-only">
                {t("agents.columns.description")}
              </th>
              <th scope="col" className="wide-only">
                {t("agents.columns.sharing")}
              </th>
              <th scope="col">
                <span className="visually-hidden">{t("agents.columns.actions")}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {shown.map((agent) => (
              <AgentRow key={agent.id} agent={agent} onDelete={setDeleting} onInspect={setInspecting} />
            ))}
          </tbody>
        </ListTable>
      )}
      {deleting && (
        <ConfirmDeleteDialog
          title={t("agents.deleteTitle", { name: deleting.name })}
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await unwrap(api.DELETE("/api/agent/{id}", { params: { path: { id: deleting.id } } }));
            setDeleting(null);
            agents.reload();
          }}
        >
          <p>
            <Trans
              i18nKey="agents.deleteBody"
              values={{ slug: deleting.slug }}
              components={{ code: <code /> }}
            />
          </p>
        </ConfirmDeleteDialog>
      )}
      {inspecting && <ResolvedContextDialog agent={inspecting} onClose={() => setInspecting(null)} />}
    </main>
  );
}

function AgentRow({
  agent,
  onDelete,
  onInspect,
}: {
  agent: Agent;
  onDelete: (agent: Agent) => void;
  onInspect: (agent: Agent) => void;
}) {
  const { t } = useTranslation();
  const visibility = agent.share_config.visibility ?? "private";
  return (
    <tr data-testid={`agent-row-${agent.slug}`}>
      <td>
        <span className="agent-name">{agentName(agent)}</span>{" "}
        {agent.is_subagent && (
          <span className="badge" data-testid="subagent-badge">
            {t("agents.badge.subagent")}
          </span>
        )}
        {agent.is_default && <span className="badge accent">{t("agents.badge.default")}</span>}
        {agent.is_builtin && <span className="badge muted">{t("agents.badge.builtin")}</span>}
      </td>
      <td>
        <code>{agent.slug}</code>
      </td>
      <td className="wide-only description">{agentDescription(agent)}</td>
      <td className="wide-only">{t(`agents.visibility.${visibility}`)}</td>
      <td>
        <div className="row-actions">
          <button type="button" data-testid={`agent-resolved-${agent.slug}`} onClick={() => onInspect(agent)}>
            {t("agents.context")}
          </button>
          <Link className="button" to={`/agents/${agent.id}`} data-testid={`agent-edit-${agent.slug}`}>
            {t("common.edit")}
          </Link>
          {!agent.is_builtin && (
            <button
              type="button"
              className="danger"
              data-testid={`agent-delete-${agent.slug}`}
              onClick={() => onDelete(agent)}
            >
              {t("common.delete")}
            </button>
          )}
        </div>
      </td>
    </tr>
  );
}
