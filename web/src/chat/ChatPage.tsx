import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { useTranslation } from "react-i18next";
import { Link, useLocation, useNavigate, useParams, useSearchParams } from "react-router-dom";
import { api, errorMessage, unwrap } from "../api";
import { runErrorDetail, subagentEndMessage } from "../api/errors";
import { listChatAgents } from "../api/agents";
import { useUser } from "../auth/AuthContext";
import type { SubagentRun, Thread } from "../api/types";
import { ConfirmDeleteDialog } from "../components/ConfirmDeleteDialog";
import { Icon } from "../components/Icon";
import { usageText } from "../lib/format";
import { useAsync } from "../lib/useAsync";
import { ApprovalCard } from "./ApprovalCard";
import { Composer } from "./Composer";
import { Conversation } from "./Conversation";
import { linkedMessage } from "./messageSearch";
import { workdirPath } from "../api/files";
import { FilesPanel } from "../files/FilesPanel";
import { StatusPanel, type PanelTab } from "./StatusPanel";
import { SubagentPopup } from "./SubagentPopup";
import { ThreadSidebar } from "./ThreadSidebar";
import { DEFAULT_TITLE, draftPath, sendMode, titleFrom } from "./draft";
import { sendWithAttachments, type Attachments } from "./attachments";
import type { PendingGroup } from "./pending";
import type { AssistantItem, ToolItem, UserItem } from "./transcript";
import { useSubagents } from "./useSubagents";
import { useThreadChat } from "./useThreadChat";
import { useThreadPages } from "./useThreadPages";
import { mergeThreads } from "./pages";
import { agentName as shownAgentName } from "../lib/builtinText";

/** Tools whose card links to the subagent run it started. */
const DELEGATING_TOOLS = new Set(["task", "subagent_start"]);

/** Tools whose card links to the file they wrote (their `path` argument). */
const WRITING_TOOLS = new Set(["write_file", "edit_file"]);

/** The `path` argument of a tool call, if it has one. */
function pathArgument(item: ToolItem): string | null {
  try {
    const args = JSON.parse(item.arguments) as { path?: unknown };
    return typeof args.path === "string" ? args.path : null;
  } catch {
    return null;
  }
}

/**
 * `/chat`, `/chat/new?agent=<slug>` (both a draft: see `./draft`) and `/chat/<thread>`: threads,
 * the conversation, and the status panel.
 */
export function ChatPage() {
  const { threadId } = useParams();
  const navigate = useNavigate();
  const { t } = useTranslation();
  const agents = useAsync(listChatAgents, "chat-agents");
  const models = useAsync(() => unwrap(api.GET("/api/models")), "models");
  const user = useUser();
  // First run: nothing but the scripted test model, and no default model to run on.
  const needsSetup =
    models.data != null &&
    !models.data.default_model &&
    !models.data.providers.some((provider) => provider.kind !== "scripted");
  const threads = useThreadPages();
  const [chosenAgent, setChosenAgent] = useState("");
  const [activity, setActivity] = useState(0);
  const [deleting, setDeleting] = useState<Thread | null>(null);
  const [openEntry, setOpenEntry] = useState<string | null>(null);
  const [panelOpen, setPanelOpen] = useState(false);
  const [panelTab, setPanelTab] = useState<PanelTab>("subagents");
  const [editing, setEditing] = useState<string | null>(null);
  const [workdir, setWorkdir] = useState<string | null>(null);
  const [fileRequest, setFileRequest] = useState<{ path: string; n: number } | null>(null);
  const location = useLocation();
  // A search hit opens its thread at the message it found (`#message-<id>`).
  const linked = linkedMessage(location.hash);
  const focus = useMemo(
    () => (linked ? { messageId: linked, key: location.key } : null),
    [linked, location.key],
  );
  const [pageError, setPageError] = useState<string | null>(null);

  const bump = useCallback(() => setActivity((n) => n + 1), []);
  const statusToggle = useRef<HTMLButtonElement>(null);
  const closePanel = useCallback(() => {
    setPanelOpen(false);
    statusToggle.current?.focus();
  }, []);
  const chat = useThreadChat(threadId, bump);
  const {
    entries,
    pending,
    resolved: pendingResolved,
  } = useSubagents(threadId, { onNotice: chat.addNotice, onRun: chat.adoptRun });
  // The open thread's own waiting run is decided in the chat; its subagents' in the panel.
  const ownPending = pending.filter((group) => group.threadId === threadId);
  const childPending = pending.filter((group) => group.threadId !== threadId);
  const childPendingCount = childPending.reduce((sum, group) => sum + group.items.length, 0);
  const cards = (groups: readonly PendingGroup[]) =>
    groups.map((group) => <ApprovalCard key={group.runId} group={group} onResolved={pendingResolved} />);

  // The open thread may be further down than the pages loaded (a link, a search hit): then it
  // is read on its own.
  const listed = threads.threads.find((t) => t.id === threadId);
  const unlisted = threadId && threads.loaded && !listed ? threadId : null;
  const single = useAsync(
    () =>
      unlisted
        ? unwrap(api.GET("/api/threads/{id}", { params: { path: { id: unlisted } } }))
        : Promise.resolve(null),
    `chat-thread:${unlisted ?? ""}`,
  );
  const thread = listed ?? (single.data && single.data.id === threadId ? single.data : undefined);
  const normalAgents = useMemo(() => (agents.data ?? []).filter((a) => !a.is_subagent), [agents.data]);
  const fallbackAgent = normalAgents.find((a) => a.is_default) ?? normalAgents[0];
  // A draft (`/chat/new?agent=<slug>`) names its agent, so a reload keeps it.
  const [search] = useSearchParams();
  const draftAgent = normalAgents.find((a) => a.slug === search.get("agent"));
  const agentId = thread?.agent_id ?? (chosenAgent || draftAgent?.id || fallbackAgent?.id || "");
  const slugOf = (id: string) => normalAgents.find((a) => a.id === id)?.slug;

  // The list's order follows activity: refresh it when a watched run ends.
  const { reload: reloadThreads } = threads;
  const wasActive = useRef(false);
  useEffect(() => {
    if (wasActive.current && !chat.active) reloadThreads();
    wasActive.current = chat.active;
  }, [chat.active, reloadThreads]);
  // A search hit further back than the pages read: earlier pages are read until it shows (the
  // conversation then scrolls to it), unless reading one fails.
  const focusShown = chat.transcript.items.some(
    (item) => (item.kind === "user" || item.kind === "assistant") && item.messageId === focus?.messageId,
  );
  const focusWanted = focus != null && !chat.loading && !focusShown ? focus.key : null;
  const { hasEarlier, loadingEarlier, loadEarlier } = chat;
  const gaveUp = useRef<string | null>(null);
  useEffect(() => {
    if (!focusWanted || !hasEarlier || loadingEarlier || gaveUp.current === focusWanted) return;
    void loadEarlier().then((read) => {
      if (!read) gaveUp.current = focusWanted;
    });
  }, [focusWanted, hasEarlier, loadingEarlier, loadEarlier]);
  // Its "waiting for you" mark follows the open thread's runs and subagents.
  const waitingNow = pending.length > 0;
  const wasWaiting = useRef(waitingNow);
  useEffect(() => {
    if (wasWaiting.current !== waitingNow) reloadThreads();
    wasWaiting.current = waitingNow;
  }, [waitingNow, reloadThreads]);

  const [shownFor, setShownFor] = useState(threadId);
  if (shownFor !== threadId) {
    setShownFor(threadId);
    setPageError(null);
    setOpenEntry(null);
  }

  /**
   * Sends the composer's message (see `sendWithAttachments`: a draft's thread first, then the
   * attached files into its workdir, then the run), steering the run when one is going.
   */
  async function send(input: string, attachments: Attachments | null): Promise<boolean> {
    const mode = sendMode(threadId, chat.active);
    setPageError(null);
    const title = () =>
      titleFrom(input.trim() ? input : (attachments?.names.join(", ") ?? ""), t("chat.newThreadTitle"));
    let created: Thread | null = null;
    return sendWithAttachments(threadId, input, attachments, {
      create: async () => {
        created = await unwrap(api.POST("/api/threads", { body: { agent_id: agentId, title: title() } }));
        return created.id;
      },
      discard: async (id) => {
        await api.DELETE("/api/threads/{id}", { params: { path: { id } } });
      },
      fail: setPageError,
      uploaded: bump,
      start: async (_id, message) => {
        // A run is going: the message goes into it, and the model reads it before its next step.
        if (mode === "steer") return chat.steer(message);
        if (mode === "send") {
          if (thread?.title === DEFAULT_TITLE && chat.transcript.items.length === 0) {
            void rename(thread, title());
          }
          return chat.send(message);
        }
        return created ? startThread(created, message) : false;
      },
    });
  }

  /**
   * A draft's first message, once its thread is created (and its files are in the workdir):
   * start its run, then follow the run on the thread's page (a client-side navigation, so the
   * page picks the live run up). A thread whose run could not start is deleted again (by
   * `sendWithAttachments`), so no empty thread is left in the list.
   */
  async function startThread(created: Thread, input: string): Promise<boolean> {
    try {
      await unwrap(
        api.POST("/api/threads/{id}/runs", { params: { path: { id: created.id } }, body: { input } }),
      );
    } catch (failure) {
      setPageError(errorMessage(failure));
      return false;
    }
    threads.update((list) => mergeThreads([created], list));
    navigate(`/chat/${created.id}`);
    return true;
  }

  async function rename(target: Thread, title: string): Promise<boolean> {
    try {
      const renamed = await unwrap(
        api.PATCH("/api/threads/{id}", { params: { path: { id: target.id } }, body: { title } }),
      );
      threads.update((list) => list.map((t) => (t.id === renamed.id ? renamed : t)));
      if (single.data?.id === renamed.id) single.setData(renamed);
      return true;
    } catch (failure) {
      setPageError(errorMessage(failure));
      return false;
    }
  }

  function switchAgent(id: string) {
    setChosenAgent(id);
    // A thread keeps its agent: another agent means a new conversation (a draft).
    if (thread && thread.agent_id !== id) navigate(draftPath(slugOf(id)));
    // A draft at `/chat/new` names its agent, so a reload keeps the one chosen.
    else if (location.pathname === "/chat/new") navigate(draftPath(slugOf(id)), { replace: true });
  }

  const entryFor = (item: ToolItem): SubagentRun | undefined =>
    DELEGATING_TOOLS.has(item.name)
      ? entries.find(
          (e) => e.parent_tool_call_id === item.callId && (!item.runId || e.parent_run_id === item.runId),
        )
      : undefined;

  const openFile = (path: string) => {
    setPanelTab("files");
    setPanelOpen(true);
    setFileRequest((old) => ({ path, n: (old?.n ?? 0) + 1 }));
  };

  const toolExtra = (item: ToolItem) => {
    const entry = entryFor(item);
    if (!entry) {
      const written = WRITING_TOOLS.has(item.name) && item.done && !item.isError ? pathArgument(item) : null;
      const path = written && workdir ? workdirPath(written, workdir) : null;
      if (!path) return null;
      return (
        <button
          type="button"
          className="link file-link"
          data-testid="tool-file-link"
          onClick={() => openFile(path)}
        >
          {t("files.openFile", { path })}
        </button>
      );
    }
    return (
      <>
        {entry.error && subagentEndMessage(entry) && (
          <p
            className="error tool-subagent-error"
            data-testid="tool-subagent-error"
            title={runErrorDetail(entry) ?? undefined}
          >
            {subagentEndMessage(entry)}
          </p>
        )}
        <button type="button" className="link subagent-link" onClick={() => setOpenEntry(entry.run_id)}>
          {t("chat.openSubagentRun", {
            slug: entry.subagent_slug ?? t("chat.subagentFallback"),
            status: t(`runStatus.${entry.status}`),
          })}
        </button>
      </>
    );
  };

  // Regenerate the last answer, or edit and resend the last message (not while a run goes).
  const items = chat.transcript.items;
  let lastUserAt = -1;
  for (let i = items.length - 1; i >= 0 && lastUserAt < 0; i--) if (items[i]!.kind === "user") lastUserAt = i;
  const lastUser = lastUserAt >= 0 ? (items[lastUserAt] as UserItem) : undefined;
  const sinceLastUser = items.slice(lastUserAt + 1);
  const answerAt = sinceLastUser.map((item) => item.kind).lastIndexOf("assistant");
  // The answer of a run a notice woke is no answer to the user's message: nothing to regenerate.
  const lastAnswer = sinceLastUser.slice(0, answerAt).some((item) => item.kind === "notice")
    ? undefined
    : (sinceLastUser[answerAt] as AssistantItem | undefined);
  const messageActions = (item: UserItem | AssistantItem) => {
    if (chat.active || !threadId || !lastUser) return null;
    if (item.kind === "assistant" && item.key === lastAnswer?.key) {
      return (
        <button
          type="button"
          data-testid="message-regenerate"
          onClick={() => void chat.send(lastUser.text, lastUser.messageId ?? "last")}
        >
          {t("chat.regenerate")}
        </button>
      );
    }
    if (item.kind === "user" && item.key === lastUser.key) {
      return (
        <button type="button" data-testid="message-edit" onClick={() => setEditing(item.key)}>
          {t("common.edit")}
        </button>
      );
    }
    return null;
  };
  const editor = (item: UserItem) =>
    editing === item.key && !chat.active ? (
      <EditMessage
        text={item.text}
        onCancel={() => setEditing(null)}
        onSend={async (text) => {
          if (await chat.send(text, item.messageId ?? "last")) setEditing(null);
        }}
      />
    ) : null;

  const popupEntry = entries.find((e) => e.run_id === openEntry);
  const error = pageError ?? chat.error;
  const errorDetail = pageError ? null : chat.errorDetail;
  const currentAgent = normalAgents.find((a) => a.id === agentId);
  const agentName = currentAgent && shownAgentName(currentAgent);

  return (
    <main className="chat-page">
      <ThreadSidebar
        agents={normalAgents}
        agentId={agentId}
        onAgentChange={switchAgent}
        // A draft: the thread is created with its first message (see `startThread`).
        onNewThread={() => {
          // The draft keeps the agent in use.
          setChosenAgent(agentId);
          navigate(draftPath(slugOf(agentId)));
        }}
        threads={threads.threads}
        threadsLoading={threads.loading}
        moreThreads={threads.more}
        loadingMoreThreads={threads.loadingMore}
        onLoadMoreThreads={threads.loadMore}
        onRename={rename}
        onDelete={setDeleting}
      />
      <section className="chat-main" aria-label={t("chat.conversation")}>
        <header className="chat-head">
          <h1>{thread?.title ?? (threadId ? t("chat.conversation") : t("chat.newConversation"))}</h1>
          {chat.run && (
            <span
              className={`status ${chat.run.status}`}
              data-testid="run-status"
              data-status={chat.run.status}
              aria-live="polite"
            >
              {t(`runStatus.${chat.run.status}`)}
            </span>
          )}
          {chat.usage && chat.usage.runId === chat.run?.id && (
            <span className="run-usage" data-testid="run-usage">
              {chat.usage.total &&
              chat.usage.total.prompt_tokens + chat.usage.total.completion_tokens !==
                chat.usage.own.prompt_tokens + chat.usage.own.completion_tokens
                ? t("chat.usageWithSubagents", {
                    own: usageText(chat.usage.own),
                    total: usageText(chat.usage.total),
                  })
                : usageText(chat.usage.own)}
            </span>
          )}
          <button
            type="button"
            ref={statusToggle}
            className="narrow-only"
            data-testid="status-toggle"
            aria-expanded={panelOpen}
            onClick={() => setPanelOpen(!panelOpen)}
          >
            {entries.length > 0
              ? t("chat.statusToggleCount", { count: entries.length })
              : t("chat.statusToggle")}
            {childPendingCount > 0 && (
              <span className="badge warning-badge pending-badge" data-testid="status-pending-count">
                {t("chat.pendingCount", { count: childPendingCount })}
              </span>
            )}
          </button>
        </header>
        {chat.loading && chat.transcript.items.length === 0 ? (
          <p className="loading">{t("chat.loadingMessages")}</p>
        ) : (
          <Conversation
            transcript={chat.transcript}
            toolExtra={toolExtra}
            onOpenRun={setOpenEntry}
            messageActions={messageActions}
            editor={editor}
            focus={focus}
            hasEarlier={hasEarlier}
            loadingEarlier={loadingEarlier}
            onLoadEarlier={() => void loadEarlier()}
            empty={
              needsSetup && !threadId ? (
                <SetupCard isAdmin={user.role === "admin"} />
              ) : (
                <p className="empty">
                  {agentName ? (
                    t("chat.emptyWithAgent", { name: agentName })
                  ) : (
                    <>
                      {t("chat.emptyNoAgent")}{" "}
                      <Link to="/agents/new" data-testid="create-agent-link">
                        {t("chat.createAgentLink")}
                      </Link>
                    </>
                  )}
                </p>
              )
            }
          />
        )}
        {ownPending.length > 0 && (
          <section className="chat-approvals" aria-label={t("chat.waitingHere")}>
            {cards(ownPending)}
          </section>
        )}
        {error && (
          <div className="error chat-error" role="alert" data-testid="chat-error">
            <span title={errorDetail ?? undefined}>{error}</span>
            <button
              type="button"
              className="icon"
              aria-label={t("common.dismiss")}
              onClick={() => (pageError ? setPageError(null) : chat.dismissError())}
            >
              <Icon name="close" />
            </button>
          </div>
        )}
        <Composer
          onSend={send}
          onStop={() => void chat.cancel()}
          active={chat.active}
          disabled={!agentId}
          focusKey={threadId ?? "draft"}
        />
      </section>
      <StatusPanel
        entries={entries}
        open={panelOpen}
        onClose={closePanel}
        onOpen={(entry) => setOpenEntry(entry.run_id)}
        tab={panelTab}
        onTab={setPanelTab}
        waiting={childPending.length > 0 ? cards(childPending) : undefined}
        files={
          threadId ? (
            <FilesPanel
              key={threadId}
              threadId={threadId}
              refreshKey={activity}
              request={fileRequest}
              onWorkdir={setWorkdir}
            />
          ) : undefined
        }
      />
      {popupEntry && (
        <SubagentPopup
          key={popupEntry.run_id}
          entry={popupEntry}
          onClose={() => setOpenEntry(null)}
          pending={pending.find((group) => group.runId === popupEntry.run_id)}
          onResolved={pendingResolved}
          onActivity={bump}
        />
      )}
      {deleting && (
        <ConfirmDeleteDialog
          title={t("chat.deleteThreadTitle")}
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await unwrap(api.DELETE("/api/threads/{id}", { params: { path: { id: deleting.id } } }));
            threads.update((list) => list.filter((t) => t.id !== deleting.id));
            if (deleting.id === threadId) navigate("/chat");
            setDeleting(null);
          }}
        >
          <p>{t("chat.deleteThreadBody", { title: deleting.title })}</p>
        </ConfirmDeleteDialog>
      )}
    </main>
  );
}

/** The chat's first-run card: connect a model (admins), or whom to ask (everyone else). */
function SetupCard({ isAdmin }: { isAdmin: boolean }) {
  const { t } = useTranslation();
  return (
    <section className="setup-card" data-testid="setup-card" aria-labelledby="setup-title">
      <h2 id="setup-title">{t("setup.title")}</h2>
      <p>{isAdmin ? t("setup.adminBody") : t("setup.userBody")}</p>
      {isAdmin && (
        <Link className="button primary" to="/providers/new?setup=1" data-testid="setup-connect">
          {t("setup.adminAction")}
        </Link>
      )}
    </section>
  );
}

/** The last message, edited in place: sending replaces it and everything after it. */
function EditMessage({
  text,
  onSend,
  onCancel,
}: {
  text: string;
  onSend: (text: string) => Promise<void>;
  onCancel: () => void;
}) {
  const { t } = useTranslation();
  const [draft, setDraft] = useState(text);
  const [busy, setBusy] = useState(false);
  return (
    <form
      className="message user edit-message"
      data-testid="message-editor"
      onSubmit={async (event) => {
        event.preventDefault();
        if (!draft.trim()) return;
        setBusy(true);
        await onSend(draft);
        setBusy(false);
      }}
    >
      <textarea
        aria-label={t("chat.editLabel")}
        data-testid="message-edit-input"
        rows={3}
        autoFocus
        value={draft}
        onChange={(e) => setDraft(e.target.value)}
        onKeyDown={(e) => e.key === "Escape" && onCancel()}
      />
      <div className="message-foot">
        <button
          type="submit"
          className="primary"
          data-testid="message-edit-send"
          disabled={busy || !draft.trim()}
        >
          {t("chat.editSend")}
        </button>
        <button type="button" onClick={onCancel}>
          {t("common.cancel")}
        </button>
      </div>
    </form>
  );
}
