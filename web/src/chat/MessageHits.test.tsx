import { act, render, screen } from "@testing-library/react";
import { MemoryRouter } from "react-router-dom";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import type { Agent, Thread } from "../api/types";
import i18n from "../i18n";
import type { MessageHit } from "./messageSearch";
import { MessageHits } from "./MessageHits";
import { SEARCH_DELAY_MS } from "./useMessageSearch";

let answer: MessageHit[] = [];
vi.mock("./messageSearch", async (original) => ({
  ...(await original<typeof import("./messageSearch")>()),
  searchMessages: () => Promise.resolve(answer),
}));

const threads = [{ id: "t1", agent_id: "a1" }] as Thread[];
const agents = [{ id: "a1", name: "Alpha helper" }] as Agent[];
const hit = (fields: Partial<MessageHit>): MessageHit => ({
  thread_id: "t1",
  thread_title: "Launch plan",
  message_id: "m1",
  seq: 1,
  role: "user",
  snippet: "plan the launch",
  created_at: "2026-01-02T03:04:05Z",
  ...fields,
});

async function search(query: string) {
  const view = render(
    <MemoryRouter>
      <MessageHits query={query} threads={threads} agents={agents} onOpen={() => {}} />
    </MemoryRouter>,
  );
  await act(() => vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS));
  return view;
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("the message hits of a thread search", () => {
  test("show each hit's thread, snippet with the match marked, author and a link to the message", async () => {
    answer = [
      hit({}),
      hit({ message_id: "m2", role: "assistant", snippet: "<img src=x onerror=alert(1)> LAUNCH now" }),
    ];
    const { container } = await search("launch");
    expect(screen.getByRole("heading", { name: "In messages" })).toBeTruthy();
    const items = screen.getAllByTestId("message-hit");
    expect(items.map((item) => item.querySelector("a")?.getAttribute("href"))).toEqual([
      "/chat/t1#message-m1",
      "/chat/t1#message-m2",
    ]);
    expect(screen.getAllByTestId("message-hit-author").map((el) => el.textContent)).toEqual([
      "You",
      "Alpha helper",
    ]);
    expect([...container.querySelectorAll("mark")].map((m) => m.textContent)).toEqual(["launch", "LAUNCH"]);
    // Server text is text: the markup shows as typed and builds no element.
    expect(container.querySelector("img")).toBeNull();
    expect(items[1]!.textContent).toContain("<img src=x onerror=alert(1)>");
  });

  test("say so when no message holds the text, in English and Chinese", async () => {
    answer = [];
    await search("nothing like this");
    expect(screen.getByTestId("message-hits-empty").textContent).toBe(
      "No messages contain “nothing like this”.",
    );
    await act(() => i18n.changeLanguage("zh-CN"));
    expect(screen.getByTestId("message-hits-empty").textContent).toBe("没有消息包含“nothing like this”。");
  });

  test("stay away below two characters", async () => {
    answer = [hit({})];
    const { container } = await search("l");
    expect(container.textContent).toBe("");
  });
});
