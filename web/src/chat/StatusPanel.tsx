import { useEffect, useRef } from "react";
import { useTranslation } from "react-i18next";
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
}

/** Beside the chat: the thread's subagent runs by `run_id`, with live state. */
export function StatusPanel({ entries, onOpen, open, onClose }: StatusPanelProps) {
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
        <h2>{t("status.subagents")}</h2>
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
    </aside>
  );
}
