import { useTranslation } from "react-i18next";
import type { Agent, Thread } from "../api/types";
import { ThreadList } from "./ThreadList";

interface ThreadSidebarProps {
  agents: readonly Agent[];
  agentId: string;
  onAgentChange: (agentId: string) => void;
  onNewThread: () => void;
  threads: readonly Thread[];
  threadsLoading: boolean;
  onRename: (thread: Thread, title: string) => Promise<boolean>;
  onDelete: (thread: Thread) => void;
}

/** The agent quick-switch (normal agents only) and the thread list. */
export function ThreadSidebar(props: ThreadSidebarProps) {
  const { t } = useTranslation();
  const { agents, agentId, onAgentChange, onNewThread, threads, threadsLoading, onRename, onDelete } = props;
  return (
    <nav className="thread-sidebar" aria-label={t("threads.label")}>
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
      <ThreadList threads={threads} loading={threadsLoading} onRename={onRename} onDelete={onDelete} />
    </nav>
  );
}
