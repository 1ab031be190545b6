/**
 * The thread's subagent runs, live: the thread's event stream (`GET /api/threads/{id}/events`)
 * sends a snapshot, then every change of a child run and each completion notice as it is
 * committed. No polling: a dropped stream reconnects and starts again from a snapshot.
 */

import { useEffect, useEffectEvent, useState } from "react";
import { session } from "../api";
import type { Message, RunDetail, SubagentRun } from "../api/types";
import { followThread } from "../sse/followThread";

interface Snapshot {
  subagents: SubagentRun[];
  active_run?: RunDetail | null;
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
  const [shownThread, setShownThread] = useState(threadId);
  if (shownThread !== threadId) {
    setShownThread(threadId);
    setEntries([]);
  }
  const onMessage = useEffectEvent((event: string, data: unknown) => {
    switch (event) {
      case "snapshot":
        setEntries((data as Snapshot).subagents);
        if ((data as Snapshot).active_run) listeners.onRun?.((data as Snapshot).active_run!);
        break;
      case "subagent":
        setEntries((old) => upsert(old, data as SubagentRun));
        break;
      case "notice":
        setEntries((old) => upsert(old, (data as Notice).subagent));
        listeners.onNotice?.((data as Notice).message);
        break;
      case "run":
        listeners.onRun?.(data as RunDetail);
        break;
    }
  });

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

  return entries;
}
