import { describe, expect, test, vi } from "vitest";
import type { RunEvent } from "../api/events";
import { backoffDelay, followRun } from "./followRun";

function wire(id: number, kind: Record<string, unknown>): string {
  const event = { id, run_id: "r1", thread_id: "t1", at: "2026-01-01T00:00:00Z", ...kind };
  return `event: ${String(kind.type)}\nid: ${id}\ndata: ${JSON.stringify(event)}\n\n`;
}
const delta = (id: number, text: string) => wire(id, { type: "message_delta", text });
const status = (id: number, s: string) => wire(id, { type: "run_status", status: s });

/** A streaming response that sends `chunks`, then ends (or fails, when `fail` is set). */
function stream(chunks: string[], fail = false): Response {
  const encoder = new TextEncoder();
  const pending = [...chunks];
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const chunk = pending.shift();
      if (chunk !== undefined) controller.enqueue(encoder.encode(chunk));
      else if (fail) controller.error(new TypeError("network error"));
      else controller.close();
    },
  });
  return new Response(body, { status: 200, headers: { "Content-Type": "text/event-stream" } });
}

function follow(answers: Response[], after = 0) {
  const events: RunEvent[] = [];
  const headers: Array<Record<string, string>> = [];
  const sleeps: number[] = [];
  const fetch = vi.fn(async (_url: string, init?: RequestInit) => {
    headers.push({ ...(init?.headers as Record<string, string>) });
    const next = answers.shift();
    if (!next) throw new TypeError("no more answers");
    return next;
  });
  const controller = new AbortController();
  const done = followRun({
    runId: "r1",
    after,
    token: () => "tok",
    onEvent: (event) => events.push(event),
    signal: controller.signal,
    fetch: fetch as unknown as typeof globalThis.fetch,
    backoff: { initialMs: 100, maxMs: 400 },
    sleep: async (ms) => {
      sleeps.push(ms);
      if (sleeps.length > 20) controller.abort();
    },
  });
  return { done, events, headers, sleeps, fetch };
}

describe("run event stream", () => {
  test("stops at the terminal run_status without reconnecting", async () => {
    const run = follow([stream([status(1, "running"), delta(2, "hi"), status(3, "success")])]);
    await expect(run.done).resolves.toBe("terminal");
    expect(run.events.map((e) => e.id)).toEqual([1, 2, 3]);
    expect(run.fetch).toHaveBeenCalledOnce();
    expect(run.headers[0]!.Authorization).toBe("Bearer tok");
  });

  test("reconnects after a dropped connection sending Last-Event-ID", async () => {
    const run = follow([
      stream([status(1, "running"), delta(2, "a")], true),
      stream([delta(3, "b"), status(4, "success")]),
    ]);
    await expect(run.done).resolves.toBe("terminal");
    expect(run.headers[0]!["Last-Event-ID"]).toBeUndefined();
    expect(run.headers[1]!["Last-Event-ID"]).toBe("2");
  });

  test("resumes without duplicates when the server replays overlapping events", async () => {
    const run = follow([
      stream([status(1, "running"), delta(2, "a")]),
      stream([delta(2, "a"), delta(3, "b"), status(4, "success")]),
    ]);
    await run.done;
    expect(run.events.map((e) => e.id)).toEqual([1, 2, 3, 4]);
  });

  test("starts from a resume point and sends it as Last-Event-ID", async () => {
    const run = follow([stream([delta(6, "x"), status(7, "cancelled")])], 5);
    await expect(run.done).resolves.toBe("terminal");
    expect(run.headers[0]!["Last-Event-ID"]).toBe("5");
    expect(run.events.map((e) => e.id)).toEqual([6, 7]);
  });

  test("backs off with capped doubling delays while reconnecting fails", async () => {
    const run = follow([
      stream([status(1, "running")], true),
      new Response("unavailable", { status: 503 }),
      new Response("unavailable", { status: 503 }),
      new Response("unavailable", { status: 503 }),
      new Response("unavailable", { status: 503 }),
      stream([status(2, "success")]),
    ]);
    await expect(run.done).resolves.toBe("terminal");
    expect(run.sleeps).toEqual([100, 100, 200, 400, 400]);
  });

  test("410 Gone ends the stream as gone, without retrying", async () => {
    const run = follow([new Response("{}", { status: 410 })]);
    await expect(run.done).resolves.toBe("gone");
    expect(run.fetch).toHaveBeenCalledOnce();
  });

  test("an in-stream stream_error ends the stream as gone", async () => {
    const run = follow([
      stream([delta(1, "a"), 'event: stream_error\ndata: {"error":{"code":"gone","message":"x"}}\n\n']),
    ]);
    await expect(run.done).resolves.toBe("gone");
    expect(run.events).toHaveLength(1);
  });

  test("401 ends the stream as unauthorized", async () => {
    const run = follow([new Response("{}", { status: 401 })]);
    await expect(run.done).resolves.toBe("unauthorized");
  });

  test("backoffDelay doubles from the initial delay up to the cap", () => {
    const backoff = { initialMs: 500, maxMs: 10_000 };
    expect([0, 1, 2, 3, 4, 5, 50].map((n) => backoffDelay(backoff, n))).toEqual([
      500, 1000, 2000, 4000, 8000, 10_000, 10_000,
    ]);
  });
});

test("a retry field from the server replaces the initial back-off delay", async () => {
  const run = follow([
    stream(["retry: 250\n\n", status(1, "running")], true),
    new Response("unavailable", { status: 503 }),
    stream([status(2, "success")]),
  ]);
  await run.done;
  expect(run.sleeps).toEqual([250, 250]);
});
