/**
 * Paging through long histories: the thread list (`GET /api/threads?limit=…`, keyset pages of
 * the most recently updated threads) and a thread's messages (`GET /api/threads/{id}/messages
 * ?limit=…&before_seq=…`, pages read from the conversation's end backwards). Only the merging
 * lives here, free of requests, so it can be tested on its own.
 */

import type { Message, Thread } from "../api/types";
import { fromMessages, type Item, type Transcript } from "./transcript";

/** Threads asked for per page of the list. */
export const THREAD_PAGE = 100;
/** Messages asked for per page of a conversation. */
export const MESSAGE_PAGE = 200;

/**
 * The server's order of the list: most recently updated first, then by id (descending), as
 * `ORDER BY updated_at DESC, id DESC`. Negative when `a` comes first.
 */
export function compareThreads(a: Thread, b: Thread): number {
  const at = Date.parse(a.updated_at);
  const bt = Date.parse(b.updated_at);
  if (at !== bt && !Number.isNaN(at) && !Number.isNaN(bt)) return bt - at;
  // The same millisecond: the text tells finer digits apart (the server writes them alike).
  if (a.updated_at !== b.updated_at) return a.updated_at < b.updated_at ? 1 : -1;
  return a.id === b.id ? 0 : a.id < b.id ? 1 : -1;
}

/** The threads of every list, each once (by id: the most recently updated copy), in order. */
export function mergeThreads(...lists: readonly (readonly Thread[])[]): Thread[] {
  const byId = new Map<string, Thread>();
  for (const list of lists) {
    for (const thread of list) {
      const old = byId.get(thread.id);
      // A later list is the fresher answer: it wins unless it is older than what is known.
      if (!old || compareThreads(thread, old) <= 0) byId.set(thread.id, thread);
    }
  }
  return [...byId.values()].sort(compareThreads);
}

/** The thread list as far as it is loaded, and whether the server has more after it. */
export interface ThreadPages {
  threads: readonly Thread[];
  more: boolean;
}

export const NO_THREADS: ThreadPages = { threads: [], more: false };

/**
 * The list after its first page was read again (`first`, `limit` asked for), keeping the
 * pages loaded further down: a thread of `first` replaces its old copy (one that moved to the
 * top is not listed twice); an old thread that should have been on the first page but is not
 * (deleted meanwhile) goes. A short first page is the whole list.
 */
export function refreshThreads(loaded: ThreadPages, first: readonly Thread[], limit: number): ThreadPages {
  if (first.length < limit) return { threads: mergeThreads(first), more: false };
  const boundary = first.reduce((last, thread) => (compareThreads(thread, last) > 0 ? thread : last));
  const fresh = new Set(first.map((thread) => thread.id));
  const below = loaded.threads.filter(
    (thread) => !fresh.has(thread.id) && compareThreads(thread, boundary) > 0,
  );
  return { threads: mergeThreads(below, first), more: below.length > 0 ? loaded.more : true };
}

/** The list with the next page (`page`, `limit` asked for) added at its end. */
export function appendThreads(loaded: ThreadPages, page: readonly Thread[], limit: number): ThreadPages {
  return { threads: mergeThreads(loaded.threads, page), more: page.length >= limit };
}

/** Where the next page of the list starts: after its last thread. */
export function nextThreadCursor(
  loaded: ThreadPages,
): { before_updated_at: string; before_id: string } | null {
  const last = loaded.threads.at(-1);
  return last ? { before_updated_at: last.updated_at, before_id: last.id } : null;
}

/** A conversation's messages as far as they are loaded (in seq order), and whether earlier ones may exist. */
export interface MessagePages {
  messages: readonly Message[];
  more: boolean;
}

export const NO_MESSAGES: MessagePages = { messages: [], more: false };

const bySeq = (a: Message, b: Message) => a.seq - b.seq;

/** The conversation's latest page (`limit` asked for): a full page may have earlier ones. */
export function latestMessages(page: readonly Message[], limit: number): MessagePages {
  return { messages: [...page].sort(bySeq), more: page.length >= limit };
}

/** The page before the first message shown, put before it. */
export function prependMessages(loaded: MessagePages, page: readonly Message[], limit: number): MessagePages {
  const first = loaded.messages[0]?.seq ?? Infinity;
  const known = new Set(loaded.messages.map((m) => m.id));
  const earlier = page.filter((m) => m.seq < first && !known.has(m.id)).sort(bySeq);
  return { messages: [...earlier, ...loaded.messages], more: page.length >= limit };
}

/**
 * The loaded messages after the latest page (`limit` asked for) was read again: from the
 * page's first seq on, the page is the history (a message there with the same seq is replaced,
 * one no longer there is gone: a later run replaced it); the pages loaded before it stay. A
 * page that does not reach back to the loaded messages (more than a page was added since) or
 * a short page (the whole history) stands alone.
 */
export function mergeLatestMessages(
  loaded: MessagePages,
  page: readonly Message[],
  limit: number,
): MessagePages {
  const latest = latestMessages(page, limit);
  const from = latest.messages[0]?.seq;
  const lastLoaded = loaded.messages.at(-1)?.seq;
  if (!latest.more || from === undefined || lastLoaded === undefined || from > lastLoaded) return latest;
  const kept = loaded.messages.filter((m) => m.seq < from);
  return { messages: [...kept, ...latest.messages], more: kept.length > 0 ? loaded.more : true };
}

/**
 * The transcript with the messages of an earlier page put before what it shows (live items
 * included). A tool call whose result was on the later page is shown once, where the call is,
 * with that result.
 */
export function prependTranscript(transcript: Transcript, earlier: readonly Message[]): Transcript {
  const fresh = earlier.filter((m) => !transcript.seen.has(m.id));
  if (fresh.length === 0) return transcript;
  const head = fromMessages(fresh);
  const later = new Map(transcript.items.map((item) => [item.key, item]));
  const items: Item[] = head.items.map((item) => {
    const result = later.get(item.key);
    if (item.kind !== "tool" || result?.kind !== "tool" || !result.done) return item;
    return {
      ...item,
      result: result.result,
      isError: result.isError,
      done: true,
      interrupted: result.interrupted,
    };
  });
  const keys = new Set(items.map((item) => item.key));
  return {
    items: [...items, ...transcript.items.filter((item) => !keys.has(item.key))],
    seen: new Set([...fresh.map((m) => m.id), ...transcript.seen]),
  };
}
