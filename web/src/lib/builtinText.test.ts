import { afterEach, describe, expect, test } from "vitest";
import i18n from "../i18n";
import { agentDescription, agentName, skillDescription, toolDescription } from "./builtinText";

const LS =
  "List a directory. Paths are relative to the workdir or absolute under /home/gem/user-data or /home/gem/skills.";
const generalPurpose = {
  slug: "general-purpose",
  name: "General purpose",
  description:
    "Built-in subagent for general tasks: analysis, research, writing and file work, using the server's default runtime config.",
  is_builtin: true,
  is_subagent: true,
};
const assistant = {
  slug: "assistant",
  name: "Assistant",
  description: "A general assistant on the server's default model.",
  is_builtin: false,
  is_subagent: false,
};
const CSV =
  "Inspect, summarise, filter, join and convert tabular data files (CSV, TSV, JSON, JSON Lines) in the sandbox shell, including files with a UTF-8 BOM, Chinese or other non-ASCII text, or unknown delimiters. Use when the user gives you a data file to explore, asks for counts, statistics, subsets or merges of tables, or wants results written as CSV or JSON.";

afterEach(async () => {
  await i18n.changeLanguage("en");
});

describe("built-in content in the UI's language", () => {
  test("English shows the server's text as it is", async () => {
    await i18n.changeLanguage("en");
    expect(toolDescription("ls", LS)).toBe(LS);
    expect(agentName(generalPurpose)).toBe("General purpose");
    expect(agentDescription(generalPurpose)).toBe(generalPurpose.description);
    expect(skillDescription({ name: "csv-data", source: "builtin", description: CSV })).toBe(CSV);
  });

  test("简体中文 shows the built-in tools, subagent, skills and Assistant translated", async () => {
    await i18n.changeLanguage("zh-CN");
    expect(toolDescription("ls", LS)).toMatch(/^列出目录/);
    expect(agentName(generalPurpose)).toBe("通用");
    expect(agentDescription(generalPurpose)).toMatch(/^内置的通用子智能体/);
    expect(skillDescription({ name: "csv-data", source: "builtin", description: CSV })).toMatch(/表格数据/);
    expect(agentName(assistant)).toBe("助手");
    expect(agentDescription(assistant)).toBe("使用服务器默认模型的通用助手。");
  });

  test("text a user changed is shown as they wrote it", async () => {
    await i18n.changeLanguage("zh-CN");
    expect(toolDescription("ls", "My own words")).toBe("My own words");
    expect(toolDescription("not_builtin", LS)).toBe(LS);
    expect(agentName({ ...generalPurpose, name: "Helper" })).toBe("Helper");
    // Only the name was changed: the untouched description is still translated.
    expect(agentDescription({ ...generalPurpose, name: "Helper" })).toMatch(/^内置的通用子智能体/);
    expect(agentName({ ...generalPurpose, is_builtin: false })).toBe("General purpose");
    expect(agentName({ ...assistant, name: "My assistant" })).toBe("My assistant");
    // A shared or personal skill of the same name is not the built-in one.
    expect(skillDescription({ name: "csv-data", source: "shared", description: CSV })).toBe(CSV);
    expect(skillDescription({ name: "csv-data", source: "builtin", description: "Edited" })).toBe("Edited");
  });

  test("an Assistant created in 简体中文 reads in English in the English UI", async () => {
    await i18n.changeLanguage("en");
    expect(agentName({ ...assistant, name: "助手" })).toBe("Assistant");
  });

  test("the catalogue translates every built-in tool and skill", async () => {
    const { en } = await import("../i18n/en");
    expect(Object.keys(en.builtin.tools).sort()).toEqual(
      ["ask_user", "edit_file", "execute", "glob", "grep", "ls", "read_file", "write_file"].sort(),
    );
    expect(Object.keys(en.builtin.skills).sort()).toEqual(["csv-data", "delegate-research"]);
  });
});
