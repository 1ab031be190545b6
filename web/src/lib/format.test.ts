import { afterEach, describe, expect, test } from "vitest";
import i18n from "../i18n";
import { formatBytes, formatNumber, formatRelative, usageText } from "./format";

describe("formats follow the UI's language", () => {
  afterEach(async () => {
    await i18n.changeLanguage("en");
  });

  test("sizes read as bytes, KB or MB", () => {
    expect(formatBytes(512)).toBe("512 B");
    expect(formatBytes(1536)).toBe("1.5 KB");
    expect(formatBytes(3 * 1024 * 1024)).toBe("3.0 MB");
  });

  test("token counts are grouped and worded in each language", async () => {
    const usage = { prompt_tokens: 1200, completion_tokens: 34 } as Parameters<typeof usageText>[0];
    expect(usageText(usage)).toBe("1,234 tokens (1,200 in, 34 out)");
    expect(usageText({ ...usage, prompt_tokens: 1, completion_tokens: 0 })).toBe("1 token (1 in, 0 out)");
    await i18n.changeLanguage("zh-CN");
    expect(usageText(usage)).toBe("1,234 个令牌（输入 1,200，输出 34）");
  });

  test("relative times are in the language chosen", async () => {
    const now = Date.parse("2026-12-01T12:00:00Z");
    expect(formatRelative("2026-12-01T11:55:00Z", now)).toBe("5 minutes ago");
    await i18n.changeLanguage("zh-CN");
    expect(formatRelative("2026-12-01T11:55:00Z", now)).toBe("5分钟前");
    expect(formatNumber(1234567)).toBe("1,234,567");
  });
});
