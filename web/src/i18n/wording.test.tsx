import { render } from "@testing-library/react";
import { Trans } from "react-i18next";
import { describe, expect, test } from "vitest";
import i18n from ".";
import { en } from "./en";
import { zhCN } from "./zh-CN";

type Tree = { readonly [key: string]: string | Tree };

/** Every leaf of a translation tree as `[dotted.key, text]`. */
function leaves(tree: Tree, prefix = ""): [string, string][] {
  return Object.entries(tree).flatMap(([key, value]) => {
    const path = prefix ? `${prefix}.${key}` : key;
    return typeof value === "string" ? [[path, value] as [string, string]] : leaves(value, path);
  });
}

describe("what the catalogues show users", () => {
  for (const [code, tree] of Object.entries({ en, "zh-CN": zhCN } as Record<string, Tree>)) {
    test(`${code} shows no literal backtick: code is marked <code>, not Markdown`, () => {
      // The UI never renders its own strings as Markdown, so a backtick would show as one.
      expect(leaves(tree).filter(([, text]) => text.includes("`"))).toEqual([]);
    });
  }
});

describe("the API tokens' intro", () => {
  for (const lng of ["en", "zh-CN"]) {
    test(`${lng} shows the header as code, its <token> placeholder as text`, async () => {
      await i18n.changeLanguage(lng);
      const { container } = render(
        <p>
          <Trans i18nKey="account.tokensIntro" components={{ code: <code /> }} />
        </p>,
      );
      expect(container.querySelector("code")?.textContent).toBe("Authorization: Bearer <token>");
      expect(container.textContent).not.toContain("`");
    });
  }
});
