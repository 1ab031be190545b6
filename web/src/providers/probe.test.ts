import { describe, expect, test } from "vitest";
import i18n from "../i18n";
import { fillModels, probeRequest, probeSentence, testFailure } from "./probe";

const t = i18n.t.bind(i18n);

describe("what a probe asks with", () => {
  test("the settings on screen, the key only when typed, the stored provider when editing", () => {
    expect(
      probeRequest({
        name: "My Box",
        base_url: "http://127.0.0.1:9/v1",
        api_key: "sk-typed",
        extra_headers: { "x-team": "blue" },
        models: ["a"],
      }),
    ).toEqual({
      name: "my-box",
      kind: "openai-compatible",
      base_url: "http://127.0.0.1:9/v1",
      api_key: "sk-typed",
      extra_headers: { "x-team": "blue" },
    });
    // Editing with the key left empty: the server takes the stored provider's key.
    expect(probeRequest({ name: "box", base_url: "http://edited/v1", models: [] }, "p1")).toEqual({
      name: "box",
      kind: "openai-compatible",
      base_url: "http://edited/v1",
      provider_id: "p1",
    });
    // "Remove the stored key" is asked without it; a name the server would refuse is left out.
    expect(probeRequest({ name: "翻译", base_url: "http://x/v1", api_key: null }, "p1")).toEqual({
      kind: "openai-compatible",
      base_url: "http://x/v1",
      api_key: null,
      provider_id: "p1",
    });
  });
});

describe("a failed probe in one sentence", () => {
  const refused = {
    kind: "bad_key" as const,
    message: "the provider `fake` refused the API key: Incorrect API key provided.",
  };

  test("a known kind in the UI's words only, never the server's again", () => {
    expect(probeSentence(t, refused)).toBe("The provider refused the API key.");
    expect(probeSentence(t, { kind: "no_models", message: "the provider lists no models" })).toBe(
      "The provider lists no models: type the name of one to test it.",
    );
    expect(
      probeSentence(
        t,
        { kind: "unreachable", message: "connection refused (at http://x)" },
        { url: "http://x/v1" },
      ),
    ).toBe("The provider could not be reached at http://x/v1.");
    expect(probeSentence(t, { kind: "unreachable", message: "connection refused" })).toBe(
      "The provider could not be reached.",
    );
    expect(
      testFailure(
        t,
        { ok: false, model: "gpt-9", error: { kind: "unknown_model", message: "no gpt-9" } },
        "u",
      ),
    ).toBe("The provider does not offer the model gpt-9.");
  });

  test("anything else is the server's message", () => {
    expect(probeSentence(t, { kind: "other", message: "the provider answered HTTP 500: boom" })).toBe(
      "the provider answered HTTP 500: boom",
    );
    expect(probeSentence(t, { kind: "other", message: " " })).toBe("The test failed.");
  });

  test("in Chinese", async () => {
    await i18n.changeLanguage("zh-CN");
    expect(probeSentence(t, refused)).toBe("提供方拒绝了这个 API 密钥。");
    expect(probeSentence(t, { kind: "unreachable", message: "" }, { url: "http://x/v1" })).toBe(
      "无法连接到提供方：http://x/v1。",
    );
  });

  test("a passed test has none", () => {
    expect(testFailure(t, { ok: true, model: "a", latency_ms: 3 }, "u")).toBeNull();
  });
});

describe("the Models box after a provider listed its models", () => {
  test("an empty box takes the list; what the user typed stays", () => {
    expect(fillModels("", ["a", "b"])).toBe("a\nb");
    expect(fillModels(" \n ", ["a"])).toBe("a");
    expect(fillModels("mine", ["a", "b"])).toBe("mine");
    expect(fillModels("", undefined)).toBe("");
    expect(fillModels("", [])).toBe("");
  });
});
