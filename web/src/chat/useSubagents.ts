/**
 * The thread's subagent runs and what its runs wait on, live: the thread's event stream
 * (`GET /api/threads/{id}/events`) sends a snapshot, then every change of a child run, each
 * completion notice as it is committed, and each request for (and resolution of) decisions,
 * for the thread's own runs and its subagents'. No polling: a dropped stream reconnects and
 * starts again from a snapshot.
 */

import { useCallback, useEffect, useEffectEvent, useState } from "react";
import { session } from "../api";
import { isTerminalStatus } from "../api/events";
import type { Message, PendingItem, RunDetail, SubagentRun } from "../api/types";
import { followThread } from "../sse/followThread";
import { groupPending, withRequested, withResolved, type PendingGroup } from "./pending";

interface Snapshot {
  subagents: SubagentRun[];
  active_run?: RunDetail | null;
  pending?: PendingItem[];
}

interface ApprovalRequested {
  run_id: string;
  items: PendingItem[];
}

interface ApprovalResolved {
  run_id: string;
  call_ids: string[];
}

interface Notice {
  message: Message;
  subagent: SubagentRun;
}

export interface ThreadListeners {
  /** A completion notice was committed to the thread. */
  onNotice?: (message: Message) => void;
  /** A run on the thread was created, changed or ended (another tab may have started it). */
  onRun?: (run: RunDetail) => void;
}

/** Replaces an entry by run id, or appends it; entries stay oldest first. */
function upsert(entries: readonly SubagentRun[], entry: SubagentRun): SubagentRun[] {
  const at = entries.findIndex((e) => e.run_id === entry.run_id);
  if (at === -1) return [...entries, entry];
  return entries.map((e, i) => (i === at ? entry : e));
}

export function useSubagents(threadId: string | undefined, listeners: ThreadListeners = {}) {
  const [entries, setEntries] = useState<SubagentRun[]>([]);
  const [pending, setPending] = useState<PendingGroup[]>([]);
  const [shownThread, setShownThread] = useState(threadId);
  if (shownThread !== threadId) {
    setShownThread(threadId);
    setEntries([]);
    setPending([]);
  }
  const onMessage = useEffectEvent((event: string, data: unknown) => {
    switch (event) {
      case "snapshot":
        setEntries((data as Snapshot).subagents);
        setPending(groupPending((data as Snapshot).pending ?? []));
        if ((data as Snapshot).active_run) listeners.onRun?.((data as Snapshot).active_run!);
        break;
      case "subagent": {
        const entry = data as SubagentRun;
        setEntries((old) => upsert(old, entry));
        // A run that ended (cancelled while it waited, say) waits on nothing any more.
        if (isTerminalStatus(entry.status)) setPending((old) => withResolved(old, entry.run_id));
        break;
      }
      case "notice":
        setEntries((old) => upsert(old, (data as Notice).subagent));
        listeners.onNotice?.((data as Notice).message);
        break;
      case "run": {
        const run = data as RunDetail;
        if (isTerminalStatus(run.status)) setPending((old) => withResolved(old, run.id));
        listeners.onRun?.(run);
        break;
      }
      case "approval_requested": {
        const { run_id, items } = data as ApprovalRequested;
        setPending((old) => withRequested(old, run_id, items));
        break;
      }
      case "approval_resolved": {
        const { run_id, call_ids } = data as ApprovalResolved;
        setPending((old) => withResolved(old, run_id, call_ids));
        break;
      }
    }
  });

  /**
   * Decisions on `callIds` of a run were accepted: their card goes before the stream says so
   * (only those items: the resumed run may already have asked again).
   */
  const resolved = useCallback(
    (runId: string, callIds: readonly string[]) => setPending((old) => withResolved(old, runId, callIds)),
    [],
  );

  useEffect(() => {
    if (!threadId) return;
    const controller = new AbortController();
    void followThread({
      threadId,
      token: () => session.token(),
      signal: controller.signal,
      onMessage: (event, data) => onMessage(event, data),
    }).then((end) => end === "unauthorized" && session.expire());
    return () => controller.abort();
  }, [threadId]);

  return { entries, pending, resolved };
}
