import { useCallback, useEffect, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import type { Agent, Thread } from "../api/types";
import { Icon } from "../components/Icon";
import { agentName } from "../lib/builtinText";
import { MessageHits } from "./MessageHits";
import { ThreadList } from "./ThreadList";

interface ThreadSidebarProps {
  agents: readonly Agent[];
  agentId: string;
  onAgentChange: (agentId: string) => void;
  onNewThread: () => void;
  threads: readonly Thread[];
  threadsLoading: boolean;
  /** The server has threads after the last one listed. */
  moreThreads?: boolean;
  loadingMoreThreads?: boolean;
  onLoadMoreThreads?: () => void;
  onRename: (thread: Thread, title: string) => Promise<boolean>;
  onDelete: (thread: Thread) => void;
}

/**
 * The agent quick-switch (normal agents only), a search box and the thread list; a search
 * filters the threads by title and agent and also lists the messages holding the text. On a
 * narrow screen the search and the list are a drawer over the chat, opened from a button beside
 * the agent switch; Escape, the backdrop or choosing a thread closes it.
 */
export function ThreadSidebar(props: ThreadSidebarProps) {
  const { t } = useTranslation();
  const { agents, agentId, onAgentChange, onNewThread, threads, threadsLoading, onRename, onDelete } = props;
  const { moreThreads = false, loadingMoreThreads = false, onLoadMoreThreads } = props;
  const [query, setQuery] = useState("");
  // The drawer matters on narrow screens only (CSS shows the list regardless on wide ones).
  const [drawerOpen, setDrawerOpen] = useState(false);
  const toggle = useRef<HTMLButtonElement>(null);
  const search = useRef<HTMLInputElement>(null);
  const topLevel = threads.filter((thread) => !thread.parent_thread_id).length;

  // Closing hands the focus back to the button (a chosen thread's composer then takes it).
  const closeDrawer = useCallback(() => {
    setDrawerOpen(false);
    toggle.current?.focus();
  }, []);

  useEffect(() => {
    if (!drawerOpen) return;
    search.current?.focus();
    const onKeyDown = (event: KeyboardEvent) => {
      // A field that used Escape itself (clearing the search, leaving a rename) keeps the drawer.
      if (event.key !== "Escape" || event.defaultPrevented) return;
      if (!document.querySelector('[role="dialog"]')) closeDrawer();
    };
    document.addEventListener("keydown", onKeyDown);
    return () => document.removeEventListener("keydown", onKeyDown);
  }, [drawerOpen, closeDrawer]);

  return (
    <nav
      className={drawerOpen ? "thread-sidebar drawer-open" : "thread-sidebar"}
      aria-label={t("threads.label")}
    >
      <label htmlFor="agent-switch" className="small-label">
        {t("threads.agent")}
      </label>
      <div className="sidebar-row">
        <button
          type="button"
          ref={toggle}
          className="narrow-only thread-fold"
          data-testid="thread-list-toggle"
          aria-expanded={drawerOpen}
          aria-controls="thread-list-body"
          aria-label={t("threads.show", { count: topLevel })}
          title={t("threads.show", { count: topLevel })}
          onClick={() => (drawerOpen ? closeDrawer() : setDrawerOpen(true))}
        >
          <svg width="16" height="16" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
            <path d="M4 6h16M4 12h16M4 18h10" stroke="currentColor" strokeWidth="2" strokeLinecap="round" />
          </svg>
          <span aria-hidden="true">
            {topLevel}
            {moreThreads ? "+" : ""}
          </span>
        </button>
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
                {agentName(agent)}
              </option>
            ))}
        </select>
        <button type="button" data-testid="thread-new" disabled={!agentId} onClick={onNewThread}>
          {t("threads.newThread")}
        </button>
      </div>
      {drawerOpen && (
        <div className="thread-backdrop" data-testid="thread-drawer-backdrop" onClick={closeDrawer} />
      )}
      <div id="thread-list-body" className="thread-list-body" data-testid="thread-drawer">
        <div className="drawer-head narrow-only">
          <h2>{t("threads.label")}</h2>
          <button
            type="button"
            className="icon"
            data-testid="thread-drawer-close"
            aria-label={t("threads.hide")}
            onClick={closeDrawer}
          >
            <Icon name="close" />
          </button>
        </div>
        <input
          ref={search}
          type="search"
          className="thread-search"
          data-testid="thread-search"
          aria-label={t("threads.search")}
          placeholder={t("threads.searchPlaceholder")}
          value={query}
          onChange={(e) => setQuery(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Escape" && query) {
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
          more={moreThreads}
          loadingMore={loadingMoreThreads}
          onLoadMore={onLoadMoreThreads}
          onOpen={closeDrawer}
          onRename={onRename}
          onDelete={onDelete}
        />
        <MessageHits query={query} threads={threads} agents={agents} onOpen={closeDrawer} />
      </div>
    </nav>
  );
}
