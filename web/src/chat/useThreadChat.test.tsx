import { act, renderHook, waitFor } from "@testing-library/react";
import { afterEach, beforeEach, describe, expect, test, vi } from "vitest";
import type { Message } from "../api/types";
import { MESSAGE_PAGE } from "./pages";
import type { Item } from "./transcript";
import { useThreadChat } from "./useThreadChat";

interface Query {
  limit?: number;
  before_seq?: number;
}

/** The fake server: one thread's messages, paged as `GET /api/threads/{id}/messages` pages them. */
const server = vi.hoisted(() => ({
  messages: [] as Message[],
  queries: [] as Query[],
  runs: [] as { id: string; status: string }[],
  /** While set, reads wait for it: a read in flight. */
  gate: null as Promise<void> | null,
}));

vi.mock("../api", () => {
  class ApiError extends Error {
    status = 500;
    code = "internal";
  }
  return {
    session: { token: () => "token", expire: () => undefined },
    ApiError,
    errorMessage: (failure: unknown) => String(failure),
    unwrap: async (request: Promise<{ data: unknown }>) => (await request).data,
    api: {
      GET: async (path: string, options: { params: { query?: Query } }) => {
        await server.gate;
        if (path === "/api/threads/{id}/runs") return { data: server.runs };
        if (path !== "/api/threads/{id}/messages") throw new Error(`unexpected GET ${path}`);
        const query = options.params.query ?? {};
        server.queries.push(query);
        const before = server.messages.filter(
          (m) => query.before_seq === undefined || m.seq < query.before_seq,
        );
        return { data: query.limit === undefined ? before : before.slice(-query.limit) };
      },
    },
  };
});

const msg = (seq: number): Message => ({
  id: `m${seq}`,
  thread_id: "t1",
  seq,
  role: seq % 2 ? "user" : "assistant",
  content: `message ${seq}`,
  created_at: "2026-01-02T03:04:05Z",
});
const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => msg(from + i));

/** The persisted messages the transcript shows, by seq. */
const shownSeqs = (items: readonly Item[]) =>
  items.map((item) =>
    item.kind === "user" || item.kind === "assistant" ? Number(item.messageId?.slice(1)) : NaN,
  );

beforeEach(() => {
  server.messages = [];
  server.queries = [];
  server.runs = [];
  server.gate = null;
  window.sessionStorage.clear();
});

describe("a long conversation", () => {
  test("opens on its latest page, and reads the earlier ones when asked, before what is shown", async () => {
    server.messages = range(1, MESSAGE_PAGE + 50);
    const { result } = renderHook(() => useThreadChat("t1", () => {}));
    await waitFor(() => expect(result.current.loading).toBe(false));
    expect(server.queries).toEqual([{ limit: MESSAGE_PAGE }]);
    expect(shownSeqs(result.current.transcript.items)).toEqual(
      range(51, MESSAGE_PAGE + 50).map((m) => m.seq),
    );
    expect(result.current.hasEarlier).toBe(true);

    await act(() => result.current.loadEarlier());
    expect(server.queries.at(-1)).toEqual({ limit: MESSAGE_PAGE, before_seq: 51 });
    expect(shownSeqs(result.current.transcript.items)).toEqual(range(1, MESSAGE_PAGE + 50).map((m) => m.seq));
    // The earlier page was short: it was the start of the thread.
    expect(result.current.hasEarlier).toBe(false);
  });

  test("a short thread has nothing earlier", async () => {
    server.messages = range(1, 3);
    const { result } = renderHook(() => useThreadChat("t1", () => {}));
    await waitFor(() => expect(result.current.loading).toBe(false));
    expect(shownSeqs(result.current.transcript.items)).toEqual([1, 2, 3]);
    expect(result.current.hasEarlier).toBe(false);
  });

  test("read again, its latest page is merged in and the earlier pages read stay", async () => {
    server.messages = range(1, MESSAGE_PAGE + 50);
    const { result } = renderHook(() => useThreadChat("t1", () => {}));
    await waitFor(() => expect(result.current.loading).toBe(false));
    await act(() => result.current.loadEarlier());

    // Another client's run added two messages: the page picks them up when it adopts the run.
    server.messages = range(1, MESSAGE_PAGE + 52);
    act(() =>
      result.current.adoptRun({ id: "r9", status: "running" } as Parameters<
        typeof result.current.adoptRun
      >[0]),
    );
    await waitFor(() => expect(result.current.transcript.items).toHaveLength(MESSAGE_PAGE + 52));
    expect(server.queries.at(-1)).toEqual({ limit: MESSAGE_PAGE });
    expect(shownSeqs(result.current.transcript.items)).toEqual(range(1, MESSAGE_PAGE + 52).map((m) => m.seq));
    expect(result.current.hasEarlier).toBe(false);
  });
});

describe("a run followed while the thread is open", () => {
  afterEach(() => vi.unstubAllGlobals());

  /** The `Last-Event-ID` of each connection to the run's event stream, in order (none: 0). */
  function streamConnections() {
    const resumedAfter: number[] = [];
    vi.stubGlobal("fetch", (url: string, init: RequestInit & { headers: Record<string, string> }) => {
      expect(url).toBe("/api/runs/r1/events");
      resumedAfter.push(Number(init.headers["Last-Event-ID"] ?? 0));
      // Open until the page stops following it.
      return new Promise((_, reject) =>
        init.signal?.addEventListener("abort", () => reject(new Error("aborted"))),
      );
    });
    return resumedAfter;
  }

  test("an opened thread resumes its run where the stored point says; a read again replays it", async () => {
    server.messages = range(1, 3);
    server.runs = [{ id: "r1", status: "running" }];
    window.sessionStorage.setItem("ars.run-resume.r1", "7");
    const resumedAfter = streamConnections();
    const { result, unmount } = renderHook(() => useThreadChat("t1", () => {}));
    await waitFor(() => expect(resumedAfter).toEqual([7]));

    // Read again while following (another run is adopted): the read may have begun before
    // events this page applied and saved as its point, so the run is followed from its start.
    act(() =>
      result.current.adoptRun({ id: "r2", status: "running" } as Parameters<
        typeof result.current.adoptRun
      >[0]),
    );
    await waitFor(() => expect(resumedAfter).toEqual([7, 0]));
    unmount();
  });

  /** Opens thread `t1` with its first read held until `open()`, the run `named` meanwhile. */
  async function namedDuringTheFirstRead(named: string) {
    server.messages = range(1, 3);
    server.runs = [{ id: "r1", status: "running" }];
    let open!: () => void;
    server.gate = new Promise((resolve) => (open = resolve));
    const resumedAfter = streamConnections();
    const hook = renderHook(() => useThreadChat("t1", () => {}));
    act(() =>
      hook.result.current.adoptRun({ id: named, status: "running" } as Parameters<
        typeof hook.result.current.adoptRun
      >[0]),
    );
    open();
    await waitFor(() => expect(hook.result.current.loading).toBe(false));
    return { ...hook, resumedAfter };
  }

  test("a run the thread's stream names while the first read is in flight is not read again", async () => {
    const { resumedAfter, unmount } = await namedDuringTheFirstRead("r1");
    await waitFor(() => expect(resumedAfter).toEqual([0]));
    // Give a second read the time it would take: there is none.
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(server.queries).toHaveLength(1);
    expect(resumedAfter).toEqual([0]);
    unmount();
  });

  test("a run named during the first read that the read did not find is read again for", async () => {
    const { resumedAfter, unmount } = await namedDuringTheFirstRead("r2");
    await waitFor(() => expect(server.queries).toHaveLength(2));
    await waitFor(() => expect(resumedAfter).toEqual([0, 0]));
    unmount();
  });
});
