import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { api, errorMessage, unwrap } from "../api";
import { runErrorMessage } from "../api/errors";
import { isTerminalStatus } from "../api/events";
import type { RunStatus, SubagentRun } from "../api/types";
import { Dialog } from "../components/Dialog";
import { Conversation } from "./Conversation";
import { elapsed, usageText } from "../lib/format";
import { useNow } from "./useNow";
import { useRunFollower } from "./useRunFollower";

/**
 * One subagent run: while it runs, its messages and tool calls stream live from the run's SSE
 * (after its thread's earlier history); once finished, its persisted messages are shown.
 */
export function SubagentPopup({ entry, onClose }: { entry: SubagentRun; onClose: () => void }) {
  const { t } = useTranslation();
  const { transcript, reset, follow } = useRunFollower();
  const [streamStatus, setStatus] = useState<RunStatus>(entry.status);
  // The panel may learn the end first (e.g. events no longer kept).
  const status =
    isTerminalStatus(entry.status) && !isTerminalStatus(streamStatus) ? entry.status : streamStatus;
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const running = !isTerminalStatus(status);
  // Chosen once: a child that ends while the popup is open keeps its live transcript.
  const [startedLive] = useState(() => !isTerminalStatus(entry.status));
  const now = useNow(running);

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
    try {
      const run = await unwrap(api.POST("/api/runs/{id}/cancel", { params: { path: { id: entry.run_id } } }));
      setStatus(run.status);
    } catch (failure) {
      setError(errorMessage(failure));
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
          <button type="button" data-testid="popup-close" onClick={onClose}>
            {t("common.close")}
          </button>
        </>
      }
    >
      <p className="muted">
        {entry.description}
        <br />
        {elapsed(
          entry.started_at ?? entry.created_at,
          entry.finished_at ? Date.parse(entry.finished_at) : now,
        )}
        {" · "}
        {usageText(entry.usage)}
      </p>
      {entry.error && (
        <p className="error" role="alert" data-testid="subagent-popup-error">
          {t("subagentPopup.failed", { reason: runErrorMessage(entry.error, entry.error_code) })}
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
    </Dialog>
  );
}
