import { act, renderHook } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import type { MessageHit } from "./messageSearch";
import { SEARCH_DELAY_MS, useMessageSearch } from "./useMessageSearch";

const hit = (message_id: string, snippet: string): MessageHit => ({
  thread_id: "t1",
  thread_title: "Launch",
  message_id,
  seq: 1,
  role: "user",
  snippet,
  created_at: "2026-01-02T03:04:05Z",
});

/** A fake server: each request waits until the test answers it. */
function fakeSearch() {
  const calls: {
    text: string;
    signal: AbortSignal;
    answer: (hits: MessageHit[]) => void;
    fail: (e: unknown) => void;
  }[] = [];
  const search = vi.fn(
    (text: string, signal: AbortSignal) =>
      new Promise<MessageHit[]>((answer, fail) => calls.push({ text, signal, answer, fail })),
  );
  return { search, calls };
}

function typing(search: (text: string, signal: AbortSignal) => Promise<MessageHit[]>) {
  return renderHook(({ query }) => useMessageSearch(query, search), { initialProps: { query: "" } });
}

beforeEach(() => {
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("the message search while typing", () => {
  test("sends nothing below two characters", async () => {
    const { search } = fakeSearch();
    const view = typing(search);
    view.rerender({ query: "a" });
    await act(() => vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS * 4));
    expect(search).not.toHaveBeenCalled();
    expect(view.result.current).toEqual({ status: "off" });
  });

  test("waits for typing to pause, then sends only the last query, trimmed", async () => {
    const { search, calls } = fakeSearch();
    const view = typing(search);
    for (const query of ["la", "lau", "laun", "launch "]) {
      view.rerender({ query });
      await act(() => vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS - 50));
    }
    expect(search).not.toHaveBeenCalled();
    expect(view.result.current).toEqual({ status: "loading", text: "launch" });
    await act(() => vi.advanceTimersByTimeAsync(50));
    expect(calls.map((c) => c.text)).toEqual(["launch"]);

    await act(async () => calls[0]!.answer([hit("m1", "plan the launch")]));
    expect(view.result.current).toEqual({
      status: "done",
      text: "launch",
      hits: [hit("m1", "plan the launch")],
    });
  });

  test("cancels a stale request, and a stale answer never shows", async () => {
    const { search, calls } = fakeSearch();
    const view = typing(search);
    view.rerender({ query: "plan" });
    await act(() => vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS));
    view.rerender({ query: "周报" });
    expect(calls[0]!.signal.aborted).toBe(true);
    await act(() => vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS));
    expect(calls.map((c) => c.text)).toEqual(["plan", "周报"]);

    await act(async () => calls[1]!.answer([hit("m2", "写一份周报")]));
    // The old request answers late anyway (a server that ignored the cancel).
    await act(async () => calls[0]!.answer([hit("m1", "plan the launch")]));
    expect(view.result.current).toEqual({ status: "done", text: "周报", hits: [hit("m2", "写一份周报")] });
  });

  test("a query cleared while its request runs leaves nothing to show", async () => {
    const { search, calls } = fakeSearch();
    const view = typing(search);
    view.rerender({ query: "plan" });
    await act(() => vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS));
    view.rerender({ query: "" });
    expect(calls[0]!.signal.aborted).toBe(true);
    expect(view.result.current).toEqual({ status: "off" });
  });

  test("reports a failure, but not the cancel of a stale request", async () => {
    const { search, calls } = fakeSearch();
    const view = typing(search);
    view.rerender({ query: "plan" });
    await act(() => vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS));
    view.rerender({ query: "plans" });
    await act(async () => calls[0]!.fail(new DOMException("aborted", "AbortError")));
    expect(view.result.current).toEqual({ status: "loading", text: "plans" });
    await act(() => vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS));
    const failure = new Error("down");
    await act(async () => calls[1]!.fail(failure));
    expect(view.result.current).toEqual({ status: "failed", text: "plans", error: failure });
  });

  test("does not send a query longer than the server takes", async () => {
    const { search } = fakeSearch();
    const view = typing(search);
    view.rerender({ query: "x".repeat(201) });
    await act(() => vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS * 2));
    expect(search).not.toHaveBeenCalled();
    expect(view.result.current).toEqual({ status: "tooLong" });
  });

  test("stops its timer and request when the list goes away", async () => {
    const { search, calls } = fakeSearch();
    const view = typing(search);
    view.rerender({ query: "plan" });
    await act(() => vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS));
    view.rerender({ query: "plant" });
    view.unmount();
    await act(() => vi.advanceTimersByTimeAsync(SEARCH_DELAY_MS * 2));
    expect(calls.map((c) => c.text)).toEqual(["plan"]);
    expect(calls[0]!.signal.aborted).toBe(true);
  });
});
