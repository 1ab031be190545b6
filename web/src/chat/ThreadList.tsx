import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { NavLink } from "react-router-dom";
import type { Agent, Thread } from "../api/types";
import { Icon } from "../components/Icon";
import { formatDateTime, formatRelative } from "../lib/format";
import { checkQuery } from "./messageSearch";
import { useNow } from "./useNow";

interface ThreadListProps {
  threads: readonly Thread[];
  /** To name each thread's agent. */
  agents: readonly Agent[];
  /** Shows only threads whose title or agent name holds it (any case, any script). */
  query: string;
  loading: boolean;
  onOpen: () => void;
  onRename: (thread: Thread, title: string) => Promise<boolean>;
  onDelete: (thread: Thread) => void;
}

/**
 * The user's top-level threads (subagent threads are never listed), newest activity first; a
 * thread where a run (its own or a subagent's) waits for the user is marked.
 */
export function ThreadList({ threads, agents, query, loading, onOpen, onRename, onDelete }: ThreadListProps) {
  const { t } = useTranslation();
  const [renaming, setRenaming] = useState<string | null>(null);
  // Relative times ("5 minutes ago") move on while the list is on screen.
  const now = useNow(true);
  const names = new Map(agents.map((agent) => [agent.id, agent.name]));
  const topLevel = threads.filter((thread) => !thread.parent_thread_id);
  const needle = query.trim().toLocaleLowerCase();
  const shown = needle
    ? topLevel.filter((thread) =>
        [thread.title, names.get(thread.agent_id) ?? ""].some((text) =>
          text.toLocaleLowerCase().includes(needle),
        ),
      )
    : topLevel;
  if (loading && topLevel.length === 0) return <p className="loading">{t("threads.loading")}</p>;
  if (topLevel.length === 0) return <p className="empty">{t("threads.empty")}</p>;
  if (shown.length === 0) {
    // Messages are searched too (below the list): the titles alone matching nothing is no dead end.
    const messagesSearched = checkQuery(query).kind !== "short";
    return <p className="empty">{t(messagesSearched ? "threads.noTitleMatch" : "threads.noMatch")}</p>;
  }
  return (
    <ul className="thread-list" aria-label={t("threads.list")}>
      {shown.map((thread) => (
        <li key={thread.id} data-testid="thread-item" data-thread-id={thread.id}>
          {renaming === thread.id ? (
            <RenameForm
              thread={thread}
              onDone={() => setRenaming(null)}
              onRename={(title) => onRename(thread, title)}
            />
          ) : (
            <>
              <NavLink
                to={`/chat/${thread.id}`}
                className="thread-link"
                title={thread.title}
                onClick={onOpen}
              >
                <span className="thread-title">{thread.title}</span>
                <span className="thread-meta">
                  {thread.waiting && (
                    <span
                      className="badge warning-badge"
                      data-testid="thread-waiting"
                      title={t("threads.waiting")}
                    >
                      {t("runStatus.waiting")}
                    </span>
                  )}
                  <span data-testid="thread-agent">
                    {names.get(thread.agent_id) ?? t("threads.unknownAgent")}
                  </span>
                  {" · "}
                  <time
                    dateTime={thread.updated_at}
                    title={formatDateTime(thread.updated_at)}
                    data-testid="thread-time"
                  >
                    {formatRelative(thread.updated_at, now)}
                  </time>
                </span>
              </NavLink>
              <span className="thread-actions">
                <button
                  type="button"
                  className="icon"
                  data-testid="thread-rename"
                  aria-label={t("threads.renameNamed", { title: thread.title })}
                  title={t("threads.rename")}
                  onClick={() => setRenaming(thread.id)}
                >
                  <Icon name="edit" />
                </button>
                <button
                  type="button"
                  className="icon"
                  data-testid="thread-delete"
                  aria-label={t("threads.deleteNamed", { title: thread.title })}
                  title={t("common.delete")}
                  onClick={() => onDelete(thread)}
                >
                  <Icon name="trash" />
                </button>
              </span>
            </>
          )}
        </li>
      ))}
    </ul>
  );
}

function RenameForm({
  thread,
  onRename,
  onDone,
}: {
  thread: Thread;
  onRename: (title: string) => Promise<boolean>;
  onDone: () => void;
}) {
  const { t } = useTranslation();
  const [title, setTitle] = useState(thread.title);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (await onRename(title)) onDone();
  }

  return (
    <form className="rename" onSubmit={submit}>
      <input
        aria-label={t("threads.titleInput")}
        data-testid="thread-title-input"
        autoFocus
        value={title}
        onChange={(e) => setTitle(e.target.value)}
        onKeyDown={(e) => {
          if (e.key === "Escape") {
            // Only the rename ends (on a phone, the drawer round the list stays open).
            e.preventDefault();
            onDone();
          }
        }}
      />
      <button type="submit" data-testid="thread-rename-save">
        {t("common.save")}
      </button>
    </form>
  );
}
