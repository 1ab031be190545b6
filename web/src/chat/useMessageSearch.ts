/** The thread search's message half: debounced, cancelled when stale, one answer per query. */

import { useEffect, useState } from "react";
import { checkQuery, searchMessages, type MessageHit } from "./messageSearch";

/** How long typing must pause before the query is sent. */
export const SEARCH_DELAY_MS = 250;

export type MessageSearch =
  /** Nothing to search for yet (fewer than two characters). */
  | { status: "off" }
  /** Longer than the server takes. */
  | { status: "tooLong" }
  | { status: "loading"; text: string }
  | { status: "done"; text: string; hits: MessageHit[] }
  | { status: "failed"; text: string; error: unknown };

/** An answer, and the query text it answers. */
interface Settled {
  text: string;
  hits: MessageHit[] | null;
  error: unknown;
}

type Search = (text: string, signal: AbortSignal) => Promise<MessageHit[]>;

/**
 * The messages holding `query`, searched once typing pauses ({@link SEARCH_DELAY_MS}). A newer
 * query cancels the request of an older one, and an answer is only ever shown for the query it
 * answers, so a slow stale answer never replaces a newer one.
 */
export function useMessageSearch(query: string, search: Search = searchMessages): MessageSearch {
  const check = checkQuery(query);
  const text = check.kind === "ok" ? check.text : null;
  const [settled, setSettled] = useState<Settled | null>(null);

  useEffect(() => {
    if (text === null) return;
    const controller = new AbortController();
    const timer = setTimeout(() => {
      search(text, controller.signal).then(
        (hits) => !controller.signal.aborted && setSettled({ text, hits, error: null }),
        (error: unknown) => !controller.signal.aborted && setSettled({ text, hits: null, error }),
      );
    }, SEARCH_DELAY_MS);
    return () => {
      clearTimeout(timer);
      controller.abort();
    };
  }, [text, search]);

  if (check.kind === "short") return { status: "off" };
  if (check.kind === "long") return { status: "tooLong" };
  if (settled?.text !== check.text) return { status: "loading", text: check.text };
  return settled.hits
    ? { status: "done", text: settled.text, hits: settled.hits }
    : { status: "failed", text: settled.text, error: settled.error };
}
