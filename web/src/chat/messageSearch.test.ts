import { describe, expect, test } from "vitest";
import { checkQuery, highlightParts, linkedMessage, messageLink } from "./messageSearch";

const marked = (snippet: string, query: string) =>
  highlightParts(snippet, query)
    .map((part) => (part.match ? `[${part.text}]` : part.text))
    .join("");

describe("a message hit's snippet", () => {
  test("marks every occurrence, ASCII case ignored and the snippet's own case kept", () => {
    expect(marked("Plan the LAUNCH, then launch it", "launch")).toBe("Plan the [LAUNCH], then [launch] it");
    expect(marked("…the Launch plan…", "  LAUNCH  ")).toBe("…the [Launch] plan…");
  });

  test("marks Chinese as written", () => {
    expect(marked("请写一份周报，周报要短", "周报")).toBe("请写一份[周报]，[周报]要短");
  });

  test("matches literally: no pattern syntax, no case folding beyond ASCII", () => {
    expect(marked("version 1.0 (or 100%)", "1.0 (or")).toBe("version [1.0 (or] 100%)");
    expect(marked("a.b axb", "a.b")).toBe("[a.b] axb");
    expect(marked("ÉCOLE école", "école")).toBe("ÉCOLE [école]");
  });

  test("joins the query's whitespace the way the server joins the snippet's", () => {
    expect(marked("plan the launch", "plan \n  the")).toBe("[plan the] launch");
  });

  test("leaves the text whole without a match or a query", () => {
    expect(highlightParts("nothing here", "zzz")).toEqual([{ text: "nothing here", match: false }]);
    expect(highlightParts("nothing here", "  ")).toEqual([{ text: "nothing here", match: false }]);
    expect(highlightParts("", "x")).toEqual([]);
  });

  test("keeps markup in server text as text", () => {
    expect(highlightParts("<b>hi</b> <img src=x onerror=alert(1)>", "img")).toEqual([
      { text: "<b>hi</b> <", match: false },
      { text: "img", match: true },
      { text: " src=x onerror=alert(1)>", match: false },
    ]);
  });
});

describe("when a query is sent", () => {
  test("from two characters (a two-character Chinese word is enough), trimmed", () => {
    expect(checkQuery("")).toEqual({ kind: "short" });
    expect(checkQuery(" a ")).toEqual({ kind: "short" });
    expect(checkQuery("周")).toEqual({ kind: "short" });
    expect(checkQuery(" 周报 ")).toEqual({ kind: "ok", text: "周报" });
    expect(checkQuery("ab")).toEqual({ kind: "ok", text: "ab" });
  });

  test("up to 200 characters, counted as characters", () => {
    expect(checkQuery("报".repeat(200))).toEqual({ kind: "ok", text: "报".repeat(200) });
    expect(checkQuery("x".repeat(201))).toEqual({ kind: "long" });
    expect(checkQuery("😀".repeat(200))).toEqual({ kind: "ok", text: "😀".repeat(200) });
  });
});

describe("the link to a message", () => {
  test("round-trips through the location's hash", () => {
    const link = messageLink("t-1", "m 2");
    expect(link).toBe("/chat/t-1#message-m%202");
    expect(linkedMessage(link.slice(link.indexOf("#")))).toBe("m 2");
  });

  test("ignores any other hash", () => {
    expect(linkedMessage("")).toBeNull();
    expect(linkedMessage("#top")).toBeNull();
    expect(linkedMessage("#message-")).toBeNull();
    expect(linkedMessage("#message-%E0%A4%A")).toBeNull();
  });
});
