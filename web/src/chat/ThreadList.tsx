import { useEffect, useEffectEvent, useRef, useState, type FormEvent } from "react";
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
  /** The server has threads after the last one listed: a "Load more" button ends the list. */
  more?: boolean;
  loadingMore?: boolean;
  onLoadMore?: () => void;
  onOpen: () => void;
  onRename: (thread: Thread, title: string) => Promise<boolean>;
  onDelete: (thread: Thread) => void;
}

/**
 * The user's top-level threads (subagent threads are never listed), newest activity first; a
 * thread where a run (its own or a subagent's) waits for the user is marked.
 */
export function ThreadList(props: ThreadListProps) {
  const { threads, agents, query, loading, onOpen, onRename, onDelete } = props;
  const { more = false, loadingMore = false, onLoadMore } = props;
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
  // Scrolling to the end loads the next page, unless a search filters the list (a short filtered
  // list would otherwise pull in every page): the button stays for that.
  const loadMore =
    more && onLoadMore ? <LoadMore loading={loadingMore} auto={!needle} onLoad={onLoadMore} /> : null;
  if (topLevel.length === 0 && !more) return <p className="empty">{t("threads.empty")}</p>;
  if (shown.length === 0) {
    // Messages are searched too (below the list): the titles alone matching nothing is no dead end.
    const messagesSearched = checkQuery(query).kind !== "short";
    return (
      <>
        <p className="empty">{t(messagesSearched ? "threads.noTitleMatch" : "threads.noMatch")}</p>
        {loadMore}
      </>
    );
  }
  return (
    <>
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
      {loadMore}
    </>
  );
}

/**
 * The button that reads the next page of the list; with `auto`, it also presses itself when
 * it scrolls into view (and again after each page while it stays in view).
 */
function LoadMore({ loading, auto, onLoad }: { loading: boolean; auto: boolean; onLoad: () => void }) {
  const { t } = useTranslation();
  const button = useRef<HTMLButtonElement>(null);
  const seen = useEffectEvent(() => onLoad());
  useEffect(() => {
    const el = button.current;
    if (!auto || loading || !el || typeof IntersectionObserver === "undefined") return;
    const observer = new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) seen();
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, [auto, loading]);
  return (
    <button
      type="button"
      ref={button}
      className="thread-more"
      data-testid="thread-load-more"
      disabled={loading}
      aria-busy={loading}
      onClick={onLoad}
    >
      {loading ? t("threads.loadingMore") : t("threads.loadMore")}
    </button>
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
