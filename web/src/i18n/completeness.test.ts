import { describe, expect, test } from "vitest";
import { en } from "./en";
import { zhCN } from "./zh-CN";

type Tree = { readonly [key: string]: string | Tree };

/** Every leaf of a translation tree as `dotted.key → text`. */
function leaves(tree: Tree, prefix = ""): Map<string, string> {
  const out = new Map<string, string>();
  for (const [key, value] of Object.entries(tree)) {
    const path = prefix ? `${prefix}.${key}` : key;
    if (typeof value === "string") out.set(path, value);
    else for (const [k, v] of leaves(value, path)) out.set(k, v);
  }
  return out;
}

const placeholders = (text: string) => [...text.matchAll(/\{\{\s*(\w+)\s*\}\}/g)].map((m) => m[1]).sort();
const tags = (text: string) => [...text.matchAll(/<\/?(\w+)\s*\/?>/g)].map((m) => m[0]).sort();

const languages: Record<string, Tree> = { en, "zh-CN": zhCN };
const english = leaves(en);

describe("every UI string exists in English and 简体中文", () => {
  for (const [code, tree] of Object.entries(languages)) {
    const own = leaves(tree);

    test(`${code} has every key and no extra one`, () => {
      expect([...own.keys()].filter((k) => !english.has(k))).toEqual([]);
      expect([...english.keys()].filter((k) => !own.has(k))).toEqual([]);
    });

    test(`${code} has no empty string`, () => {
      expect([...own].filter(([, text]) => !text.trim()).map(([k]) => k)).toEqual([]);
    });

    test(`${code} keeps each string's placeholders and markup`, () => {
      // Only an error's server detail (`{{message}}`, English) may be left out of a translation.
      const wrong = [...own].filter(([key, text]) => {
        const reference = english.get(key) ?? "";
        const mine = placeholders(text);
        const theirs = placeholders(reference);
        const same = key.startsWith("errors.")
          ? mine.every((p) => theirs.includes(p)) && theirs.every((p) => p === "message" || mine.includes(p))
          : mine.join() === theirs.join();
        return !same || tags(text).join() !== tags(reference).join();
      });
      expect(wrong.map(([k]) => k)).toEqual([]);
    });
  }

  test("Chinese strings are Chinese: each holds a CJK character unless it is a name or code", () => {
    // Product names and identifiers are the same in both languages.
    const same = new Set(["Frontmatter", "SKILL.md", "MCP"]);
    const untranslated = [...leaves(zhCN)].filter(
      ([, text]) =>
        !/[\u4e00-\u9fff]/.test(text) &&
        !same.has(text) &&
        /[A-Za-z]{3,}/.test(text.replace(/\{\{\w+\}\}|<\/?\w+>/g, "")),
    );
    expect(untranslated.map(([k, text]) => `${k}: ${text}`)).toEqual([]);
  });

  test("the sources use no key that English lacks", () => {
    const sources = import.meta.glob<string>(["../**/*.{ts,tsx}", "!../**/*.test.{ts,tsx}"], {
      query: "?raw",
      import: "default",
      eager: true,
    });
    expect(Object.keys(sources).length).toBeGreaterThan(20);
    const missing: string[] = [];
    for (const [file, text] of Object.entries(sources)) {
      for (const match of text.matchAll(/\bt\(\s*"([\w.-]+)"/g)) {
        const key = match[1]!;
        const plural = [`${key}_one`, `${key}_other`].every((k) => english.has(k));
        if (!english.has(key) && !plural) missing.push(`${file}: ${key}`);
      }
      for (const match of text.matchAll(/i18nKey="([\w.-]+)"/g)) {
        if (!english.has(match[1]!)) missing.push(`${file}: ${match[1]}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
