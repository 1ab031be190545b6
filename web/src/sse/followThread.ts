/**
 * Follows a thread's event stream (`GET /api/threads/{id}/events`). Every connection starts
 * with a `snapshot`, so a dropped one is simply reopened (see {@link followStream}).
 */

import { followStream, type FollowedStreamEnd } from "./followStream";
import type { Backoff } from "./followRun";

export type ThreadStreamEnd = FollowedStreamEnd;

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

export function followThread({ threadId, ...options }: FollowThreadOptions): Promise<ThreadStreamEnd> {
  return followStream({ ...options, path: `/api/threads/${encodeURIComponent(threadId)}/events` });
}
