import { describe, expect, test } from "vitest";
import { en } from "./en";
import { zhCN } from "./zh-CN";

type Tree = { readonly [key: string]: string | Tree };

/** Every leaf of a translation tree as `[dotted.key, text]`. */
function leaves(tree: Tree, prefix = ""): [string, string][] {
  return Object.entries(tree).flatMap(([key, value]): [string, string][] => {
    const path = prefix ? `${prefix}.${key}` : key;
    return typeof value === "string" ? [[path, value]] : leaves(value, path);
  });
}

const chinese = leaves(zhCN);
const english = new Map(leaves(en));

/** The keys whose Chinese text matches `pattern`. */
const keysMatching = (pattern: RegExp) =>
  chinese.filter(([, text]) => pattern.test(text)).map(([key]) => key);

// One word per concept: the catalogue says each thing one way, so a reader never wonders whether
// two words mean two things.
describe("简体中文 says each concept one way", () => {
  test("Skills and Slug are translated (技能, 标识), not left in English", () => {
    // Placeholders, markup, file names (SKILL.md, a .skill archive) and sandbox paths
    // (/home/gem/skills) are code, not words.
    const words = (text: string) =>
      text.replace(/\{\{\w+\}\}|<\/?\w+>|SKILL\.md|\.skill\b|\/home\/gem\/[\w/.-]+/g, "");
    const untranslated = chinese.filter(([, text]) => /\b(skills?|slugs?)\b/i.test(words(text)));
    expect(untranslated.map(([key, text]) => `${key}: ${text}`)).toEqual([]);
  });

  test("a new thread is 新对话, never 新线程", () => {
    expect(keysMatching(/新线程/)).toEqual([]);
    expect(zhCN.threads.newThread).toBe("新对话");
    expect(zhCN.chat.newThreadTitle).toBe("新对话");
  });

  test("a finished state is 已完成, never a bare 完成", () => {
    expect(keysMatching(/^完成$/)).toEqual([]);
    expect(zhCN.runStatus.success).toBe("已完成");
    expect(zhCN.tool.state.done).toBe("已完成");
  });

  test("a timeout is 已超时 everywhere, never a failure", () => {
    const timedOut = [...english].filter(([, text]) => /timed out/i.test(text)).map(([key]) => key);
    expect(timedOut).toEqual(expect.arrayContaining(["runStatus.timeout", "subagentPopup.timedOut"]));
    const zh = new Map(chinese);
    expect(timedOut.filter((key) => !zh.get(key)?.includes("已超时"))).toEqual([]);
    expect(keysMatching(/超时/).filter((key) => zh.get(key)?.includes("失败"))).toEqual([]);
  });
});
