import { afterAll, describe, expect, test } from "vitest";
import i18n from "../i18n";
import { runErrorMessage } from "./errors";
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
