import { useState } from "react";
import { Link } from "react-router-dom";
import { api, errorMessage, unwrap } from "../api";
import { listAllAgents } from "../api/agents";
import type { Agent } from "../api/types";
import { ConfirmDeleteDialog } from "../components/ConfirmDeleteDialog";
import { useAsync } from "../lib/useAsync";
import { ResolvedContextDialog } from "./ResolvedContextDialog";

function matches(agent: Agent, query: string): boolean {
  const q = query.trim().toLowerCase();
  return !q || [agent.name, agent.slug, agent.description].some((text) => text.toLowerCase().includes(q));
}

/** `/agents`: every agent the user can see, subagents marked. */
export function AgentsPage() {
  const agents = useAsync(listAllAgents, "agents");
  const [query, setQuery] = useState("");
  const [deleting, setDeleting] = useState<Agent | null>(null);
  const [inspecting, setInspecting] = useState<Agent | null>(null);

  const shown = (agents.data ?? []).filter((a) => matches(a, query));
  return (
    <main className="page">
      <div className="page-head">
        <h1>Agents</h1>
        <input
          type="search"
          aria-label="Search agents"
          placeholder="Search by name, slug or description"
          data-testid="agent-search"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
        <Link className="button primary" to="/agents/new" data-testid="agent-new">
          New agent
        </Link>
      </div>
      {agents.error != null && (
        <p className="error" role="alert">
          {errorMessage(agents.error)}
        </p>
      )}
      {agents.loading && !agents.data ? (
        <p className="loading">Loading agents…</p>
      ) : shown.length === 0 ? (
        <p className="empty">{query ? "No agent matches the search." : "No agents yet. Create one."}</p>
      ) : (
        <div className="table-wrap">
          <table className="agents">
            <thead>
              <tr>
                <th scope="col">Name</th>
                <th scope="col">Slug</th>
                <th scope="col" className="wide-only">
                  Description
                </th>
                <th scope="col" className="wide-only">
                  Sharing
                </th>
                <th scope="col">
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {shown.map((agent) => (
                <AgentRow key={agent.id} agent={agent} onDelete={setDeleting} onInspect={setInspecting} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      {deleting && (
        <ConfirmDeleteDialog
          title={`Delete ${deleting.name}?`}
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await unwrap(api.DELETE("/api/agent/{id}", { params: { path: { id: deleting.id } } }));
            setDeleting(null);
            agents.reload();
          }}
        >
          <p>
            The agent <code>{deleting.slug}</code> will be deleted. This cannot be undone.
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
  return (
    <tr data-testid={`agent-row-${agent.slug}`}>
      <td>
        <span className="agent-name">{agent.name}</span>{" "}
        {agent.is_subagent && (
          <span className="badge" data-testid="subagent-badge">
            subagent
          </span>
        )}
        {agent.is_default && <span className="badge accent">default</span>}
        {agent.is_builtin && <span className="badge muted">built-in</span>}
      </td>
      <td>
        <code>{agent.slug}</code>
      </td>
      <td className="wide-only description">{agent.description}</td>
      <td className="wide-only">{agent.share_config.visibility ?? "private"}</td>
      <td>
        <div className="row-actions">
          <button type="button" data-testid={`agent-resolved-${agent.slug}`} onClick={() => onInspect(agent)}>
            Context
          </button>
          <Link className="button" to={`/agents/${agent.id}`} data-testid={`agent-edit-${agent.slug}`}>
            Edit
          </Link>
          {!agent.is_builtin && (
            <button
              type="button"
              className="danger"
              data-testid={`agent-delete-${agent.slug}`}
              onClick={() => onDelete(agent)}
            >
              Delete
            </button>
          )}
        </div>
      </td>
    </tr>
  );
}
