import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from "react";
import { useTranslation } from "react-i18next";
import { api, ApiError, errorMessage, unwrap } from "../api";
import { runErrorDetail, subagentEndMessage } from "../api/errors";
import { isTerminalStatus } from "../api/events";
import type { RunStatus, SubagentRun } from "../api/types";
import { Dialog } from "../components/Dialog";
import { ApprovalCard } from "./ApprovalCard";
import { Conversation } from "./Conversation";
import { elapsed, usageText } from "../lib/format";
import type { PendingGroup } from "./pending";
import { addCommitted, addUserInput } from "./transcript";
import { useNow } from "./useNow";
import { useRunFollower } from "./useRunFollower";

interface SubagentPopupProps {
  entry: SubagentRun;
  onClose: () => void;
  /** What the run waits on, if it waits for the user. */
  pending?: PendingGroup;
  onResolved?: (runId: string, callIds: readonly string[]) => void;
  /** A follow-up run started on the child's thread (its files may change). */
  onActivity?: () => void;
}

/**
 * One subagent run: while it runs, its messages and tool calls stream live from the run's SSE
 * (after its thread's earlier history); once finished, its persisted messages are shown. A
 * message box talks to the child: into its run while that is active, else as a new run on its
 * thread, which the popup then follows.
 */
export function SubagentPopup({ entry, onClose, pending, onResolved, onActivity }: SubagentPopupProps) {
  const { t } = useTranslation();
  const { transcript, setTranscript, current, reset, follow } = useRunFollower();
  const [streamStatus, setStatus] = useState<RunStatus>(entry.status);
  // A run started from the popup on the child's thread: it stands for the child from then on.
  const [followUp, setFollowUp] = useState<{ id: string; status: RunStatus } | null>(null);
  // The panel may learn the end first (e.g. events no longer kept).
  const status =
    followUp?.status ??
    (isTerminalStatus(entry.status) && !isTerminalStatus(streamStatus) ? entry.status : streamStatus);
  const runId = followUp?.id ?? entry.run_id;
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const running = !isTerminalStatus(status);
  // Chosen once: a child that ends while the popup is open keeps its live transcript.
  const [startedLive] = useState(() => !isTerminalStatus(entry.status));
  const now = useNow(running);
  const closeButton = useRef<HTMLButtonElement>(null);
  const endMessage = entry.error ? subagentEndMessage(entry) : null;
  const since = elapsed(
    entry.started_at ?? entry.created_at,
    entry.finished_at ? Date.parse(entry.finished_at) : now,
  );

  // The Cancel button goes once the run ends: focus it held moves to Close, so Escape (handled
  // inside the dialog) still closes the popup.
  useEffect(() => {
    if (!running && document.activeElement === document.body) closeButton.current?.focus();
  }, [running]);

  useEffect(() => {
    let live = true;
    unwrap(api.GET("/api/threads/{id}/messages", { params: { path: { id: entry.thread_id } } }))
      .then((messages) => {
        if (!live) return;
        reset(messages);
        if (!startedLive) return;
        // A replay from the start: the transcript skips what the messages already hold.
        follow(entry.run_id, 0, {
          persist: false,
          onEvent: (event) => event.type === "run_status" && setStatus(event.status),
          onEnd: (end) => end === "gone" && setStatus("interrupted"),
        });
      })
      .catch((failure: unknown) => live && setError(errorMessage(failure)))
      .finally(() => live && setLoading(false));
    return () => {
      live = false;
    };
  }, [entry.thread_id, entry.run_id, startedLive, reset, follow]);

  async function cancel() {
    closeButton.current?.focus();
    try {
      const run = await unwrap(api.POST("/api/runs/{id}/cancel", { params: { path: { id: runId } } }));
      if (followUp) setFollowUp({ id: run.id, status: run.status });
      else setStatus(run.status);
    } catch (failure) {
      setError(errorMessage(failure));
    }
  }

  /** Starts a new run on the child's thread with `text`, and follows it. */
  async function continueThread(text: string): Promise<boolean> {
    const { run } = await unwrap(
      api.POST("/api/threads/{id}/runs", {
        params: { path: { id: entry.thread_id } },
        body: { input: text },
      }),
    );
    setTranscript(addUserInput(current.current, run.id, text));
    setFollowUp({ id: run.id, status: run.status });
    const update = (next: RunStatus) =>
      setFollowUp((old) => (old && old.id === run.id ? { ...old, status: next } : old));
    follow(run.id, 0, {
      persist: false,
      onEvent: (event) => event.type === "run_status" && update(event.status),
      onEnd: (end) => end === "gone" && update("interrupted"),
    });
    onActivity?.();
    return true;
  }

  /** Sends `text` to the child: into its active run, or as a new run once it has ended. */
  async function message(text: string): Promise<boolean> {
    setError(null);
    try {
      if (running) {
        try {
          const sent = await unwrap(
            api.POST("/api/runs/{id}/messages", { params: { path: { id: runId } }, body: { content: text } }),
          );
          setTranscript(addCommitted(current.current, sent));
          return true;
        } catch (failure) {
          // It ended meanwhile: the message starts a new run instead.
          if (!(failure instanceof ApiError && failure.status === 409)) throw failure;
        }
      }
      return await continueThread(text);
    } catch (failure) {
      setError(errorMessage(failure));
      return false;
    }
  }

  return (
    <Dialog
      title={
        <>
          {entry.subagent_slug ?? t("subagentPopup.fallbackTitle")}{" "}
          <span className={`status ${status}`}>{t(`runStatus.${status}`)}</span>
        </>
      }
      onClose={onClose}
      testId="subagent-popup"
      wide
      actions={
        <>
          {running && (
            <button type="button" className="danger" data-testid="subagent-cancel" onClick={cancel}>
              {t("subagentPopup.cancelRun")}
            </button>
          )}
          <button ref={closeButton} type="button" data-testid="popup-close" onClick={onClose}>
            {t("common.close")}
          </button>
        </>
      }
    >
      <p className="muted">
        {entry.description}
        <br />
        {running ? (
          <span className="run-progress" data-testid="subagent-progress">
            <span className="spinner" aria-hidden="true" />
            {t("subagentPopup.running", { elapsed: since })}
          </span>
        ) : (
          since
        )}
        {" · "}
        {usageText(entry.usage)}
      </p>
      {endMessage && (
        <p
          className="error"
          role="alert"
          data-testid="subagent-popup-error"
          title={runErrorDetail(entry) ?? undefined}
        >
          {endMessage}
        </p>
      )}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
      {loading ? (
        <p className="loading">{t("common.loading")}</p>
      ) : (
        <Conversation
          transcript={transcript}
          empty={<p className="empty">{t("subagentPopup.noMessages")}</p>}
        />
      )}
      {pending && onResolved && !followUp && <ApprovalCard group={pending} onResolved={onResolved} />}
      <PopupMessage
        slug={entry.subagent_slug ?? t("subagentPopup.fallbackTitle")}
        steer={running}
        onSend={message}
      />
    </Dialog>
  );
}

/** The popup's message box, saying where the message goes. */
function PopupMessage({
  slug,
  steer,
  onSend,
}: {
  slug: string;
  /** The child's run is active: the message goes into it. */
  steer: boolean;
  onSend: (text: string) => Promise<boolean>;
}) {
  const { t } = useTranslation();
  const [text, setText] = useState("");
  const [busy, setBusy] = useState(false);
  const blocked = busy || !text.trim();

  async function send(event?: FormEvent) {
    event?.preventDefault();
    if (blocked) return;
    setBusy(true);
    if (await onSend(text)) setText("");
    setBusy(false);
  }

  function onKeyDown(event: KeyboardEvent<HTMLTextAreaElement>) {
    if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      void send();
    }
  }

  return (
    <form className="popup-message" onSubmit={send}>
      <label htmlFor="popup-message-input" className="small-label">
        {t("subagentPopup.messageLabel", { slug })}
      </label>
      <div className="popup-message-row">
        <textarea
          id="popup-message-input"
          data-testid="popup-message-input"
          rows={2}
          value={text}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={onKeyDown}
        />
        <button type="submit" className="primary" data-testid="popup-message-send" disabled={blocked}>
          {t("subagentPopup.send")}
        </button>
      </div>
      <p className="hint" data-testid="popup-message-mode" data-mode={steer ? "steer" : "follow-up"}>
        {steer ? t("subagentPopup.steerHint") : t("subagentPopup.followUpHint")}
      </p>
    </form>
  );
}
