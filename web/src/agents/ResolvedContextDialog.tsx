import { api, errorMessage, unwrap } from "../api";
import type { OfferedSkill } from "../api/skills";
import type { Agent, ResolvedContext } from "../api/types";
import { Dialog } from "../components/Dialog";
import { useAsync } from "../lib/useAsync";

const LAYER_NAMES: Record<string, string> = {
  agent: "agent",
  subagent_defaults: "subagent defaults",
  base: "server default",
  unset: "unset",
};

function SourceBadge({ layer }: { layer: string | undefined }) {
  if (!layer) return null;
  return <span className="badge muted">from {LAYER_NAMES[layer] ?? layer}</span>;
}

const SOURCE_NAMES: Record<string, string> = {
  builtin: "built-in",
  shared: "shared",
  personal: "personal",
};

function list(values: readonly string[]): string {
  return values.length ? values.join(", ") : "none";
}

function rows(context: ResolvedContext): Array<[string, string, string]> {
  const { model, limits } = context;
  return [
    [
      "model",
      "Model",
      model ? `${model.provider}/${model.name}` : "none: cannot run until one is configured",
    ],
    ["system_prompt", "System prompt", context.system_prompt],
    ["tools", "Tools", list(context.tools)],
    ["knowledge_bases", "Knowledge bases", list(context.knowledge_bases)],
    ["mcp_servers", "MCP servers", list(context.mcp_servers)],
    ["skills", "Skills", list(context.skills)],
    ["subagents", "Subagents", context.subagents.length ? context.subagents.join(", ") : "all visible"],
    [
      "limits",
      "Limits",
      `${limits.max_steps} steps, ${limits.timeout_s} s${limits.max_tokens ? `, ${limits.max_tokens} tokens` : ""}`,
    ],
    ["network", "Network", context.network ? "allowed" : "blocked"],
  ];
}

/** What an agent actually runs with, field by field, and which layer each value comes from. */
export function ResolvedContextDialog({ agent, onClose }: { agent: Agent; onClose: () => void }) {
  const resolved = useAsync(
    () => unwrap(api.GET("/api/agent/{id}/resolved-context", { params: { path: { id: agent.id } } })),
    agent.id,
  );
  return (
    <Dialog
      title={`Resolved context: ${agent.name}`}
      onClose={onClose}
      testId="resolved-context"
      wide
      actions={
        <button type="button" onClick={onClose}>
          Close
        </button>
      }
    >
      {resolved.error != null && (
        <p className="error" role="alert">
          {errorMessage(resolved.error)}
        </p>
      )}
      {!resolved.data && resolved.loading && <p className="loading">Loading…</p>}
      {resolved.data && (
        <dl className="resolved">
          {rows(resolved.data).map(([key, label, value]) => (
            <div key={key}>
              <dt>
                {label} <SourceBadge layer={resolved.data?.sources[key]} />
              </dt>
              <dd className={key === "system_prompt" ? "pre" : undefined}>{value}</dd>
            </div>
          ))}
        </dl>
      )}
      {resolved.data && <OfferedSkills skills={resolved.data.offered_skills} />}
    </Dialog>
  );
}

/** The skills a run of the agent lists in its prompt, after name clashes are resolved. */
function OfferedSkills({ skills }: { skills: OfferedSkill[] }) {
  return (
    <section className="offered-skills" data-testid="offered-skills">
      <h3>Skills a run is offered</h3>
      {skills.length === 0 ? (
        <p className="muted">None.</p>
      ) : (
        <ul>
          {skills.map((skill) => (
            <li key={skill.name} data-testid={`offered-skill-${skill.name}`} title={skill.path}>
              <code>{skill.name}</code>{" "}
              <span className="badge muted">{SOURCE_NAMES[skill.source] ?? skill.source}</span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
