/**
 * The thread list, read in pages (`GET /api/threads?limit=…`): the first page at once, the
 * next ones on request (`loadMore`). Reloading reads the first page again and keeps the pages
 * loaded below it (see `refreshThreads`).
 */

import { useCallback, useEffect, useRef, useState } from "react";
import { api, unwrap } from "../api";
import type { Thread } from "../api/types";
import {
  appendThreads,
  NO_THREADS,
  nextThreadCursor,
  refreshThreads,
  THREAD_PAGE,
  type ThreadPages,
} from "./pages";

export interface ThreadCursor {
  before_updated_at: string;
  before_id: string;
}

/** Reads one page of the list: the first without a cursor, else the one after it. */
export type ReadThreadPage = (limit: number, after: ThreadCursor | null) => Promise<Thread[]>;

const readPage: ReadThreadPage = (limit, after) =>
  unwrap(api.GET("/api/threads", { params: { query: after ? { limit, ...after } : { limit } } }));

interface State {
  pages: ThreadPages;
  /** The generation of the last first-page read answered (0: none yet). */
  settled: number;
}

export function useThreadPages(read: ReadThreadPage = readPage, limit = THREAD_PAGE) {
  const [generation, setGeneration] = useState(1);
  const [state, setState] = useState<State>({ pages: NO_THREADS, settled: 0 });
  const [error, setError] = useState<unknown>(null);
  const [loadingMore, setLoadingMore] = useState(false);
  const moreBusy = useRef(false);
  // Requests read the newest reader, without re-running the effect when it is re-created.
  const reader = useRef(read);
  useEffect(() => {
    reader.current = read;
  });
  // Where the next page starts, as the list stands when `loadMore` is called.
  const pages = useRef(state.pages);
  useEffect(() => {
    pages.current = state.pages;
  });

  useEffect(() => {
    let live = true;
    reader
      .current(limit, null)
      .then((first) => {
        if (!live) return;
        setState((old) => ({ pages: refreshThreads(old.pages, first, limit), settled: generation }));
        setError(null);
      })
      .catch((failure: unknown) => {
        if (!live) return;
        setState((old) => ({ ...old, settled: generation }));
        setError(failure);
      });
    return () => {
      live = false;
    };
  }, [generation, limit]);

  /** Reads the first page again (the list's order follows activity), keeping the others. */
  const reload = useCallback(() => setGeneration((g) => g + 1), []);

  /** Reads the page after the last thread listed, if the server has more. */
  const loadMore = useCallback(() => {
    const after = nextThreadCursor(pages.current);
    if (moreBusy.current || !pages.current.more || !after) return;
    moreBusy.current = true;
    setLoadingMore(true);
    reader
      .current(limit, after)
      .then((page) => {
        setState((old) => ({ ...old, pages: appendThreads(old.pages, page, limit) }));
        setError(null);
      })
      .catch((failure: unknown) => setError(failure))
      .finally(() => {
        moreBusy.current = false;
        setLoadingMore(false);
      });
  }, [limit]);

  /** Changes the list locally (after a write that answered the new value). */
  const update = useCallback(
    (change: (threads: readonly Thread[]) => readonly Thread[]) =>
      setState((old) => ({ ...old, pages: { ...old.pages, threads: change(old.pages.threads) } })),
    [],
  );

  return {
    threads: state.pages.threads,
    /** The server has threads after the last one listed. */
    more: state.pages.more,
    /** The first page has been answered at least once. */
    loaded: state.settled > 0,
    /** A first-page read is on its way. */
    loading: state.settled !== generation,
    loadingMore,
    error,
    reload,
    loadMore,
    update,
  };
}
