import { describe, expect, test } from "vitest";
import type { Message, Thread } from "../api/types";
import {
  appendThreads,
  compareThreads,
  latestMessages,
  mergeLatestMessages,
  mergeThreads,
  NO_MESSAGES,
  NO_THREADS,
  nextThreadCursor,
  prependMessages,
  prependTranscript,
  refreshThreads,
} from "./pages";
import { applyEvent, fromMessages } from "./transcript";

/** A thread updated `minute` minutes past 10:00. */
const thread = (id: string, minute: number, title = id): Thread => ({
  id,
  agent_id: "a1",
  user_id: "u1",
  title,
  runtime_scope_id: "s1",
  workdir_path: "w",
  created_at: "2026-01-02T09:00:00Z",
  updated_at: `2026-01-02T10:${String(minute).padStart(2, "0")}:00Z`,
  waiting: false,
});

const ids = (threads: readonly Thread[]) => threads.map((t) => t.id);

const msg = (seq: number, role: Message["role"] = "user", extra: Partial<Message> = {}): Message => ({
  id: `m${seq}`,
  thread_id: "t1",
  seq,
  role,
  content: `message ${seq}`,
  created_at: "2026-01-02T03:04:05Z",
  ...extra,
});

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => msg(from + i));
const seqs = (messages: readonly Message[]) => messages.map((m) => m.seq);

describe("the thread list's order", () => {
  test("is most recently updated first, then by id, as the server orders it", () => {
    const list = [thread("a", 1), thread("c", 5), thread("b", 5), thread("d", 3)].sort(compareThreads);
    expect(ids(list)).toEqual(["c", "b", "d", "a"]);
  });

  test("tells apart times that differ below the millisecond", () => {
    const older = { ...thread("a", 1), updated_at: "2026-01-02T10:01:00.000001Z" };
    const newer = { ...thread("b", 1), updated_at: "2026-01-02T10:01:00.000002Z" };
    expect(ids([older, newer].sort(compareThreads))).toEqual(["b", "a"]);
  });

  test("merging lists keeps each thread once, its most recent copy", () => {
    const merged = mergeThreads([thread("a", 9), thread("b", 5)], [thread("b", 7), thread("a", 2)]);
    expect(ids(merged)).toEqual(["a", "b"]);
    expect(merged.map((t) => t.updated_at)).toEqual([thread("a", 9).updated_at, thread("b", 7).updated_at]);
  });

  test("a later copy with the same time wins (a rename, a waiting mark)", () => {
    const merged = mergeThreads([thread("a", 3, "old")], [{ ...thread("a", 3, "new"), waiting: true }]);
    expect(merged).toEqual([{ ...thread("a", 3, "new"), waiting: true }]);
  });
});

describe("the pages of the thread list", () => {
  // Two pages of three: f e d | c b a.
  const firstPage = [thread("f", 50), thread("e", 40), thread("d", 30)];
  const secondPage = [thread("c", 20), thread("b", 10), thread("a", 5)];
  const loaded = appendThreads(refreshThreads(NO_THREADS, firstPage, 3), secondPage, 3);

  test("the first page, full, may have more after it; a short one is the whole list", () => {
    expect(refreshThreads(NO_THREADS, firstPage, 3)).toEqual({ threads: firstPage, more: true });
    expect(refreshThreads(NO_THREADS, firstPage.slice(0, 2), 3)).toEqual({
      threads: firstPage.slice(0, 2),
      more: false,
    });
  });

  test("the next page goes after the last, and starts after the last thread listed", () => {
    expect(ids(loaded.threads)).toEqual(["f", "e", "d", "c", "b", "a"]);
    expect(loaded.more).toBe(true);
    expect(nextThreadCursor(loaded)).toEqual({
      before_updated_at: thread("a", 5).updated_at,
      before_id: "a",
    });
    expect(appendThreads(loaded, [], 3).more).toBe(false);
    expect(nextThreadCursor(NO_THREADS)).toBeNull();
  });

  test("a page that repeats a thread (the list moved meanwhile) does not list it twice", () => {
    const next = appendThreads(loaded, [thread("a", 5), thread("z", 1)], 3);
    expect(ids(next.threads)).toEqual(["f", "e", "d", "c", "b", "a", "z"]);
    expect(next.more).toBe(false);
  });

  test("refreshing the first page keeps the pages loaded below it", () => {
    const refreshed = refreshThreads(
      loaded,
      [thread("f", 50, "renamed"), thread("e", 40), thread("d", 30)],
      3,
    );
    expect(ids(refreshed.threads)).toEqual(["f", "e", "d", "c", "b", "a"]);
    expect(refreshed.threads[0]!.title).toBe("renamed");
    expect(refreshed.more).toBe(true);
  });

  test("a thread that moved to the top is listed once, at the top", () => {
    const refreshed = refreshThreads(loaded, [thread("b", 59), thread("f", 50), thread("e", 40)], 3);
    expect(ids(refreshed.threads)).toEqual(["b", "f", "e", "d", "c", "a"]);
  });

  test("a thread that is no longer on the first page where it belongs was deleted", () => {
    const refreshed = refreshThreads(loaded, [thread("f", 50), thread("d", 30), thread("c", 20)], 3);
    expect(ids(refreshed.threads)).toEqual(["f", "d", "c", "b", "a"]);
  });

  test("a new thread pushes the first page down without losing the threads below", () => {
    const refreshed = refreshThreads(loaded, [thread("g", 55), thread("f", 50), thread("e", 40)], 3);
    expect(ids(refreshed.threads)).toEqual(["g", "f", "e", "d", "c", "b", "a"]);
  });

  test("a short first page is the whole list: nothing else stays", () => {
    const refreshed = refreshThreads(loaded, [thread("f", 50), thread("a", 5)], 3);
    expect(refreshed).toEqual({ threads: [thread("f", 50), thread("a", 5)], more: false });
  });

  test("a refresh keeps knowing whether more pages follow", () => {
    const last = appendThreads(loaded, [thread("z", 1)], 3);
    expect(refreshThreads(last, firstPage, 3).more).toBe(false);
    expect(refreshThreads(loaded, firstPage, 3).more).toBe(true);
  });
});

describe("the pages of a conversation", () => {
  test("the latest page, full, may have earlier messages; a short one is the whole thread", () => {
    expect(latestMessages(range(301, 500), 200).more).toBe(true);
    expect(latestMessages(range(1, 50), 200)).toEqual({ messages: range(1, 50), more: false });
  });

  test("an earlier page goes before the first message shown", () => {
    const loaded = latestMessages(range(301, 500), 200);
    const more = prependMessages(loaded, range(101, 300), 200);
    expect(seqs(more.messages)).toEqual(seqs(range(101, 500)));
    expect(more.more).toBe(true);
    const all = prependMessages(more, range(1, 100), 200);
    expect(seqs(all.messages)).toEqual(seqs(range(1, 500)));
    expect(all.more).toBe(false);
  });

  test("an earlier page never repeats a message already shown", () => {
    const loaded = latestMessages(range(5, 8), 4);
    const more = prependMessages(loaded, range(3, 6), 4);
    expect(seqs(more.messages)).toEqual([3, 4, 5, 6, 7, 8]);
  });

  test("reading the latest page again merges it by seq and keeps the earlier pages", () => {
    // Loaded: 1-5 (the whole thread: the earlier page was short). Messages 6 and 7 came.
    const loaded = prependMessages(latestMessages(range(3, 5), 3), range(1, 2), 3);
    expect(loaded.more).toBe(false);
    const merged = mergeLatestMessages(loaded, [msg(5, "user", { content: "edited" }), msg(6), msg(7)], 3);
    expect(seqs(merged.messages)).toEqual([1, 2, 3, 4, 5, 6, 7]);
    expect(merged.messages[4]!.content).toBe("edited");
    expect(merged.more).toBe(false);
  });

  test("a message no longer in the latest page's span was replaced: it goes", () => {
    // 5 and 6 were replaced by a later run, which wrote 7 and 8.
    const loaded = latestMessages(range(3, 6), 4);
    const merged = mergeLatestMessages(loaded, [msg(3), msg(4), msg(7), msg(8)], 4);
    expect(seqs(merged.messages)).toEqual([3, 4, 7, 8]);
    expect(merged.more).toBe(true);
  });

  test("a latest page past everything loaded (more than a page came since) stands alone", () => {
    const loaded = latestMessages(range(1, 4), 4);
    const merged = mergeLatestMessages(loaded, range(9, 12), 4);
    expect(seqs(merged.messages)).toEqual([9, 10, 11, 12]);
    expect(merged.more).toBe(true);
  });

  test("a short latest page is the whole thread", () => {
    const loaded = prependMessages(latestMessages(range(4, 6), 3), range(1, 3), 3);
    expect(mergeLatestMessages(loaded, [msg(1), msg(9)], 3)).toEqual({
      messages: [msg(1), msg(9)],
      more: false,
    });
    expect(mergeLatestMessages(NO_MESSAGES, range(1, 3), 3)).toEqual({ messages: range(1, 3), more: true });
  });
});

describe("a transcript with an earlier page put before it", () => {
  test("shows the earlier messages first and keeps what was streamed since", () => {
    const shown = applyEvent(fromMessages([msg(3), msg(4, "assistant")]), {
      type: "message_delta",
      id: 9,
      run_id: "r1",
      thread_id: "t1",
      text: "still typing",
      at: "2026-01-02T03:04:06Z",
    });
    const next = prependTranscript(shown, [msg(1), msg(2, "assistant")]);
    expect(next.items.map((item) => item.key)).toEqual(["m:m1", "m:m2", "m:m3", "m:m4", "live:r1:9"]);
    expect(next.seen.has("m1")).toBe(true);
    expect(prependTranscript(next, [msg(1)])).toBe(next);
  });

  test("a tool call whose result was on the later page is shown once, where the call is", () => {
    const call = msg(2, "assistant", {
      content: "",
      run_id: "r1",
      tool_calls: [{ id: "c1", name: "read_file", arguments: '{"path":"a.txt"}' }],
    });
    const result = msg(3, "tool", {
      content: "hello",
      run_id: "r1",
      tool_call_id: "c1",
      tool_name: "read_file",
    });
    const later = fromMessages([result, msg(4, "assistant")]);
    const next = prependTranscript(later, [msg(1), call]);
    const whole = fromMessages([msg(1), call, result, msg(4, "assistant")]);
    expect(next.items).toEqual(whole.items);
  });
});
