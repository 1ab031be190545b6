import { afterAll, describe, expect, test } from "vitest";
import i18n from "../i18n";
import { runErrorMessage, subagentEndMessage } from "./errors";
import type { RunErrorCode } from "./types";

// Every code the server can put on a failed run; a code added to the API without a place here
// fails type-checking.
const RUN_CODES: Record<RunErrorCode, true> = {
  no_model_configured: true,
  unknown_provider: true,
  model_config_invalid: true,
  model_bad_key: true,
  model_unknown_model: true,
  model_unreachable: true,
  model_error: true,
  step_limit: true,
  token_budget: true,
  invalid_tool_arguments: true,
  budget_exceeded: true,
};

afterAll(() => i18n.changeLanguage("en"));

describe("a failed run's error code is worded by the UI", () => {
  for (const language of ["en", "zh-CN"]) {
    test(`every run error code has its own text in ${language}`, async () => {
      await i18n.changeLanguage(language);
      const server = "provider said: 401 invalid api key";
      const texts = Object.keys(RUN_CODES).map((code) => runErrorMessage(server, code));
      for (const [i, text] of texts.entries()) {
        expect(text, Object.keys(RUN_CODES)[i]).not.toBe(server);
        expect(text).not.toMatch(/^errors\./);
      }
      expect(new Set(texts).size).toBe(texts.length);
    });
  }

  test("an unknown or missing code keeps the server's words", () => {
    expect(runErrorMessage("boom", "something_new")).toBe("boom");
    expect(runErrorMessage("boom", null)).toBe("boom");
  });

  test("Chinese wording is used when the language is Chinese", async () => {
    await i18n.changeLanguage("zh-CN");
    expect(runErrorMessage("x", "model_bad_key")).toContain("API 密钥");
    await i18n.changeLanguage("en");
    expect(runErrorMessage("x", "model_bad_key")).toContain("API key");
  });
});

describe("how a subagent run ended without an answer", () => {
  test("a timeout says it timed out, not that it failed", async () => {
    const timedOut = { status: "timeout", error: "the run hit its time limit of 60 s" } as const;
    await i18n.changeLanguage("zh-CN");
    expect(subagentEndMessage(timedOut)).toBe("已超时：the run hit its time limit of 60 s");
    await i18n.changeLanguage("en");
    expect(subagentEndMessage(timedOut)).toBe("Timed out: the run hit its time limit of 60 s");
  });

  test("a cancelled run says nothing beyond its status, whatever its error text", () => {
    expect(subagentEndMessage({ status: "cancelled", error: "cancelled" })).toBeNull();
  });

  test("an error says it failed, in the UI's words for a known code", async () => {
    await i18n.changeLanguage("zh-CN");
    expect(subagentEndMessage({ status: "error", error: "x", error_code: "model_bad_key" })).toMatch(
      /^运行失败：.*API 密钥/,
    );
    await i18n.changeLanguage("en");
    expect(subagentEndMessage({ status: "error", error: "boom" })).toBe("It failed: boom");
  });
});
