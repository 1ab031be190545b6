/**
 * Follows a thread's event stream (`GET /api/threads/{id}/events`) over `fetch` (an
 * `EventSource` cannot send the bearer token). Every connection starts with a `snapshot`, so a
 * dropped one is simply reopened after a capped back-off, until aborted; `401` and `404` end it.
 */

import { abortableSleep, backoffDelay, DEFAULT_BACKOFF, type Backoff } from "./followRun";
import { SseParser } from "./parser";

export type ThreadStreamEnd = "aborted" | "unauthorized" | "not_found";

export interface FollowThreadOptions {
  threadId: string;
  token: () => string | null;
  /** One message: its `event:` name and its parsed `data:` JSON. */
  onMessage: (event: string, data: unknown) => void;
  signal: AbortSignal;
  fetch?: typeof fetch;
  backoff?: Backoff;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

export async function followThread(options: FollowThreadOptions): Promise<ThreadStreamEnd> {
  const fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  const backoff = options.backoff ?? DEFAULT_BACKOFF;
  const sleep = options.sleep ?? abortableSleep;
  const { signal } = options;
  let failures = 0;

  while (!signal.aborted) {
    const outcome = await connectOnce();
    if (outcome === "unauthorized" || outcome === "not_found") return outcome;
    if (signal.aborted) break;
    // A connection that delivered something resets the back-off.
    failures = outcome === "delivered" ? 0 : failures + 1;
    await sleep(backoffDelay(backoff, Math.max(0, failures - 1)), signal);
  }
  return "aborted";

  async function connectOnce(): Promise<"unauthorized" | "not_found" | "delivered" | "failed"> {
    const headers: Record<string, string> = { Accept: "text/event-stream" };
    const token = options.token();
    if (token) headers.Authorization = `Bearer ${token}`;
    let response: Response;
    try {
      response = await fetchImpl(`/api/threads/${encodeURIComponent(options.threadId)}/events`, {
        headers,
        signal,
        cache: "no-store",
      });
    } catch {
      return "failed";
    }
    if (response.status === 401) return "unauthorized";
    if (response.status === 404) return "not_found";
    if (response.status !== 200 || !response.body) return "failed";
    const parser = new SseParser();
    const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
    let delivered = false;
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) break;
        for (const message of parser.push(value)) {
          if (message.event === "stream_error") return delivered ? "delivered" : "failed";
          let data: unknown;
          try {
            data = JSON.parse(message.data);
          } catch {
            continue;
          }
          delivered = true;
          options.onMessage(message.event, data);
        }
      }
    } catch {
      // Dropped: reconnect (a fresh snapshot follows).
    } finally {
      reader.cancel().catch(() => undefined);
    }
    return delivered ? "delivered" : "failed";
  }
}
