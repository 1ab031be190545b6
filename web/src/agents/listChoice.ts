/**
 * The agent form's list fields (tools, knowledge bases, MCP servers, skills, subagents) as an
 * explicit choice, apart from React: which states the server tells apart for each field, the
 * value each state stores in `config_json.context`, and what the choice resolves to.
 *
 * What the server does (`ContextDefaults::resolve` and the plug-ins): a missing list inherits
 * the defaults, `[]` is none, a list is exactly those; only `skills` has `["*"]` for every skill
 * the user can see; `subagents` never inherits, and missing or `[]` means every visible subagent.
 */

import type { TFunction } from "i18next";
import type { ResolvedContext } from "../api/types";

export type ListMode = "inherit" | "all" | "none" | "some";

export interface ListSpec {
  /** The states the server tells apart, in the order the form offers them. */
  modes: readonly ListMode[];
  /** What "All" stores: `["*"]` (skills), or `null` (subagents: missing means all). */
  allValue?: readonly string[] | null;
}

export const ALL = "*";

const INHERIT_NONE_SOME: ListSpec = { modes: ["inherit", "none", "some"] };

export const LIST_SPECS = {
  tools: INHERIT_NONE_SOME,
  knowledgeBases: INHERIT_NONE_SOME,
  mcpServers: INHERIT_NONE_SOME,
  skills: { modes: ["inherit", "all", "none", "some"], allValue: [ALL] },
  subagents: { modes: ["all", "some"], allValue: null },
} as const satisfies Record<string, ListSpec>;

/**
 * The state a stored value is in. `picked` is the state the user last chose in the field, so
 * "Only these" with nothing ticked yet stays "Only these" (it stores what "None" stores).
 */
export function modeOf(
  spec: ListSpec,
  value: readonly string[] | null,
  picked: ListMode | null = null,
): ListMode {
  if (value === null) return spec.modes.includes("inherit") ? "inherit" : "all";
  if (spec.allValue && spec.allValue.length > 0 && value.includes(ALL)) return "all";
  if (value.length === 0 && spec.modes.includes("none") && picked !== "some") return "none";
  return "some";
}

/** The value choosing `mode` stores; "Only these" keeps the names already listed. */
export function valueForMode(
  spec: ListSpec,
  mode: ListMode,
  current: readonly string[] | null,
): string[] | null {
  switch (mode) {
    case "inherit":
      return null;
    case "all":
      return spec.allValue ? [...spec.allValue] : null;
    case "none":
      return [];
    case "some":
      return (current ?? []).filter((name) => name !== ALL);
  }
}

/** The names a choice resolves to, or `null` when the inherited default is not known here. */
export function resolveList(
  mode: ListMode,
  value: readonly string[] | null,
  context: { inherited: readonly string[] | undefined; all: readonly string[] },
): string[] | null {
  switch (mode) {
    case "inherit": {
      const { inherited } = context;
      if (inherited === undefined) return null;
      return inherited.includes(ALL) ? [...context.all] : [...inherited];
    }
    case "all":
      return [...context.all];
    case "none":
      return [];
    case "some":
      return (value ?? []).filter((name) => name !== ALL);
  }
}

/** "Resolves to: a, b (2)", "Resolves to: nothing", or that the default could not be read. */
export function resolvedText(names: readonly string[] | null, t: TFunction): string {
  if (names === null) return t("listChoice.resolvesToUnknown");
  if (names.length === 0) return t("listChoice.resolvesToNothing");
  return t("listChoice.resolvesTo", { names: names.join(", "), count: names.length });
}

/** A short form of the names for the "Inherit" label: the first three, then the count. */
export function shortList(names: readonly string[], t: TFunction): string {
  if (names.length === 0) return t("listChoice.nothing");
  if (names.length <= 3) return names.join(", ");
  return t("listChoice.more", { names: names.slice(0, 3).join(", "), count: names.length });
}

/** The inheritable list fields, as `config_json.context` names them. */
export const INHERITABLE = ["tools", "knowledge_bases", "mcp_servers", "skills"] as const;
export type InheritableField = (typeof INHERITABLE)[number];

/** What each list field inherits: for a normal agent (`base`) and for a subagent. */
export interface InheritedDefaults {
  base: Partial<Record<InheritableField, string[]>>;
  subagent: Partial<Record<InheritableField, string[]>>;
}

/**
 * The defaults, read from resolved contexts: the built-in `general-purpose` subagent's (its own
 * context is empty, so each field shows a default) and the edited agent's, when it has one. A
 * field from `BaseContext` is both defaults unless the subagent layer sets it; a field from
 * `SubAgentContext` tells only the subagent default.
 */
export function inheritedDefaults(
  resolved: ReadonlyArray<{ context: ResolvedContext; subagent: boolean } | null>,
): InheritedDefaults {
  const out: InheritedDefaults = { base: {}, subagent: {} };
  for (const one of resolved) {
    if (!one) continue;
    for (const field of INHERITABLE) {
      const layer = one.context.sources[field];
      const value = one.context[field];
      if (layer === "base" || layer === "unset") {
        out.base[field] ??= [...value];
        if (one.subagent) out.subagent[field] ??= [...value];
      } else if (layer === "subagent_defaults") {
        out.subagent[field] ??= [...value];
      }
    }
  }
  return out;
}
