/**
 * The thread's subagent runs (`GET /api/threads/{id}/subagents`): loaded with the thread,
 * refreshed when the parent run reports tool activity, and polled about every second while
 * the parent or any child is active.
 */

import { useCallback, useEffect, useRef, useState } from "react";
import { api, unwrap } from "../api";
import { isTerminalStatus } from "../api/events";
import type { SubagentRun } from "../api/types";

const POLL_MS = 1000;

export function useSubagents(threadId: string | undefined, parentActive: boolean, activity: number) {
  const [entries, setEntries] = useState<SubagentRun[]>([]);
  const inFlight = useRef(false);

  const refresh = useCallback(async () => {
    if (!threadId || inFlight.current) return;
    inFlight.current = true;
    try {
      const list = await unwrap(api.GET("/api/threads/{id}/subagents", { params: { path: { id: threadId } } }));
      setEntries(list);
    } catch {
      // The panel keeps its last list; the chat shows errors that matter.
    } finally {
      inFlight.current = false;
    }
  }, [threadId]);

  useEffect(() => {
    setEntries([]);
    void refresh();
  }, [refresh]);

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
