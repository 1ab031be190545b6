import { describe, expect, test } from "vitest";
import i18n from "../i18n";
import type { ResolvedContext } from "../api/types";
import { buildWrite, emptyForm, type AgentFormState } from "./formModel";
import {
  inheritedDefaults,
  LIST_SPECS,
  modeOf,
  resolveList,
  resolvedText,
  shortList,
  valueForMode,
  type ListMode,
} from "./listChoice";

const TOOLS = ["ls", "read_file", "write_file", "edit_file", "glob", "grep", "execute"];

/** The `config_json.context` a form with `patch` sends. */
function context(patch: Partial<AgentFormState>) {
  const built = buildWrite({ ...emptyForm(), name: "A", slug: "a", ...patch }, null, null);
  if (!built.ok) throw new Error(JSON.stringify(built.errors));
  return built.write.config_json?.context ?? {};
}

describe("each state of a list field stores what the server expects", () => {
  const cases: Array<[keyof typeof LIST_SPECS, keyof AgentFormState, string, ListMode, unknown]> = [
    ["tools", "tools", "tools", "inherit", undefined],
    ["tools", "tools", "tools", "none", []],
    ["knowledgeBases", "knowledgeBases", "knowledge_bases", "inherit", undefined],
    ["knowledgeBases", "knowledgeBases", "knowledge_bases", "none", []],
    ["mcpServers", "mcpServers", "mcp_servers", "inherit", undefined],
    ["mcpServers", "mcpServers", "mcp_servers", "none", []],
    ["skills", "skills", "skills", "inherit", undefined],
    ["skills", "skills", "skills", "all", ["*"]],
    ["skills", "skills", "skills", "none", []],
    ["subagents", "subagents", "subagents", "all", undefined],
  ];
  for (const [spec, formKey, key, mode, expected] of cases) {
    test(`${key}: ${mode} → ${JSON.stringify(expected) ?? "no list"}, and back`, () => {
      const value = valueForMode(LIST_SPECS[spec], mode, ["kept"]);
      const sent = context({ [formKey]: value } as Partial<AgentFormState>) as Record<string, unknown>;
      if (expected === undefined) expect(sent).not.toHaveProperty(key);
      else expect(sent[key]).toEqual(expected);
      expect(modeOf(LIST_SPECS[spec], value)).toBe(mode);
    });
  }

  test("Only these keeps the names listed and sends exactly them", () => {
    for (const [spec, formKey, key] of [
      ["tools", "tools", "tools"],
      ["knowledgeBases", "knowledgeBases", "knowledge_bases"],
      ["mcpServers", "mcpServers", "mcp_servers"],
      ["skills", "skills", "skills"],
      ["subagents", "subagents", "subagents"],
    ] as const) {
      const value = valueForMode(LIST_SPECS[spec], "some", ["a", "*", "b"]);
      expect(value).toEqual(["a", "b"]);
      expect((context({ [formKey]: value }) as Record<string, unknown>)[key]).toEqual(["a", "b"]);
      expect(modeOf(LIST_SPECS[spec], value)).toBe("some");
    }
  });

  test("the states offered are the ones the server tells apart", () => {
    expect(LIST_SPECS.tools.modes).toEqual(["inherit", "none", "some"]);
    expect(LIST_SPECS.knowledgeBases.modes).toEqual(["inherit", "none", "some"]);
    expect(LIST_SPECS.mcpServers.modes).toEqual(["inherit", "none", "some"]);
    expect(LIST_SPECS.skills.modes).toEqual(["inherit", "all", "none", "some"]);
    expect(LIST_SPECS.subagents.modes).toEqual(["all", "some"]);
  });

  test("an empty list is None, unless the user just chose Only these; for subagents it is Only these", () => {
    expect(modeOf(LIST_SPECS.tools, [])).toBe("none");
    expect(modeOf(LIST_SPECS.tools, [], "some")).toBe("some");
    expect(modeOf(LIST_SPECS.skills, ["*"], "some")).toBe("all");
    expect(modeOf(LIST_SPECS.subagents, [])).toBe("some");
    expect(modeOf(LIST_SPECS.subagents, null)).toBe("all");
  });
});

describe("what a choice resolves to", () => {
  const all = ["csv-data", "e2e-notes"];

  test("Inherit resolves to the default, a * default to everything visible, unknown to null", () => {
    expect(resolveList("inherit", null, { inherited: TOOLS, all: TOOLS })).toEqual(TOOLS);
    expect(resolveList("inherit", null, { inherited: ["*"], all })).toEqual(all);
    expect(resolveList("inherit", null, { inherited: [], all })).toEqual([]);
    expect(resolveList("inherit", null, { inherited: undefined, all })).toBeNull();
  });

  test("All, None and Only these", () => {
    expect(resolveList("all", ["*"], { inherited: undefined, all })).toEqual(all);
    expect(resolveList("none", [], { inherited: ["*"], all })).toEqual([]);
    expect(resolveList("some", ["e2e-notes"], { inherited: ["*"], all })).toEqual(["e2e-notes"]);
  });

  test("the resolved text names each and counts them, in English and 简体中文", async () => {
    await i18n.changeLanguage("en");
    expect(resolvedText(TOOLS, i18n.t)).toBe(
      "Resolves to: ls, read_file, write_file, edit_file, glob, grep, execute (7)",
    );
    expect(resolvedText([], i18n.t)).toBe("Resolves to: nothing");
    expect(resolvedText(null, i18n.t)).toMatch(/could not read/);
    expect(shortList(TOOLS, i18n.t)).toBe("ls, read_file, write_file, … (7 in all)");
    expect(shortList(["a"], i18n.t)).toBe("a");
    await i18n.changeLanguage("zh-CN");
    expect(resolvedText(["handbook"], i18n.t)).toBe("实际生效：handbook（1 项）");
    expect(resolvedText([], i18n.t)).toBe("实际生效：无");
    await i18n.changeLanguage("en");
  });
});

describe("the inherited defaults, from resolved contexts", () => {
  const resolved = (sources: Record<string, string>, values: Partial<ResolvedContext>) =>
    ({ tools: [], knowledge_bases: [], mcp_servers: [], skills: [], sources, ...values }) as ResolvedContext;

  test("a base field is both defaults; a subagent-layer field only the subagent's", () => {
    const general = resolved(
      { tools: "subagent_defaults", knowledge_bases: "base", mcp_servers: "unset", skills: "base" },
      { tools: ["ls"], knowledge_bases: [], skills: ["*"] },
    );
    const own = resolved(
      { tools: "base", knowledge_bases: "agent", mcp_servers: "base", skills: "agent" },
      { tools: TOOLS, knowledge_bases: ["mine"], skills: [] },
    );
    const defaults = inheritedDefaults([
      { context: general, subagent: true },
      { context: own, subagent: false },
    ]);
    expect(defaults.base).toEqual({ tools: TOOLS, knowledge_bases: [], mcp_servers: [], skills: ["*"] });
    expect(defaults.subagent).toEqual({ tools: ["ls"], knowledge_bases: [], mcp_servers: [], skills: ["*"] });
  });

  test("nothing read: nothing known", () => {
    expect(inheritedDefaults([null, null])).toEqual({ base: {}, subagent: {} });
  });
});
