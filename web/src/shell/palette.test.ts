import { describe, expect, test } from "vitest";
import type { Agent } from "../api/types";
import { filterItems, paletteItems } from "./palette";
import { isPaletteKey, paletteKeys } from "./keys";

const agent = (id: string, name: string, fields: Partial<Agent> = {}) =>
  ({ id, slug: id, name, is_subagent: false, is_default: false, ...fields }) as Agent;

const words = {
  newThread: "New thread",
  chatWith: (name: string) => `Chat with ${name}`,
  shortcuts: "Keyboard shortcuts",
};
const pages = [
  { to: "/chat", label: "Chat" },
  { to: "/providers", label: "Providers", adminOnly: true },
  { to: "/agents", label: "Agents" },
];
const agents = [
  agent("echo", "Echo"),
  agent("helper", "Helper", { is_default: true }),
  agent("sub", "Sub", { is_subagent: true }),
];

describe("the command palette's entries", () => {
  test("New thread, the pages the user may see, a chat per normal agent, the shortcuts", () => {
    const items = paletteItems({ pages, isAdmin: false, agents, words });
    expect(items.map((item) => [item.label, item.to])).toEqual([
      ["New thread", "/chat/new?agent=helper"],
      ["Chat", "/chat"],
      ["Agents", "/agents"],
      ["Chat with Echo", "/chat/new?agent=echo"],
      ["Chat with Helper", "/chat/new?agent=helper"],
      ["Keyboard shortcuts", null],
    ]);
    const admin = paletteItems({ pages, isAdmin: true, agents, words });
    expect(admin.map((item) => item.label)).toContain("Providers");
  });

  test("New thread keeps the agent in use, else the default one, else the first", () => {
    const newThread = (currentAgentId: string | undefined, list = agents) =>
      paletteItems({ pages, isAdmin: false, agents: list, currentAgentId, words })[0];
    expect(newThread("echo")).toMatchObject({ to: "/chat/new?agent=echo", hint: "Echo" });
    expect(newThread(undefined)).toMatchObject({ to: "/chat/new?agent=helper" });
    expect(newThread("sub")).toMatchObject({ to: "/chat/new?agent=helper" });
    expect(newThread(undefined, [agent("b", "B"), agent("c", "C")])).toMatchObject({
      to: "/chat/new?agent=b",
    });
    // No agent: nothing to start a thread with.
    expect(newThread(undefined, [])?.id).not.toBe("new-thread");
  });

  test("a query keeps the entries holding each of its words, in any case", () => {
    const items = paletteItems({ pages, isAdmin: false, agents, words });
    const labels = (query: string) => filterItems(items, query).map((item) => item.label);
    expect(labels("")).toHaveLength(items.length);
    expect(labels("ECHO")).toEqual(["Chat with Echo"]);
    expect(labels("chat help")).toEqual(["Chat with Helper"]);
    // The hint (New thread's agent) and the slug are searched too.
    expect(labels("new helper")).toEqual(["New thread"]);
    expect(labels("  agents ")).toEqual(["Agents"]);
    expect(labels("nothing like it")).toEqual([]);
  });

  test("Chinese labels are found by their characters", () => {
    const items = paletteItems({
      pages: [{ to: "/skills", label: "技能" }],
      isAdmin: false,
      agents: [agent("zhushou", "助手")],
      words: { newThread: "新对话", chatWith: (name) => `与 ${name} 聊天`, shortcuts: "键盘快捷键" },
    });
    expect(filterItems(items, "助手").map((item) => item.label)).toEqual(["新对话", "与 助手 聊天"]);
    expect(filterItems(items, "技能").map((item) => item.to)).toEqual(["/skills"]);
  });
});

describe("the palette's key", () => {
  test("is written ⌘K on Apple platforms and Ctrl+K elsewhere", () => {
    expect(paletteKeys(true)).toBe("⌘K");
    expect(paletteKeys(false)).toBe("Ctrl+K");
  });

  test("is Ctrl+K or ⌘K, not K alone or with other modifiers", () => {
    const key = (fields: Partial<KeyboardEvent>) =>
      isPaletteKey({ key: "k", ctrlKey: false, metaKey: false, altKey: false, shiftKey: false, ...fields });
    expect(key({ ctrlKey: true })).toBe(true);
    expect(key({ metaKey: true })).toBe(true);
    expect(key({ key: "K", ctrlKey: true })).toBe(true);
    expect(key({})).toBe(false);
    expect(key({ ctrlKey: true, altKey: true })).toBe(false);
    expect(key({ ctrlKey: true, shiftKey: true })).toBe(false);
  });
});
