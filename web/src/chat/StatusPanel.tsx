import { useEffect, useRef, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { runErrorDetail, subagentEndMessage } from "../api/errors";
import { isTerminalStatus } from "../api/events";
import type { SubagentRun } from "../api/types";
import { Icon } from "../components/Icon";
import { elapsed, usageText } from "../lib/format";
import { useNow } from "./useNow";

interface StatusPanelProps {
  entries: readonly SubagentRun[];
  onOpen: (entry: SubagentRun) => void;
  open: boolean;
  onClose: () => void;
  /** The Files tab's content (a thread is open), or nothing. */
  files?: ReactNode;
  tab: PanelTab;
  onTab: (tab: PanelTab) => void;
  /** Cards of the subagent runs that wait for the user's decision, shown above either tab. */
  waiting?: ReactNode;
}

export type PanelTab = "subagents" | "files";

/**
 * Beside the chat: what of the thread's subagents waits for the user, then the subagent runs by
 * `run_id` with live state (or the thread's files).
 */
export function StatusPanel({
  entries,
  onOpen,
  open,
  onClose,
  files,
  tab,
  onTab,
  waiting,
}: StatusPanelProps) {
  const { t } = useTranslation();
  const now = useNow(entries.some((e) => !isTerminalStatus(e.status)));
  const closeButton = useRef<HTMLButtonElement>(null);

  // Opened as a drawer (narrow screens): focus moves in, and Escape anywhere closes it.
  useEffect(() => {
    if (!open) return;
    closeButton.current?.focus();
    const onKeyDown = (event: KeyboardEvent) => {
      if (event.key === "Escape" && !document.querySelector('[role="dialog"]')) onClose();
    };
    document.addEventListener("keydown", onKeyDown);
    return () => document.removeEventListener("keydown", onKeyDown);
  }, [open, onClose]);

  return (
    <aside
      className={open ? "status-panel open" : "status-panel"}
      data-testid="subagent-panel"
      aria-label={t("status.panel")}
    >
      <div className="panel-head">
        <h2 className="visually-hidden">{t("status.panel")}</h2>
        <div role="tablist" className="panel-tabs" aria-label={t("status.panel")}>
          <button
            type="button"
            role="tab"
            id="panel-tab-subagents"
            aria-selected={tab === "subagents"}
            aria-controls="panel-body"
            data-testid="tab-subagents"
            onClick={() => onTab("subagents")}
          >
            {t("status.subagents")}
            {entries.length > 0 ? ` (${entries.length})` : ""}
          </button>
          {files && (
            <button
              type="button"
              role="tab"
              id="panel-tab-files"
              aria-selected={tab === "files"}
              aria-controls="panel-body"
              data-testid="tab-files"
              onClick={() => onTab("files")}
            >
              {t("files.tab")}
            </button>
          )}
        </div>
        <button
          ref={closeButton}
          type="button"
          className="icon narrow-only"
          aria-label={t("status.closePanel")}
          onClick={onClose}
        >
          <Icon name="close" />
        </button>
      </div>
      {waiting && (
        <section className="panel-waiting" data-testid="panel-waiting" aria-labelledby="panel-waiting-title">
          <h3 id="panel-waiting-title">{t("status.waiting")}</h3>
          {waiting}
        </section>
      )}
      <div
        id="panel-body"
        role="tabpanel"
        aria-labelledby={tab === "files" && files ? "panel-tab-files" : "panel-tab-subagents"}
        className="panel-body"
      >
        {tab === "files" && files ? (
          files
        ) : (
          <>
            {entries.length === 0 ? (
              <p className="empty">{t("status.empty")}</p>
            ) : (
              <ul className="subagent-list">
                {entries.map((entry) => (
                  <li key={entry.run_id}>
                    <button
                      type="button"
                      className="subagent-entry"
                      data-testid="subagent-entry"
                      data-run-id={entry.run_id}
                      data-slug={entry.subagent_slug ?? ""}
                      data-status={entry.status}
                      onClick={() => onOpen(entry)}
                    >
                      <span className="entry-head">
                        <strong>{entry.subagent_slug ?? t("chat.subagentFallback")}</strong>
                        <span className={`status ${entry.status}`}>{t(`runStatus.${entry.status}`)}</span>
                      </span>
                      <span className="entry-description">{entry.description}</span>
                      {entry.error && subagentEndMessage(entry) && (
                        <span
                          className="entry-error"
                          data-testid="subagent-error"
                          title={runErrorDetail(entry) ?? undefined}
                        >
                          {subagentEndMessage(entry)}
                        </span>
                      )}
                      <span className="entry-meta">
                        <span>
                          {elapsed(
                            entry.started_at ?? entry.created_at,
                            entry.finished_at ? Date.parse(entry.finished_at) : now,
                          )}
                        </span>
                        <span>{usageText(entry.usage)}</span>
                      </span>
                    </button>
                  </li>
                ))}
              </ul>
            )}
          </>
        )}
      </div>
    </aside>
  );
}
