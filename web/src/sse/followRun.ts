/**
 * Follows one run's event stream (`GET /api/runs/{id}/events`) over `fetch`, because
 * `EventSource` cannot send an `Authorization` header.
 *
 * A dropped connection is reopened with `Last-Event-ID` after a capped exponential back-off,
 * until the run's terminal `run_status` arrives; events at or below the last delivered id are
 * dropped, so a resumed stream never delivers one twice. `410 Gone` (events no longer kept,
 * also as an in-stream `stream_error`) ends the stream with `"gone"`: the caller then reads
 * the persisted messages instead.
 */

import { isTerminalStatus, type RunEvent } from "../api/events";
import { SseParser } from "./parser";

/** How a followed stream ended. */
export type StreamEnd = "terminal" | "gone" | "aborted" | "unauthorized" | "not_found";

export interface Backoff {
  initialMs: number;
  maxMs: number;
}

export const DEFAULT_BACKOFF: Backoff = { initialMs: 500, maxMs: 10_000 };

export interface FollowRunOptions {
  runId: string;
  /** Deliver only events after this id (a resume point); 0 for the whole run. */
  after: number;
  /** The bearer token, read at every (re)connection. */
  token: () => string | null;
  onEvent: (event: RunEvent) => void;
  signal: AbortSignal;
  fetch?: typeof fetch;
  backoff?: Backoff;
  /** Waits between reconnections; injectable so tests need not wait. */
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

/** Resolves after `ms`, or at once when `signal` aborts. */
export function abortableSleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** The delay before reconnection attempt `attempt` (0-based): doubling, capped at `maxMs`. */
export function backoffDelay(backoff: Backoff, attempt: number): number {
  return Math.min(backoff.maxMs, backoff.initialMs * 2 ** Math.min(attempt, 20));
}

type Outcome = { end: StreamEnd } | { retry: true };

/** Follows the run until its terminal event (or gone, unauthorized, aborted). */
export async function followRun(options: FollowRunOptions): Promise<StreamEnd> {
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  const sleep = options.sleep ?? abortableSleep;
  const { signal } = options;
  let lastId = options.after;
  let failures = 0;
  /** The server's `retry:` advice, which replaces the initial back-off delay. */
  let retryMs: number | undefined;

  while (!signal.aborted) {
    const before = lastId;
    const outcome = await connectOnce();
    if ("end" in outcome) return outcome.end;
    if (signal.aborted) break;
    // Progress resets the back-off: only consecutive empty attempts grow it.
    failures = lastId > before ? 0 : failures + 1;
    const base = retryMs === undefined ? backoff : { ...backoff, initialMs: retryMs };
    await sleep(backoffDelay(base, Math.max(0, failures - 1)), signal);
  }
  return "aborted";

  async function connectOnce(): Promise<Outcome> {
    const headers: Record<string, string> = { Accept: "text/event-stream" };
    const token = options.token();
    if (token) headers.Authorization = `Bearer ${token}`;
    if (lastId > 0) headers["Last-Event-ID"] = String(lastId);
    let response: Response;
    try {
      response = await fetchImpl(`/api/runs/${encodeURIComponent(options.runId)}/events`, {
        headers,
        signal,
        cache: "no-store",
      });
    } catch {
      return signal.aborted ? { end: "aborted" } : { retry: true };
    }
    switch (response.status) {
      case 200:
        break;
      case 401:
        return { end: "unauthorized" };
      case 404:
        return { end: "not_found" };
      case 410:
        return { end: "gone" };
      default:
        return { retry: true };
    }
    if (!response.body) return { retry: true };

    const parser = new SseParser();
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return { retry: true };
        const messages = parser.push(value);
        retryMs = parser.retryMs ?? retryMs;
        for (const message of messages) {
          const end = deliver(message.event, message.data);
          if (end) return { end };
        }
      }
    } catch {
      return signal.aborted ? { end: "aborted" } : { retry: true };
    } finally {
      reader.cancel().catch(() => undefined);
    }
  }

  /** Handles one SSE message; returns how the stream ends when it does. */
  function deliver(event: string, data: string): StreamEnd | null {
    if (event === "stream_error") {
      // `gone` and anything else alike: the stream cannot go on; read the persisted state.
      return "gone";
    }
    let parsed: RunEvent;
    try {
      parsed = JSON.parse(data) as RunEvent;
    } catch {
      return null;
    }
    if (typeof parsed.id !== "number" || parsed.id <= lastId) return null;
    lastId = parsed.id;
    options.onEvent(parsed);
    if (parsed.type === "run_status" && isTerminalStatus(parsed.status)) return "terminal";
    return null;
  }
}
