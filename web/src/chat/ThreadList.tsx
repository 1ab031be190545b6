import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { NavLink } from "react-router-dom";
import type { Thread } from "../api/types";
import { Icon } from "../components/Icon";

interface ThreadListProps {
  threads: readonly Thread[];
  loading: boolean;
  onRename: (thread: Thread, title: string) => Promise<boolean>;
  onDelete: (thread: Thread) => void;
}

/** The user's top-level threads (subagent threads are never listed), newest activity first. */
export function ThreadList({ threads, loading, onRename, onDelete }: ThreadListProps) {
  const { t } = useTranslation();
  const [renaming, setRenaming] = useState<string | null>(null);
  const shown = threads.filter((t) => !t.parent_thread_id);
  if (loading && shown.length === 0) return <p className="loading">{t("threads.loading")}</p>;
  if (shown.length === 0) return <p className="empty">{t("threads.empty")}</p>;
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
              <NavLink to={`/chat/${thread.id}`} className="thread-link" title={thread.title}>
                {thread.title}
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
        onKeyDown={(e) => e.key === "Escape" && onDone()}
      />
      <button type="submit" data-testid="thread-rename-save">
        {t("common.save")}
      </button>
    </form>
  );
}
