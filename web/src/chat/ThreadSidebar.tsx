import { useState } from "react";
import { useTranslation } from "react-i18next";
import type { Agent, Thread } from "../api/types";
import { MessageHits } from "./MessageHits";
import { ThreadList } from "./ThreadList";

interface ThreadSidebarProps {
  agents: readonly Agent[];
  agentId: string;
  onAgentChange: (agentId: string) => void;
  onNewThread: () => void;
  threads: readonly Thread[];
  threadsLoading: boolean;
  /** A thread is open: on a narrow screen the list starts folded away. */
  threadOpen: boolean;
  onRename: (thread: Thread, title: string) => Promise<boolean>;
  onDelete: (thread: Thread) => void;
}

/**
 * The agent quick-switch (normal agents only), a search box and the thread list; a search
 * filters the threads by title and agent and also lists the messages holding the text.
 */
export function ThreadSidebar(props: ThreadSidebarProps) {
  const { t } = useTranslation();
  const {
    agents,
    agentId,
    onAgentChange,
    onNewThread,
    threads,
    threadsLoading,
    threadOpen,
    onRename,
    onDelete,
  } = props;
  const [query, setQuery] = useState("");
  // Folding matters on narrow screens only (CSS shows the list regardless on wide ones).
  const [folded, setFolded] = useState(threadOpen);
  const topLevel = threads.filter((thread) => !thread.parent_thread_id).length;
  return (
    <nav className={folded ? "thread-sidebar folded" : "thread-sidebar"} aria-label={t("threads.label")}>
      <label htmlFor="agent-switch" className="small-label">
        {t("threads.agent")}
      </label>
      <div className="sidebar-row">
        <select
          id="agent-switch"
          data-testid="agent-switch"
          value={agentId}
          disabled={agents.length === 0}
          onChange={(e) => onAgentChange(e.target.value)}
        >
          {agents.length === 0 && <option value="">{t("threads.noAgents")}</option>}
          {agents
            .filter((a) => !a.is_subagent)
            .map((agent) => (
              <option key={agent.id} value={agent.id}>
                {agent.name}
              </option>
            ))}
        </select>
        <button type="button" data-testid="thread-new" disabled={!agentId} onClick={onNewThread}>
          {t("threads.newThread")}
        </button>
      </div>
      <button
        type="button"
        className="narrow-only thread-fold"
        data-testid="thread-list-toggle"
        aria-expanded={!folded}
        aria-controls="thread-list-body"
        onClick={() => setFolded(!folded)}
      >
        {folded ? t("threads.show", { count: topLevel }) : t("threads.hide")}
      </button>
      <div id="thread-list-body" className="thread-list-body">
        <input
          type="search"
          className="thread-search"
          data-testid="thread-search"
          aria-label={t("threads.search")}
          placeholder={t("threads.searchPlaceholder")}
          value={query}
          onChange={(e) => setQuery(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Escape") {
              e.preventDefault();
              setQuery("");
            }
          }}
        />
        <ThreadList
          threads={threads}
          agents={agents}
          query={query}
          loading={threadsLoading}
          onOpen={() => setFolded(true)}
          onRename={onRename}
          onDelete={onDelete}
        />
        <MessageHits query={query} threads={threads} agents={agents} onOpen={() => setFolded(true)} />
      </div>
    </nav>
  );
}
