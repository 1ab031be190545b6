import { afterAll, afterEach, describe, expect, test } from "vitest";
import i18n from "../i18n";
import {
  ApiError,
  RUN_CODES,
  decodeError,
  errorMessage,
  runErrorDetail,
  runErrorMessage,
  subagentEndMessage,
  type ErrorParams,
} from "./errors";
import type { RunErrorCode } from "./types";

afterEach(() => i18n.changeLanguage("en"));
afterAll(() => i18n.changeLanguage("en"));

/** An API error with a reason, as the server answers it. */
const refusal = (
  status: number,
  code: string,
  reason: string,
  params: ErrorParams = {},
  message = "server words",
) =>
  decodeError(status, {
    error: { code, message, reason, params, ...("field" in params ? { field: params.field } : {}) },
  });

describe("an API error is decoded with its reason and values", () => {
  test("reason and params are kept", () => {
    const error = refusal(422, "validation_failed", "too_long", { field: "name", max: 80 });
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      status: 422,
      code: "validation_failed",
      reason: "too_long",
      field: "name",
    });
    expect(error.params).toEqual({ field: "name", max: 80 });
  });

  test("an answer without them has no reason and empty values", () => {
    const error = decodeError(409, { error: { code: "conflict", message: "x" } });
    expect(error.reason).toBeUndefined();
    expect(error.params).toEqual({});
  });
});

describe("errorMessage words an error from its reason, in the UI's language", () => {
  test("too_long names its maximum, never the payload field", async () => {
    const error = refusal(422, "validation_failed", "too_long", { field: "config_json.name", max: 1000 });
    expect(errorMessage(error)).toBe("This is too long: at most 1,000 characters.");
    await i18n.changeLanguage("zh-CN");
    expect(errorMessage(error)).toBe("太长了：最多 1,000 个字符。");
    expect(errorMessage(error)).not.toContain("config_json");
  });

  test("skill_exists names the skill and the Replace box, not an API parameter", async () => {
    const error = refusal(
      409,
      "conflict",
      "skill_exists",
      { field: "frontmatter.name", name: "pdf-tools" },
      "a shared skill named `pdf-tools` already exists; upload with replace=true to make this its new version",
    );
    const en = errorMessage(error);
    expect(en).toContain("“pdf-tools”");
    expect(en).toContain("“Replace a skill of the same name”");
    expect(en).not.toContain("replace=true");
    await i18n.changeLanguage("zh-CN");
    const zh = errorMessage(error);
    expect(zh).toContain("“pdf-tools”");
    expect(zh).toContain("“替换同名的技能”");
    expect(zh).not.toMatch(/replace=true|already exists/);
  });

  test("not_found names its subject in the UI's words", async () => {
    const error = refusal(
      404,
      "not_found",
      "not_found",
      { subject: "knowledge_base" },
      "knowledge base not found",
    );
    expect(errorMessage(error)).toMatch(/^This knowledge base was not found/);
    expect(
      errorMessage(refusal(404, "not_found", "not_found", { subject: "agent", name: "writer" })),
    ).toMatch(/^No agent named “writer” was found/);
    expect(errorMessage(refusal(404, "not_found", "not_found"))).toMatch(/^Not found/);
    await i18n.changeLanguage("zh-CN");
    expect(errorMessage(error)).toMatch(/^未找到这个知识库/);
  });

  test("login_failed is one sentence, once, in the UI's language", async () => {
    const error = refusal(401, "unauthorized", "login_failed", {}, "invalid username or password");
    expect(errorMessage(error)).toBe("Wrong username or password.");
    await i18n.changeLanguage("zh-CN");
    expect(errorMessage(error)).toBe("用户名或密码错误。");
  });

  test("byte sizes read as sizes, retry delays as seconds", async () => {
    expect(
      errorMessage(refusal(413, "payload_too_large", "body_too_large", { limit: 20 * 1024 * 1024 })),
    ).toBe("The request is too large: it may be at most 20 MB.");
    expect(
      errorMessage(refusal(413, "payload_too_large", "file_too_large", { name: "big.pdf", limit: 1536 })),
    ).toBe("“big.pdf” is larger than 1.5 KB, the most one file may hold.");
    await i18n.changeLanguage("zh-CN");
    expect(errorMessage(refusal(429, "too_many_requests", "too_many_logins", { retry_after_s: 30 }))).toBe(
      "登录失败次数过多：请在 30 秒后重试。",
    );
  });

  test("a subject is translated, a status is the status word", async () => {
    await i18n.changeLanguage("zh-CN");
    expect(errorMessage(refusal(403, "forbidden", "cannot_delete", { subject: "mcp_server" }))).toBe(
      "你可以使用这个MCP 服务器，但不能删除它。",
    );
    expect(errorMessage(refusal(409, "conflict", "run_not_waiting", { status: "running" }))).toContain(
      "运行中",
    );
  });

  test("a catch-all reason keeps the server's English in English, the catalogue elsewhere", async () => {
    const error = refusal(
      422,
      "validation_failed",
      "invalid_value",
      { field: "settings.chunk_overlap" },
      "must be at most half the chunk size (200)",
    );
    expect(errorMessage(error)).toBe("must be at most half the chunk size (200)");
    await i18n.changeLanguage("zh-CN");
    expect(errorMessage(error)).toBe("这个值无效。");
  });

  test("a reason missing a value it needs, or unknown, falls back to its coarse code", async () => {
    expect(errorMessage(refusal(422, "validation_failed", "too_long", {}, "too long"))).toBe("too long");
    expect(errorMessage(refusal(409, "busy", "something_new", {}, "busy now"))).toMatch(/still answering/);
    await i18n.changeLanguage("zh-CN");
    expect(errorMessage(refusal(422, "validation_failed", "something_new", {}, "english words"))).toBe(
      "输入有误，请检查后重试。",
    );
  });

  test("no Chinese sentence of a reason carries the server's English", async () => {
    await i18n.changeLanguage("zh-CN");
    const reasons = ["login_failed", "thread_busy", "taken", "required", "internal", "gone", "admin_only"];
    for (const reason of reasons) {
      const text = errorMessage(refusal(400, "x", reason, {}, "ENGLISH SERVER TEXT"));
      expect(text, reason).not.toContain("ENGLISH");
      expect(text, reason).toMatch(/[\u4e00-\u9fff]/);
    }
  });

  test("an unreachable server and a bare HTTP error keep their own words", () => {
    expect(errorMessage(new ApiError(0, "unreachable", "fetch failed"))).toMatch(/could not be reached/);
    expect(errorMessage(decodeError(502, "Bad Gateway"))).toBe("Bad Gateway");
    expect(errorMessage(decodeError(502, null))).toBe("The request failed (HTTP 502).");
  });
});

describe("a failed run's end is worded by the UI", () => {
  for (const language of ["en", "zh-CN"]) {
    test(`every run error code has its own text in ${language}`, async () => {
      await i18n.changeLanguage(language);
      const server = "provider said: 401 invalid api key";
      const codes = Object.keys(RUN_CODES) as RunErrorCode[];
      const texts = codes.map((code) =>
        runErrorMessage({ status: "error", error: server, error_code: code }),
      );
      for (const [i, text] of texts.entries()) {
        expect(text, codes[i]).not.toBe(server);
        expect(text).not.toMatch(/^errors\./);
        if (language === "zh-CN") expect(text, codes[i]).not.toContain(server);
      }
      expect(new Set(texts).size).toBe(texts.length);
    });
  }

  test("the provider's own detail follows the sentence in English, and is a tooltip elsewhere", async () => {
    const run = { status: "error", error: "quota exceeded for this key", error_code: "model_error" } as const;
    expect(runErrorMessage(run)).toBe(
      "The model provider answered with an error: quota exceeded for this key",
    );
    expect(runErrorDetail(run)).toBeNull();
    await i18n.changeLanguage("zh-CN");
    expect(runErrorMessage(run)).toBe("模型提供方返回了错误。");
    expect(runErrorDetail(run)).toBe("quota exceeded for this key");
  });

  test("a timeout says its time limit, from its values or the server's words", async () => {
    const run = {
      status: "timeout",
      error: "the run hit its time limit of 3 s",
      error_params: { limit_s: 3 },
    } as const;
    expect(runErrorMessage(run)).toBe("The run hit its time limit of 3 s.");
    await i18n.changeLanguage("zh-CN");
    expect(runErrorMessage(run)).toBe("运行达到了 3 秒的时间上限。");
    // A live event carries only the words.
    expect(runErrorMessage({ status: "timeout", error: "the run hit its time limit of 90 s" })).toBe(
      "运行达到了 90 秒的时间上限。",
    );
    expect(runErrorMessage({ status: "timeout", error: "?" })).toBe("运行达到了时间上限。");
  });

  test("budget_exceeded, cancelled and interrupted have their own words", async () => {
    const budget = {
      status: "error",
      error: "token budget of 1000 exceeded",
      error_code: "budget_exceeded",
    } as const;
    expect(runErrorMessage(budget)).toBe("The run stopped: it and its subagents used up their token budget.");
    expect(runErrorMessage({ status: "cancelled", error: "cancelled" })).toBe("cancelled");
    expect(
      runErrorMessage({ status: "interrupted", error: "the server stopped while this run was active" }),
    ).toBe("The server stopped while the run was active.");
    await i18n.changeLanguage("zh-CN");
    expect(runErrorMessage(budget)).toBe("运行已停止：它和它的子智能体用完了令牌预算。");
    expect(runErrorMessage({ status: "cancelled", error: "cancelled" })).toBe("已取消");
    expect(runErrorMessage({ status: "interrupted", error: "x" })).toBe("运行期间服务器停止了，运行已中断。");
  });

  test("a failure without a code keeps the server's words in English only", async () => {
    expect(runErrorMessage({ status: "error", error: "boom" })).toBe("boom");
    expect(runErrorMessage({ status: "error", error: "boom", error_code: null })).toBe("boom");
    expect(runErrorMessage({ status: "success" })).toBeNull();
    await i18n.changeLanguage("zh-CN");
    expect(runErrorMessage({ status: "error", error: "boom" })).toBe("运行失败。");
    expect(runErrorDetail({ status: "error", error: "boom" })).toBe("boom");
  });
});

describe("how a subagent run ended without an answer", () => {
  test("a timeout says it timed out, not that it failed, with its limit", async () => {
    const timedOut = {
      status: "timeout",
      error: "the run hit its time limit of 60 s",
      error_params: { limit_s: 60 },
    } as const;
    expect(subagentEndMessage(timedOut)).toBe("Timed out: The run hit its time limit of 60 s.");
    await i18n.changeLanguage("zh-CN");
    expect(subagentEndMessage(timedOut)).toBe("已超时：运行达到了 60 秒的时间上限。");
  });

  test("a cancelled run says nothing beyond its status, whatever its error text", () => {
    expect(subagentEndMessage({ status: "cancelled", error: "cancelled" })).toBeNull();
  });

  test("an error says it failed, in the UI's words", async () => {
    await i18n.changeLanguage("zh-CN");
    expect(subagentEndMessage({ status: "error", error: "x", error_code: "model_bad_key" })).toMatch(
      /^运行失败：.*API 密钥/,
    );
    expect(subagentEndMessage({ status: "error", error: "boom" })).toBe("运行失败。");
    await i18n.changeLanguage("en");
    expect(subagentEndMessage({ status: "error", error: "boom" })).toBe("It failed: boom");
  });
});
