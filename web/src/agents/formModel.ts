/**
 * The agent form's rules, apart from React: what a stored agent looks like in the form, which
 * fields a backend type shows, the `AgentWrite` a filled form sends, and where a server error
 * about a payload path is shown.
 *
 * List fields distinguish "not set" (`null`: the agent inherits the server default) from an
 * explicit list, even an empty one; the subagent allow-list has no default: `null` is every
 * visible subagent (sent as no list, as the server reads both a missing and an empty list),
 * and `[]` is "Only these" with none ticked yet, which cannot be saved.
 */

import { ApiError, errorMessage } from "../api/errors";
import i18n from "../i18n";
import type { Agent, AgentContext, AgentWrite, ModelCatalog } from "../api/types";
import { isPublic, withPublic } from "../lib/sharing";

/** The backend select's values (`normal` stands for `DefaultBackend`). */
export type BackendChoice = "normal" | "SubAgentBackend";

/** The form's fields, named as their `field-<name>` / `error-<name>` test ids are. */
export type FormField =
  | "name"
  | "slug"
  | "description"
  | "backend"
  | "share-config"
  | "default"
  | "system-prompt"
  | "model"
  | "script"
  | "tools"
  | "knowledge-bases"
  | "mcp-servers"
  | "skills"
  | "subagents"
  | "max-steps"
  | "timeout"
  | "max-tokens";

export type FieldErrors = Partial<Record<FormField, string>>;

export interface AgentFormState {
  name: string;
  slug: string;
  description: string;
  backend: BackendChoice;
  /** Public to every user (`share_config.visibility`). */
  shared: boolean;
  isDefault: boolean;
  /** Empty: inherit the default system prompt. */
  systemPrompt: string;
  /** `provider/name`, or empty to inherit the server's default model. */
  model: string;
  tools: string[] | null;
  knowledgeBases: string[] | null;
  mcpServers: string[] | null;
  skills: string[] | null;
  /** `null`: every visible subagent; a list: only those (at least one). */
  subagents: string[] | null;
  maxSteps: string;
  timeout: string;
  maxTokens: string;
  /** The scripted model's script, as JSON text. */
  script: string;
}

/** The form field each state key is edited through, to clear its error once it changes. */
export const FIELD_OF: Readonly<Record<keyof AgentFormState, FormField>> = {
  name: "name",
  slug: "slug",
  description: "description",
  backend: "backend",
  shared: "share-config",
  isDefault: "default",
  systemPrompt: "system-prompt",
  model: "model",
  tools: "tools",
  knowledgeBases: "knowledge-bases",
  mcpServers: "mcp-servers",
  skills: "skills",
  subagents: "subagents",
  maxSteps: "max-steps",
  timeout: "timeout",
  maxTokens: "max-tokens",
  script: "script",
};

/** `errors` without those of the fields `patch` changes. */
export function clearEdited(errors: FieldErrors, patch: Partial<AgentFormState>): FieldErrors {
  const next = { ...errors };
  for (const key of Object.keys(patch) as Array<keyof AgentFormState>) delete next[FIELD_OF[key]];
  return next;
}

export function emptyForm(): AgentFormState {
  return {
    name: "",
    slug: "",
    description: "",
    backend: "normal",
    shared: false,
    isDefault: false,
    systemPrompt: "",
    model: "",
    tools: null,
    knowledgeBases: null,
    mcpServers: null,
    skills: null,
    subagents: null,
    maxSteps: "",
    timeout: "",
    maxTokens: "",
    script: "",
  };
}

export function modelValue(provider: string, name: string): string {
  return `${provider}/${name}`;
}

/** Splits a `provider/name` value at its first slash (model names may hold more). */
export function parseModelValue(value: string): { provider: string; name: string } | null {
  const slash = value.indexOf("/");
  if (slash <= 0) return null;
  return { provider: value.slice(0, slash), name: value.slice(slash + 1) };
}

const numberText = (value: number | null | undefined) => (value == null ? "" : String(value));

export function formFromAgent(agent: Agent): AgentFormState {
  const context = agent.config_json.context ?? {};
  const model = context.model;
  return {
    name: agent.name,
    slug: agent.slug,
    description: agent.description,
    backend: agent.backend_id === "SubAgentBackend" ? "SubAgentBackend" : "normal",
    shared: isPublic(agent.share_config),
    isDefault: agent.is_default,
    systemPrompt: context.system_prompt ?? "",
    model: model ? modelValue(model.provider, model.name) : "",
    tools: context.tools ?? null,
    knowledgeBases: context.knowledge_bases ?? null,
    mcpServers: context.mcp_servers ?? null,
    skills: context.skills ?? null,
    // Missing and empty both mean every visible subagent.
    subagents: context.subagents?.length ? context.subagents : null,
    maxSteps: numberText(context.limits?.max_steps),
    timeout: numberText(context.limits?.timeout_s),
    maxTokens: numberText(context.limits?.max_tokens),
    script: model?.script == null ? "" : JSON.stringify(model.script, null, 2),
  };
}

/** Which backend-dependent fields the form shows. */
export function visibleFields(backend: BackendChoice): { subagents: boolean; isDefault: boolean } {
  const normal = backend === "normal";
  return { subagents: normal, isDefault: normal };
}

/** The kind (`scripted`, `openai-compatible`) of the provider a model value names. */
export function providerKind(catalog: ModelCatalog | null, model: string): string | null {
  const parsed = parseModelValue(model);
  if (!parsed || !catalog) return null;
  return catalog.providers.find((p) => p.name === parsed.provider)?.kind ?? null;
}

/** Whether the form shows the script field: the chosen model's provider plays scripts. */
export function showsScript(catalog: ModelCatalog | null, model: string): boolean {
  return providerKind(catalog, model) === "scripted";
}

function positiveInt(text: string): number | null | "invalid" {
  const trimmed = text.trim();
  if (!trimmed) return null;
  if (!/^\d+$/.test(trimmed)) return "invalid";
  const value = Number(trimmed);
  return Number.isSafeInteger(value) && value > 0 ? value : "invalid";
}

export type BuildResult = { ok: true; write: AgentWrite } | { ok: false; errors: FieldErrors };

/**
 * The request body for `form`. `original` is the stored agent when editing: fields the form
 * does not show (model temperature, network, sharing lists) are kept from it.
 */
export function buildWrite(
  form: AgentFormState,
  original: Agent | null,
  catalog: ModelCatalog | null,
): BuildResult {
  const errors: FieldErrors = {};
  const fields = visibleFields(form.backend);
  const stored: AgentContext = original?.config_json.context ?? {};
  const context: AgentContext = { ...stored };

  const setOrDrop = <K extends keyof AgentContext>(key: K, value: AgentContext[K] | null | undefined) => {
    if (value == null) delete context[key];
    else context[key] = value;
  };

  setOrDrop("system_prompt", form.systemPrompt.trim() ? form.systemPrompt : null);
  setOrDrop("tools", form.tools);
  setOrDrop("knowledge_bases", form.knowledgeBases);
  setOrDrop("mcp_servers", form.mcpServers);
  setOrDrop("skills", form.skills);
  setOrDrop("subagents", fields.subagents ? form.subagents : null);
  if (fields.subagents && form.subagents?.length === 0) {
    errors.subagents = i18n.t("listChoice.subagentsPickOne");
  }

  const parsedModel = parseModelValue(form.model);
  if (!parsedModel) {
    delete context.model;
  } else {
    const keep = stored.model && stored.model.provider === parsedModel.provider ? stored.model : {};
    const model: NonNullable<AgentContext["model"]> = { ...keep, ...parsedModel };
    delete model.script;
    if (showsScript(catalog, form.model) && form.script.trim()) {
      try {
        model.script = JSON.parse(form.script) as unknown as typeof model.script;
      } catch (cause) {
        errors.script = i18n.t("agentForm.scriptInvalid", {
          message: cause instanceof Error ? cause.message : String(cause),
        });
      }
    }
    context.model = model;
  }

  const limits = { ...(stored.limits ?? {}) };
  for (const [field, key, text] of [
    ["max-steps", "max_steps", form.maxSteps],
    ["timeout", "timeout_s", form.timeout],
    ["max-tokens", "max_tokens", form.maxTokens],
  ] as const) {
    const value = positiveInt(text);
    if (value === "invalid") errors[field] = i18n.t("agentForm.wholeNumber");
    else if (value === null) delete limits[key];
    else limits[key] = value;
  }
  setOrDrop("limits", Object.keys(limits).length > 0 ? limits : null);

  if (Object.keys(errors).length > 0) return { ok: false, errors };

  const write: AgentWrite = {
    slug: form.slug.trim(),
    name: form.name,
    description: form.description,
    backend_id: form.backend === "normal" ? "DefaultBackend" : "SubAgentBackend",
    config_json: { context },
    share_config: withPublic(form.shared, original?.share_config),
  };
  if (!fields.isDefault) {
    // A subagent is never the default; saying so also lets a default agent become a subagent.
    write.is_default = false;
  } else if (form.isDefault !== (original?.is_default ?? false)) {
    write.is_default = form.isDefault;
  }
  return { ok: true, write };
}

const CONTEXT = "config_json.context.";

const CONTEXT_FIELDS: ReadonlyArray<readonly [string, FormField]> = [
  ["model.script", "script"],
  ["model", "model"],
  ["system_prompt", "system-prompt"],
  ["tools", "tools"],
  ["knowledge_bases", "knowledge-bases"],
  ["mcp_servers", "mcp-servers"],
  ["skills", "skills"],
  ["subagents", "subagents"],
  ["limits.max_steps", "max-steps"],
  ["limits.timeout_s", "timeout"],
  ["limits.max_tokens", "max-tokens"],
];

const TOP_FIELDS: Readonly<Record<string, FormField>> = {
  slug: "slug",
  name: "name",
  description: "description",
  backend_id: "backend",
  is_subagent: "backend",
  is_default: "default",
  share_config: "share-config",
};

const within = (path: string, prefix: string) =>
  path === prefix || path.startsWith(`${prefix}.`) || path.startsWith(`${prefix}[`);

/** The form field a server error's payload path (`field`) is about, if the form shows one. */
export function fieldForPath(path: string): FormField | null {
  if (path.startsWith(CONTEXT)) {
    const rest = path.slice(CONTEXT.length);
    return CONTEXT_FIELDS.find(([prefix]) => within(rest, prefix))?.[1] ?? null;
  }
  const top = Object.keys(TOP_FIELDS).find((prefix) => within(path, prefix));
  return top ? TOP_FIELDS[top]! : null;
}

/** A failed save as the form shows it: at its field when it names one, and as a summary. */
export function errorsFromFailure(failure: unknown): { fields: FieldErrors; form: string } {
  if (!(failure instanceof ApiError)) {
    return { fields: {}, form: failure instanceof Error ? failure.message : String(failure) };
  }
  const field = failure.field ? fieldForPath(failure.field) : null;
  const message = errorMessage(failure);
  return {
    fields: field ? { [field]: message } : {},
    form: field
      ? i18n.t("agentForm.saveFailedAt", { field: i18n.t(`agentForm.fields.${field}`), message })
      : i18n.t("agentForm.saveFailed", { message }),
  };
}
