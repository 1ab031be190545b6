/**
 * One thread's conversation: its persisted messages, its latest run, and the live stream of
 * an active run (re-attached after a reload), plus sending, steering and stopping.
 */

import { useCallback, useEffect, useLayoutEffect, useRef, useState } from "react";
import { api, ApiError, errorMessage, unwrap } from "../api";
import { runErrorDetail, runErrorMessage, type RunEnd } from "../api/errors";
import { isTerminalStatus, type RunEvent } from "../api/events";
import type { RunStatus, Usage } from "../api/types";
import i18n from "../i18n";
import { loadResumePoint } from "../sse/resume";
import type { Message, RunDetail } from "../api/types";
import {
  MESSAGE_PAGE,
  mergeLatestMessages,
  NO_MESSAGES,
  prependMessages,
  prependTranscript,
  type MessagePages,
} from "./pages";
import { addCommitted, addUserInput, lastAssistantSeq, truncateAtLastUser } from "./transcript";
import { useRunFollower } from "./useRunFollower";

export interface RunState {
  id: string;
  status: RunStatus;
}

/** The tokens of the thread's latest run: its own, and with its subagents' once it ended. */
export interface RunUsage {
  runId: string;
  own: Usage;
  total: Usage | null;
}

/** Events after which the subagent list may have changed. */
const ACTIVITY = new Set<RunEvent["type"]>(["tool_call_started", "tool_call_finished", "run_status"]);

async function loadThread(threadId: string) {
  const path = { params: { path: { id: threadId } } };
  // Runs first, messages after: a run that ends between the two reads has then committed its
  // answer before the messages are read (read the other way round, the page would show the run
  // as finished without its answer). A run still active is followed, and the messages the
  // stream repeats are skipped by id.
  const runs = await unwrap(api.GET("/api/threads/{id}/runs", path));
  // The conversation's latest page only: earlier ones are read when asked for.
  const messages = await readMessages(threadId);
  return { messages, latest: runs.at(-1) ?? null };
}

/** One page of a thread's messages: the last ones, or the last ones before `beforeSeq`. */
function readMessages(threadId: string, beforeSeq?: number) {
  const query =
    beforeSeq === undefined ? { limit: MESSAGE_PAGE } : { limit: MESSAGE_PAGE, before_seq: beforeSeq };
  return unwrap(api.GET("/api/threads/{id}/messages", { params: { path: { id: threadId }, query } }));
}

/** The id of the thread's last user message, read back page by page until one holds it. */
async function lastUserMessage(threadId: string): Promise<string | undefined> {
  let before: number | undefined;
  for (;;) {
    const page = await readMessages(threadId, before);
    const found = page.filter((m) => m.role === "user").at(-1);
    if (found) return found.id;
    if (page.length < MESSAGE_PAGE || !page[0]) return undefined;
    before = page[0].seq;
  }
}

export function useThreadChat(threadId: string | undefined, onActivity: () => void) {
  const { transcript, setTranscript, current, reset, follow, stop } = useRunFollower();
  const [run, setRun] = useState<RunState | null>(null);
  const [error, setError] = useState<string | null>(null);
  // The server's own words behind a run's failure, while its sentence is the error shown.
  const [failure, setFailure] = useState<{ shown: string; detail: string } | null>(null);
  /** Shows why a run ended without an answer, with the server's words kept for a tooltip. */
  const showRunEnd = useCallback((end: RunEnd) => {
    const shown = runErrorMessage(end);
    if (!shown) return;
    const detail = runErrorDetail(end);
    setError(shown);
    setFailure(detail ? { shown, detail } : null);
  }, []);
  const [loading, setLoading] = useState(Boolean(threadId));
  // The messages read so far (the latest page and the earlier ones asked for), and whether the
  // thread may have earlier ones still.
  const pages = useRef<MessagePages>(NO_MESSAGES);
  const [hasEarlier, setHasEarlier] = useState(false);
  const [loadingEarlier, setLoadingEarlier] = useState(false);
  const [usage, setUsage] = useState<RunUsage | null>(null);
  // Another thread opened: nothing of the previous one stays on screen.
  const [shownThread, setShownThread] = useState(threadId);
  if (shownThread !== threadId) {
    setShownThread(threadId);
    setRun(null);
    setError(null);
    setUsage(null);
    setLoading(Boolean(threadId));
    setHasEarlier(false);
    setLoadingEarlier(false);
  }
  // Stream callbacks outlive renders: they read the newest thread and listener from here.
  const latest = useRef({ threadId, onActivity });
  useLayoutEffect(() => {
    latest.current = { threadId, onActivity };
  });
  /** Re-reads the open thread from the server (set below, once `load` exists). */
  const reloadThread = useRef<() => void>(() => undefined);
  const earlierBusy = useRef(false);

  /** Reads a finished run's total (with its subagents') usage. */
  const loadTotal = useCallback((runId: string) => {
    unwrap(api.GET("/api/runs/{id}", { params: { path: { id: runId } } }))
      .then((detail) =>
        setUsage((old) =>
          old && old.runId !== runId ? old : { runId, own: detail.usage, total: detail.total_usage },
        ),
      )
      .catch(() => undefined);
  }, []);

  const attach = useCallback(
    (runId: string, after: number, shownUpTo?: number) => {
      follow(runId, after, {
        persist: true,
        shownUpTo,
        onEvent(event) {
          if (event.type === "usage") {
            setUsage({ runId, own: event.usage, total: null });
          } else if (event.type === "run_status") {
            setRun({ id: runId, status: event.status });
            if (isTerminalStatus(event.status)) loadTotal(runId);
            if (event.error && event.status !== "cancelled") showRunEnd(event);
          } else if (event.type === "error") {
            setError(event.message);
          }
          if (ACTIVITY.has(event.type)) latest.current.onActivity();
        },
        onEnd(end) {
          latest.current.onActivity();
          // Events no longer kept: show what the server persisted instead.
          if (end === "gone") reloadThread.current();
          else if (end === "not_found") setError(i18n.t("chat.runGone"));
        },
      });
    },
    [follow, loadTotal, showRunEnd],
  );

  /**
   * Shows a thread as read, and follows its latest run while that is active: from the run's
   * resume point when `resume` (a page that opens the thread, whose stored point was saved
   * before this read began), else from the run's first event. A read again while this page
   * follows the run may have begun before events this page applied (and saved as the resume
   * point): resuming after them would drop what the read missed, so it replays the run, which
   * the transcript merges by message id.
   */
  const show = useCallback(
    ({ messages, latest: last }: Awaited<ReturnType<typeof loadThread>>, resume: boolean) => {
      // Read again (after a run, a lost stream): the latest page takes the place of what it
      // covers, the earlier pages already read stay.
      pages.current = mergeLatestMessages(pages.current, messages, MESSAGE_PAGE);
      setHasEarlier(pages.current.more);
      reset(pages.current.messages);
      setRun(last && { id: last.id, status: last.status });
      setUsage(last && { runId: last.id, own: last.usage, total: null });
      if (last && isTerminalStatus(last.status)) loadTotal(last.id);
      // A run that already failed says why, as if it had been watched; a cancel the user chose
      // is not a failure.
      if (last?.error && last.status !== "cancelled") showRunEnd(last);
      if (last && !isTerminalStatus(last.status)) {
        // From its first event, the run replays what this read already shows.
        attach(last.id, resume ? loadResumePoint(last.id) : 0, lastAssistantSeq(messages, last.id));
      }
    },
    [reset, attach, loadTotal, showRunEnd],
  );

  useLayoutEffect(() => {
    reloadThread.current = () => {
      const id = latest.current.threadId;
      if (!id) return;
      loadThread(id)
        .then((loaded) => latest.current.threadId === id && show(loaded, false))
        .catch((failure: unknown) => setError(errorMessage(failure)));
    };
  }, [show]);

  /**
   * While the opened thread's first read is in flight: the runs adopted meanwhile (the thread's
   * stream may name its active run before the read answers), checked against what it read.
   */
  const firstRead = useRef<{ adopted: Set<string> } | null>(null);

  useEffect(() => {
    stop();
    reset([]);
    pages.current = NO_MESSAGES;
    if (!threadId) return;
    let live = true;
    const reading = { adopted: new Set<string>() };
    firstRead.current = reading;
    loadThread(threadId)
      .then((loaded) => {
        if (!live) return;
        firstRead.current = null;
        show(loaded, true);
        // A run adopted while the read was in flight that it did not find as the latest began
        // after it: read again for it.
        reading.adopted.delete(loaded.latest?.id ?? "");
        if (reading.adopted.size > 0) reloadThread.current();
      })
      .catch((failure: unknown) => live && setError(errorMessage(failure)))
      .finally(() => {
        if (firstRead.current === reading) firstRead.current = null;
        if (live) setLoading(false);
      });
    return () => {
      live = false;
      stop();
    };
  }, [threadId, show, reset, stop]);

  /**
   * Starts a run with `input`. With `replaceFrom` (a user message's id, or `"last"` for the
   * thread's last user message), that message and everything after it are replaced:
   * regenerate (the same text) or edit-and-resend (new text).
   */
  const send = useCallback(
    async (input: string, replaceFrom?: string): Promise<boolean> => {
      const id = latest.current.threadId;
      if (!id) return false;
      setError(null);
      try {
        let replaced: string | undefined = replaceFrom;
        if (replaceFrom === "last") {
          // A message sent from this page has no id here yet: the stored history has it.
          replaced = await lastUserMessage(id);
          if (!replaced) return false;
        }
        const { run: started } = await unwrap(
          api.POST("/api/threads/{id}/runs", {
            params: { path: { id } },
            body: replaced ? { input, replace_from: replaced } : { input },
          }),
        );
        const kept = replaced ? truncateAtLastUser(current.current) : current.current;
        setTranscript(addUserInput(kept, started.id, input));
        setRun({ id: started.id, status: started.status });
        setUsage(null);
        attach(started.id, 0);
        latest.current.onActivity();
        return true;
      } catch (failure) {
        setError(errorMessage(failure));
        // Busy: another run holds the thread; show it and follow it instead.
        if (failure instanceof ApiError && failure.code === "busy") reloadThread.current();
        return false;
      }
    },
    [attach, current, setTranscript],
  );

  /**
   * Sends `input` into the active run (steering): the model reads it before its next step.
   * A run that ended meanwhile gets a new run with it instead.
   */
  const steer = useCallback(
    async (input: string): Promise<boolean> => {
      if (!run || isTerminalStatus(run.status)) return send(input);
      setError(null);
      try {
        const message = await unwrap(
          api.POST("/api/runs/{id}/messages", { params: { path: { id: run.id } }, body: { content: input } }),
        );
        setTranscript(addCommitted(current.current, message));
        return true;
      } catch (failure) {
        if (failure instanceof ApiError && failure.status === 409) return send(input);
        setError(errorMessage(failure));
        return false;
      }
    },
    [run, send, current, setTranscript],
  );

  const cancel = useCallback(async () => {
    if (!run) return;
    try {
      const answer = await unwrap(api.POST("/api/runs/{id}/cancel", { params: { path: { id: run.id } } }));
      setRun({ id: answer.id, status: answer.status });
    } catch (failure) {
      setError(errorMessage(failure));
    }
  }, [run]);

  /**
   * Reads the page before the first message shown and puts it before the conversation; false
   * when that failed.
   */
  const loadEarlier = useCallback(async (): Promise<boolean> => {
    const id = latest.current.threadId;
    const first = pages.current.messages[0];
    if (!id || !first || !pages.current.more || earlierBusy.current) return true;
    earlierBusy.current = true;
    setLoadingEarlier(true);
    try {
      const page = await readMessages(id, first.seq);
      // Another thread opened, or this one was read again from scratch, meanwhile.
      if (latest.current.threadId !== id || pages.current.messages[0] !== first) return true;
      const before = pages.current.messages.length;
      pages.current = prependMessages(pages.current, page, MESSAGE_PAGE);
      setHasEarlier(pages.current.more);
      const added = pages.current.messages.slice(0, pages.current.messages.length - before);
      setTranscript(prependTranscript(current.current, added));
      return true;
    } catch (failure) {
      if (latest.current.threadId === id) setError(errorMessage(failure));
      return false;
    } finally {
      earlierBusy.current = false;
      setLoadingEarlier(false);
    }
  }, [current, setTranscript]);

  /** A completion notice arrived on the thread's stream. */
  const addNotice = useCallback(
    (message: Message) => setTranscript(addCommitted(current.current, message)),
    [current, setTranscript],
  );

  /** A run of this thread that this page did not start (another tab, another client). */
  const adoptRun = useCallback(
    (other: RunDetail) => {
      if (isTerminalStatus(other.status) || other.id === run?.id) return;
      // The first read, still in flight, may show it already: decided when it answers.
      if (firstRead.current) firstRead.current.adopted.add(other.id);
      else reloadThread.current();
    },
    [run?.id],
  );

  const active = run !== null && !isTerminalStatus(run.status);
  return {
    transcript,
    run,
    usage,
    active,
    addNotice,
    adoptRun,
    error,
    /** The server's own words behind `error`, when its sentence leaves them out (a tooltip). */
    errorDetail: failure && failure.shown === error ? failure.detail : null,
    loading,
    /** The thread may have messages before the first one shown. */
    hasEarlier,
    loadingEarlier,
    loadEarlier,
    send,
    steer,
    cancel,
    dismissError: () => setError(null),
  };
}
