import { useState, type FormEvent } from "react";
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
  const [renaming, setRenaming] = useState<string | null>(null);
  const shown = threads.filter((t) => !t.parent_thread_id);
  if (loading && shown.length === 0) return <p className="loading">Loading threads…</p>;
  if (shown.length === 0) return <p className="empty">No conversations yet.</p>;
  return (
    <ul className="thread-list" aria-label="Threads">
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
                  aria-label={`Rename ${thread.title}`}
                  title="Rename"
                  onClick={() => setRenaming(thread.id)}
                >
                  <Icon name="edit" />
                </button>
                <button
                  type="button"
                  className="icon"
                  data-testid="thread-delete"
                  aria-label={`Delete ${thread.title}`}
                  title="Delete"
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
  const [title, setTitle] = useState(thread.title);

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (await onRename(title)) onDone();
  }

  return (
    <form className="rename" onSubmit={submit}>
      <input
        aria-label="Thread title"
        data-testid="thread-title-input"
        autoFocus
        value={title}
        onChange={(e) => setTitle(e.target.value)}
        onKeyDown={(e) => e.key === "Escape" && onDone()}
      />
      <button type="submit" data-testid="thread-rename-save">
        Save
      </button>
    </form>
  );
}
