import type { TFunction } from "i18next";
import { useTranslation } from "react-i18next";
import { api, unwrap } from "../api";
import type { OfferedSkill } from "../api/skills";
import type { Agent, ResolvedContext } from "../api/types";
import { Dialog } from "../components/Dialog";
import { ErrorNote, Loading } from "../components/LoadState";
import { agentName } from "../lib/builtinText";
import { useAsync } from "../lib/useAsync";

const LAYERS = ["agent", "subagent_defaults", "base", "unset"] as const;
type Layer = (typeof LAYERS)[number];
const isLayer = (layer: string): layer is Layer => (LAYERS as readonly string[]).includes(layer);

function SourceBadge({ layer }: { layer: string | undefined }) {
  const { t } = useTranslation();
  if (!layer) return null;
  const name = isLayer(layer) ? t(`resolved.layers.${layer}`) : layer;
  return <span className="badge muted">{t("resolved.from", { layer: name })}</span>;
}

const SOURCES = ["builtin", "shared", "personal"] as const;
type Source = (typeof SOURCES)[number];
const isSource = (source: string): source is Source => (SOURCES as readonly string[]).includes(source);

type RowKey = keyof ReturnType<typeof rowLabels>;
const rowLabels = (t: TFunction) => ({
  model: t("resolved.rows.model"),
  system_prompt: t("resolved.rows.system_prompt"),
  tools: t("resolved.rows.tools"),
  knowledge_bases: t("resolved.rows.knowledge_bases"),
  mcp_servers: t("resolved.rows.mcp_servers"),
  skills: t("resolved.rows.skills"),
  subagents: t("resolved.rows.subagents"),
  limits: t("resolved.rows.limits"),
  network: t("resolved.rows.network"),
  approvals: t("resolved.rows.approvals"),
});

function rows(context: ResolvedContext, t: TFunction): Array<[RowKey, string, string]> {
  const { model, limits } = context;
  const labels = rowLabels(t);
  const list = (values: readonly string[]) => (values.length ? values.join(", ") : t("common.none"));
  const limitsText =
    t("resolved.limitsValue", { steps: limits.max_steps, seconds: limits.timeout_s }) +
    (limits.max_tokens ? t("resolved.limitsTokens", { tokens: limits.max_tokens }) : "");
  const values: Record<RowKey, string> = {
    model: model ? `${model.provider}/${model.name}` : t("resolved.noModel"),
    system_prompt: context.system_prompt,
    tools: list(context.tools),
    knowledge_bases: list(context.knowledge_bases),
    mcp_servers: list(context.mcp_servers),
    skills: list(context.skills),
    subagents: context.subagents.length ? context.subagents.join(", ") : t("resolved.allVisible"),
    limits: limitsText,
    network: context.network ? t("resolved.networkAllowed") : t("resolved.networkBlocked"),
    approvals: Object.keys(context.approvals).length
      ? Object.entries(context.approvals)
          .map(([rule, approval]) => `${rule}: ${t(`resolved.approvalValue.${approval}`)}`)
          .join(", ")
      : t("resolved.approvalsNone"),
  };
  return (Object.keys(labels) as RowKey[]).map((key) => [key, labels[key], values[key]]);
}

/** What an agent actually runs with, field by field, and which layer each value comes from. */
export function ResolvedContextDialog({ agent, onClose }: { agent: Agent; onClose: () => void }) {
  const resolved = useAsync(
    () => unwrap(api.GET("/api/agent/{id}/resolved-context", { params: { path: { id: agent.id } } })),
    agent.id,
  );
  const { t } = useTranslation();
  return (
    <Dialog
      title={t("resolved.title", { name: agentName(agent) })}
      onClose={onClose}
      testId="resolved-context"
      wide
      actions={
        <button type="button" onClick={onClose}>
          {t("common.close")}
        </button>
      }
    >
      <ErrorNote error={resolved.error} />
      {!resolved.data && resolved.loading && <Loading />}
      {resolved.data && (
        <dl className="resolved">
          {rows(resolved.data, t).map(([key, label, value]) => (
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
  const { t } = useTranslation();
  return (
    <section className="offered-skills" data-testid="offered-skills">
      <h3>{t("resolved.offeredSkills")}</h3>
      {skills.length === 0 ? (
        <p className="muted">{t("common.noneSentence")}</p>
      ) : (
        <ul>
          {skills.map((skill) => (
            <li key={skill.name} data-testid={`offered-skill-${skill.name}`} title={skill.path}>
              <code>{skill.name}</code>{" "}
              <span className="badge muted">
                {isSource(skill.source) ? t(`skills.sourceLower.${skill.source}`) : skill.source}
              </span>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
