import { describe, expect, test } from "vitest";
import { fallbackSlug, isValidSlug, SLUG_MAX_CHARS, slugFromName, suggestSlug } from "./slug";

// Names a user may give, in English, Chinese and both; every slug they suggest must pass the
// server's rule.
const NAMES = [
  "Travel Handbook 2026!",
  "My Weather_Server!",
  "  --Everything--  ",
  "翻译助手",
  "产品手册",
  "GPT 翻译助手 v2",
  "GPT翻译助手",
  "我的知识库：产品手册（2026 版）",
  "旅行手册",
  "Café Crème",
  "x".repeat(70),
  "翻译助手".repeat(20),
  "a-".repeat(40),
];

describe("the slug a name suggests", () => {
  test("Chinese is spelled in pinyin, one word per dash-separated part", () => {
    expect(slugFromName("翻译助手")).toBe("fanyi-zhushou");
    expect(slugFromName("产品手册")).toBe("chanpin-shouce");
    expect(slugFromName("旅行手册")).toBe("lvxing-shouce");
  });

  test("a polyphonic character reads as its word does", () => {
    expect(slugFromName("银行")).toBe("yinhang");
    expect(slugFromName("行长")).toBe("hangzhang");
  });

  test("mixed text keeps its Latin words and numbers beside the pinyin", () => {
    expect(slugFromName("GPT 翻译助手 v2")).toBe("gpt-fanyi-zhushou-v2");
    expect(slugFromName("GPT翻译助手")).toBe("gpt-fanyi-zhushou");
    expect(slugFromName("产品手册（2026 版）")).toBe("chanpin-shouce-2026-ban");
  });

  test("Latin text is lower-cased, loses its accents, and anything else becomes one dash", () => {
    expect(slugFromName("Travel Handbook 2026!")).toBe("travel-handbook-2026");
    expect(slugFromName("My Weather_Server!")).toBe("my-weather-server");
    expect(slugFromName("  --Everything--  ")).toBe("everything");
    expect(slugFromName("Café Crème")).toBe("cafe-creme");
  });

  test("a name that spells nothing gives an empty slug", () => {
    for (const name of ["", "   ", "🚀", "🚀✨", "!!!", "——"]) expect(slugFromName(name)).toBe("");
  });

  test("past 64 characters the slug is cut at a whole word", () => {
    expect(slugFromName("x".repeat(70))).toBe("x".repeat(SLUG_MAX_CHARS));
    expect(slugFromName("翻译助手".repeat(20))).toBe(`${"fanyi-zhushou-".repeat(4)}fanyi`);
    expect(slugFromName(`${"a".repeat(60)} words`)).toBe("a".repeat(60));
  });

  test("every suggested slug passes the server's rule", () => {
    for (const name of NAMES) {
      const slug = suggestSlug(name, fallbackSlug("agent"));
      expect(isValidSlug(slug), `${name} → ${slug}`).toBe(true);
    }
  });

  test("a name that spells nothing falls back; a blank one suggests nothing yet", () => {
    expect(suggestSlug("🚀", "agent-x7k2")).toBe("agent-x7k2");
    expect(suggestSlug("翻译助手", "agent-x7k2")).toBe("fanyi-zhushou");
    expect(suggestSlug("  ", "agent-x7k2")).toBe("");
  });

  test("the fallback is the kind and four random letters or digits, and passes the rule", () => {
    const drawn = new Set<string>();
    for (let i = 0; i < 50; i++) {
      const slug = fallbackSlug("agent");
      expect(slug).toMatch(/^agent-[a-z0-9]{4}$/);
      expect(isValidSlug(slug)).toBe(true);
      drawn.add(slug);
    }
    expect(drawn.size).toBeGreaterThan(40);
  });
});

describe("the server's slug rule", () => {
  test("takes 1-64 characters of a-z, 0-9 and inner dashes", () => {
    for (const good of ["a", "0", "general-purpose", "fanyi-zhushou", "a-b-c", "x".repeat(64)]) {
      expect(isValidSlug(good), good).toBe(true);
    }
  });

  test("refuses empty, too long, upper case, other characters and outer dashes", () => {
    for (const bad of ["", "x".repeat(65), "Abc", "a_b", "a b", "翻译", "-a", "a-", "-"]) {
      expect(isValidSlug(bad), bad).toBe(false);
    }
  });
});
