import { act, renderHook, waitFor } from "@testing-library/react";
import { describe, expect, test, vi } from "vitest";
import type { Thread } from "../api/types";
import { useThreadPages, type ThreadCursor } from "./useThreadPages";

const thread = (id: string, minute: number): Thread =>
  ({
    id,
    agent_id: "a1",
    title: id,
    updated_at: `2026-01-02T10:${String(minute).padStart(2, "0")}:00Z`,
  }) as Thread;
const ids = (threads: readonly Thread[]) => threads.map((t) => t.id);

/** A server of threads, newest first, answering pages as `GET /api/threads?limit=…` does. */
function server(initial: Thread[]) {
  let all = initial;
  const read = vi.fn((limit: number, after: ThreadCursor | null) => {
    const from = after ? all.findIndex((t) => t.id === after.before_id) + 1 : 0;
    return Promise.resolve(all.slice(from, from + limit));
  });
  return { read, set: (threads: Thread[]) => (all = threads) };
}

describe("the thread list in pages", () => {
  test("reads the first page, then the next ones on request, until a short page", async () => {
    const fake = server([
      thread("e", 50),
      thread("d", 40),
      thread("c", 30),
      thread("b", 20),
      thread("a", 10),
    ]);
    const { result } = renderHook(() => useThreadPages(fake.read, 2));
    await waitFor(() => expect(result.current.loaded).toBe(true));
    expect(ids(result.current.threads)).toEqual(["e", "d"]);
    expect(result.current.more).toBe(true);
    expect(fake.read).toHaveBeenLastCalledWith(2, null);

    act(() => result.current.loadMore());
    await waitFor(() => expect(result.current.loadingMore).toBe(false));
    expect(fake.read).toHaveBeenLastCalledWith(2, {
      before_updated_at: thread("d", 40).updated_at,
      before_id: "d",
    });
    expect(ids(result.current.threads)).toEqual(["e", "d", "c", "b"]);

    act(() => result.current.loadMore());
    await waitFor(() => expect(result.current.more).toBe(false));
    expect(ids(result.current.threads)).toEqual(["e", "d", "c", "b", "a"]);
    act(() => result.current.loadMore());
    expect(fake.read).toHaveBeenCalledTimes(3);
  });

  test("a reload reads the first page again and keeps the pages below, each thread once", async () => {
    const fake = server([
      thread("e", 50),
      thread("d", 40),
      thread("c", 30),
      thread("b", 20),
      thread("a", 10),
    ]);
    const { result } = renderHook(() => useThreadPages(fake.read, 2));
    await waitFor(() => expect(result.current.loaded).toBe(true));
    act(() => result.current.loadMore());
    await waitFor(() => expect(result.current.threads).toHaveLength(4));

    // A run in "b" moved it to the top.
    fake.set([thread("b", 59), thread("e", 50), thread("d", 40), thread("c", 30), thread("a", 10)]);
    act(() => result.current.reload());
    await waitFor(() => expect(result.current.loading).toBe(false));
    expect(ids(result.current.threads)).toEqual(["b", "e", "d", "c"]);
    expect(result.current.more).toBe(true);
  });

  test("local changes (a new thread, a rename, a delete) change the list at once", async () => {
    const fake = server([thread("b", 20), thread("a", 10)]);
    const { result } = renderHook(() => useThreadPages(fake.read, 5));
    await waitFor(() => expect(result.current.loaded).toBe(true));
    act(() => result.current.update((list) => [thread("c", 30), ...list.filter((t) => t.id !== "a")]));
    expect(ids(result.current.threads)).toEqual(["c", "b"]);
  });
});
