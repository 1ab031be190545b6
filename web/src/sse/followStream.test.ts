import { describe, expect, test, vi } from "vitest";
import { followStream } from "./followStream";

/** A streaming response that sends `chunks`, then ends. */
function stream(chunks: string[]): Response {
  const encoder = new TextEncoder();
  const pending = [...chunks];
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = pending.shift();
      if (chunk !== undefined) controller.enqueue(encoder.encode(chunk));
      else controller.close();
    },
  });
  return new Response(body, { status: 200, headers: { "Content-Type": "text/event-stream" } });
}

const doc = (id: string, status: string) => `event: document\ndata: ${JSON.stringify({ id, status })}\n\n`;

function follow(answers: Array<Response | Error>) {
  const seen: string[] = [];
  const urls: string[] = [];
  const controller = new AbortController();
  const fetch = vi.fn(async (url: string, init?: RequestInit) => {
    urls.push(url);
    expect((init?.headers as Record<string, string>).Authorization).toBe("Bearer tok");
    const next = answers.shift();
    if (!next) {
      controller.abort();
      throw new DOMException("aborted", "AbortError");
    }
    if (next instanceof Error) throw next;
    return next;
  });
  const done = followStream({
    path: "/api/knowledge-bases/kb1/events",
    token: () => "tok",
    onOpen: () => seen.push("open"),
    onMessage: (event, data) => seen.push(`${event}:${JSON.stringify(data)}`),
    signal: controller.signal,
    fetch: fetch as unknown as typeof globalThis.fetch,
    sleep: async () => undefined,
  });
  return { done, seen, urls };
}

describe("a stream without snapshots", () => {
  test("tells each (re)connection before its events, and reconnects after a drop", async () => {
    const run = follow([
      stream([doc("a", "processing"), 'event: removed\ndata: {"id":"b"}\n\n']),
      new TypeError("network down"),
      stream([doc("a", "ready")]),
    ]);
    await expect(run.done).resolves.toBe("aborted");
    expect(run.seen).toEqual([
      "open",
      'document:{"id":"a","status":"processing"}',
      'removed:{"id":"b"}',
      "open",
      'document:{"id":"a","status":"ready"}',
    ]);
    expect(run.urls.every((u) => u === "/api/knowledge-bases/kb1/events")).toBe(true);
  });

  test("a refused token or a missing stream ends it, without opening", async () => {
    const refused = follow([new Response("", { status: 401 })]);
    await expect(refused.done).resolves.toBe("unauthorized");
    const missing = follow([new Response("", { status: 404 })]);
    await expect(missing.done).resolves.toBe("not_found");
    expect([...refused.seen, ...missing.seen]).toEqual([]);
  });
});
