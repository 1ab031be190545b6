import { describe, expect, test } from "vitest";
import openapi from "../../openapi.json?raw";
import { en } from "./en";
import { zhCN } from "./zh-CN";

type Tree = { readonly [key: string]: string | Tree };

/** The enum of a schema of the API document. */
function enumOf(schema: string): string[] {
  const spec = JSON.parse(openapi) as { components: { schemas: Record<string, { enum?: string[] }> } };
  const values = spec.components.schemas[schema]?.enum ?? [];
  expect(values.length, `${schema} has values`).toBeGreaterThan(0);
  return values;
}

/** The text at `path` in a translation tree, when it is one. */
function textAt(tree: Tree, path: string[]): string | undefined {
  let node: string | Tree | undefined = tree;
  for (const key of path) node = typeof node === "object" ? node[key] : undefined;
  return typeof node === "string" ? node : undefined;
}

// Every error the server can answer (`error.reason`), everything it names (`params.subject`)
// and every code of a failed run (`error_code`): each has its own words in each language.
const CATALOGUES = [
  ["ErrorReason", ["errors", "reason"]],
  ["Subject", ["errors", "subject"]],
  ["RunErrorCode", ["errors", "run"]],
] as const;

const LANGUAGES: Record<string, Tree> = { en, "zh-CN": zhCN };

describe("every error code of the API has a translation in every language", () => {
  for (const [schema, at] of CATALOGUES) {
    for (const [language, tree] of Object.entries(LANGUAGES)) {
      test(`${schema} in ${language}`, () => {
        const missing = enumOf(schema).filter((value) => !textAt(tree, [...at, value])?.trim());
        expect(missing).toEqual([]);
      });
    }

    test(`${schema} in Chinese is Chinese, not an English sentence`, () => {
      const english = enumOf(schema)
        .map((value) => [value, textAt(zhCN, [...at, value]) ?? ""] as const)
        .filter(([, text]) => !/[\u4e00-\u9fff]/.test(text.replace(/\{\{\w+\}\}/g, "")));
      expect(english.map(([value, text]) => `${value}: ${text}`)).toEqual([]);
    });
  }

  test("a run's time limit, interruption and plain failure are worded too", () => {
    for (const tree of Object.values(LANGUAGES)) {
      for (const key of ["timeout", "timeoutNoLimit", "interrupted", "failed"]) {
        expect(textAt(tree, ["errors", "run", key])?.trim(), key).toBeTruthy();
      }
    }
    expect(textAt(en, ["errors", "run", "timeout"])).toContain("{{limit_s}}");
    expect(textAt(zhCN, ["errors", "run", "timeout"])).toContain("{{limit_s}}");
  });
});
