import { describe, expect, it } from "vitest";
import { draftPath, sendMode, titleFrom } from "./draft";

describe("sendMode", () => {
  it("creates the thread from a draft, whatever else is going on", () => {
    expect(sendMode(undefined, false)).toBe("create");
    expect(sendMode(undefined, true)).toBe("create");
  });

  it("starts a run on an open thread, or steers the one that is going", () => {
    expect(sendMode("t1", false)).toBe("send");
    expect(sendMode("t1", true)).toBe("steer");
  });
});

describe("titleFrom", () => {
  it("takes the first line, trimmed", () => {
    expect(titleFrom("  plan the launch\nwith details", "New")).toBe("plan the launch");
  });

  it("falls back when the message has no text on its first line", () => {
    expect(titleFrom("   ", "New")).toBe("New");
  });

  it("cuts long lines at 60 characters, counting Chinese characters one by one", () => {
    const long = "周".repeat(70);
    const title = titleFrom(long, "New");
    expect([...title]).toHaveLength(60);
    expect(title.endsWith("…")).toBe(true);
    expect(titleFrom("周".repeat(60), "New")).toBe("周".repeat(60));
  });
});

describe("draftPath", () => {
  it("names the agent of the draft, or is the plain chat page without one", () => {
    expect(draftPath("coder")).toBe("/chat/new?agent=coder");
    expect(draftPath("a b&c")).toBe("/chat/new?agent=a%20b%26c");
    expect(draftPath(undefined)).toBe("/chat");
  });
});
