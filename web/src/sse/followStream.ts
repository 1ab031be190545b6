/**
 * Follows an event stream that starts afresh on every connection (a thread's, a knowledge
 * base's) over `fetch` (an `EventSource` cannot send the bearer token). A dropped connection is
 * simply reopened after a capped back-off, until aborted; `401` and `404` end it. `onOpen`
 * tells each (re)connection, so a stream that sends no snapshot lets its caller read the state
 * it may have missed.
 */

import { abortableSleep, backoffDelay, DEFAULT_BACKOFF, type Backoff } from "./followRun";
import { SseParser } from "./parser";

export type FollowedStreamEnd = "aborted" | "unauthorized" | "not_found";

export interface FollowStreamOptions {
  /** The `/api/...` path of the stream. */
  path: string;
  token: () => string | null;
  /** One message: its `event:` name and its parsed `data:` JSON. */
  onMessage: (event: string, data: unknown) => void;
  /** The stream is open (again): events from now on arrive. */
  onOpen?: () => void;
  signal: AbortSignal;
  fetch?: typeof fetch;
  backoff?: Backoff;
  sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
}

export async function followStream(options: FollowStreamOptions): Promise<FollowedStreamEnd> {
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
      response = await fetchImpl(options.path, { headers, signal, cache: "no-store" });
    } catch {
      return "failed";
    }
    if (response.status === 401) return "unauthorized";
    if (response.status === 404) return "not_found";
    if (response.status !== 200 || !response.body) return "failed";
    options.onOpen?.();
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
      // Dropped: reconnect.
    } finally {
      reader.cancel().catch(() => undefined);
    }
    return delivered ? "delivered" : "failed";
  }
}
