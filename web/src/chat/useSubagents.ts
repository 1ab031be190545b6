/**
 * The thread's subagent runs (`GET /api/threads/{id}/subagents`): loaded with the thread,
 * refreshed when the parent run reports tool activity, and polled about every second while
 * the parent or any child is active.
 */

import { useCallback, useEffect, useLayoutEffect, useRef, useState } from "react";
import { api, unwrap } from "../api";
import { isTerminalStatus } from "../api/events";
import type { SubagentRun } from "../api/types";

const POLL_MS = 1000;

export function useSubagents(threadId: string | undefined, parentActive: boolean, activity: number) {
  const [entries, setEntries] = useState<SubagentRun[]>([]);
  const [shownThread, setShownThread] = useState(threadId);
  if (shownThread !== threadId) {
    setShownThread(threadId);
    setEntries([]);
  }
  const thread = useRef(threadId);
  useLayoutEffect(() => {
    thread.current = threadId;
  });
  /** One request at a time; a refresh asked for meanwhile runs right after it. */
  const inFlight = useRef(false);
  const again = useRef(false);

  const refresh = useCallback(async () => {
    if (inFlight.current) {
      again.current = true;
      return;
    }
    inFlight.current = true;
    try {
      do {
        again.current = false;
        const id = thread.current;
        if (!id) break;
        const list = await unwrap(api.GET("/api/threads/{id}/subagents", { params: { path: { id } } })).catch(
          () => null,
        );
        // On failure the panel keeps its last list; the chat shows the errors that matter.
        if (list && thread.current === id) setEntries(list);
      } while (again.current);
    } finally {
      inFlight.current = false;
    }
  }, []);

  useEffect(() => {
    void refresh();
  }, [threadId, refresh]);

  useEffect(() => {
    if (activity > 0) void refresh();
  }, [activity, refresh]);

  const childActive = entries.some((e) => !isTerminalStatus(e.status));
  useEffect(() => {
    if (!parentActive && !childActive) return;
    const timer = setInterval(() => void refresh(), POLL_MS);
    return () => clearInterval(timer);
  }, [parentActive, childActive, refresh]);

  return entries;
}
