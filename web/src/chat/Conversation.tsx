import { useEffect, useLayoutEffect, useRef, useState, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { CopyButton } from "../components/CopyButton";
import { Icon } from "../components/Icon";
import { formatDateTime } from "../lib/format";
import { splitAttachments } from "./attachments";
import { CitationDialog } from "./CitationDialog";
import { Markdown } from "./Markdown";
import { ToolCard } from "./ToolCard";
import type { AssistantItem, Item, NoticeItem, ToolItem, Transcript, UserItem } from "./transcript";

interface ConversationProps {
  transcript: Transcript;
  /** Extra content for a tool card (the link from a `task` card to its subagent). */
  toolExtra?: (item: ToolItem) => ReactNode;
  /** Opens a subagent run's popup (from a completion notice). */
  onOpenRun?: (runId: string) => void;
  /** Extra actions under a message (regenerate, edit). */
  messageActions?: (item: UserItem | AssistantItem) => ReactNode;
  /** An editor shown instead of a user message (edit-and-resend), or `null`. */
  editor?: (item: UserItem) => ReactNode;
  empty?: ReactNode;
  /**
   * A message to scroll to and mark for a moment (a search hit opened); `key` tells one
   * opening from the next, so opening the same message again marks it again.
   */
  focus?: { messageId: string; key: string } | null;
  /** The thread may have messages before the first one shown: a button at the top reads them. */
  hasEarlier?: boolean;
  loadingEarlier?: boolean;
  onLoadEarlier?: () => void;
}

/** How long a message opened from a search stays marked. */
const FLASH_MS = 2000;

/** The persisted message an item shows, if it shows one a search can find. */
const messageIdOf = (item: Item) =>
  item.kind === "user" || item.kind === "assistant" ? item.messageId : null;

/** A background subagent's completion, as a card that opens the child's run. */
function NoticeCard({ item, onOpenRun }: { item: NoticeItem; onOpenRun?: (runId: string) => void }) {
  const { t } = useTranslation();
  const notice = item.notice!;
  const failed = notice.status !== "success";
  return (
    <div
      className={failed ? "notice-card failed" : "notice-card"}
      data-testid="notice-card"
      data-run-id={notice.run_id}
      data-status={notice.status}
    >
      <span>
        {t("notice.finished", {
          slug: notice.subagent_slug ?? t("chat.subagentFallback"),
          status: t(`runStatus.${notice.status}`),
        })}
      </span>
      {onOpenRun && (
        <button
          type="button"
          className="link"
          data-testid="notice-open"
          onClick={() => onOpenRun(notice.run_id)}
        >
          {t("notice.open")}
        </button>
      )}
    </div>
  );
}

/** Under a message: when it was written, copy, and whatever else the page offers. */
function MessageFoot({ item, actions }: { item: UserItem | AssistantItem; actions?: ReactNode }) {
  return (
    <div className="message-foot">
      <time dateTime={item.at} data-testid="message-time">
        {formatDateTime(item.at)}
      </time>
      <CopyButton testId="message-copy" text={() => item.text} />
      {actions}
    </div>
  );
}

interface EntryProps {
  item: Item;
  editor?: (item: UserItem) => ReactNode;
  onOpenRun?: (runId: string) => void;
  toolExtra?: (item: ToolItem) => ReactNode;
  messageActions?: (item: UserItem | AssistantItem) => ReactNode;
  /** Opens a knowledge base passage an assistant message cites. */
  onCitation?: (ref: string) => void;
  /** Marked for a moment: the message a search hit opened. */
  flash?: boolean;
}

function Entry({ item, toolExtra, messageActions, onOpenRun, editor, onCitation, flash }: EntryProps) {
  const { t } = useTranslation();
  switch (item.kind) {
    case "user":
      return (
        editor?.(item) ?? (
          <div
            className={`message user${item.steer ? " steer" : ""}${flash ? " flash" : ""}`}
            data-testid="message-user"
            data-message-id={item.messageId ?? undefined}
          >
            {item.steer && (
              <span className="steer-label" data-testid="message-steer">
                {t("chat.steered")}
              </span>
            )}
            <UserText text={item.text} />
            <MessageFoot item={item} actions={messageActions?.(item)} />
          </div>
        )
      );
    case "assistant":
      return (
        <div
          className={flash ? "message assistant flash" : "message assistant"}
          data-testid="message-assistant"
          data-message-id={item.messageId ?? undefined}
          aria-busy={item.streaming}
        >
          <Markdown text={item.text} onCitation={onCitation} />
          {item.streaming && <span className="cursor" aria-hidden="true" />}
          {!item.streaming && <MessageFoot item={item} actions={messageActions?.(item)} />}
        </div>
      );
    case "tool":
      return <ToolCard item={item} extra={toolExtra?.(item)} onOpenRun={onOpenRun} />;
    case "notice":
      return item.notice ? (
        <NoticeCard item={item} onOpenRun={onOpenRun} />
      ) : (
        <p className="notice">{item.text}</p>
      );
  }
}

/** The messages and tool calls of a transcript, kept scrolled to the newest while at the end. */
export function Conversation({
  transcript,
  toolExtra,
  messageActions,
  onOpenRun,
  editor,
  empty,
  focus,
  hasEarlier = false,
  loadingEarlier = false,
  onLoadEarlier,
}: ConversationProps) {
  const { t } = useTranslation();
  const end = useRef<HTMLDivElement>(null);
  const box = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);
  const earlierButton = useRef<HTMLButtonElement>(null);
  // While earlier messages load: the first item then shown, and where it stood on screen, so
  // the view stays on it once they are put before it.
  const anchor = useRef<{ key: string | undefined; el: Element | null; top: number } | null>(null);

  function loadEarlier() {
    const el = earlierButton.current?.nextElementSibling ?? null;
    anchor.current = { key: transcript.items[0]?.key, el, top: el?.getBoundingClientRect().top ?? 0 };
    onLoadEarlier?.();
  }

  // Before the scroll to the end below: messages put before the first keep the view in place.
  useLayoutEffect(() => {
    const held = anchor.current;
    const el = box.current;
    if (!held || !el) return;
    if (transcript.items[0]?.key !== held.key) {
      anchor.current = null;
      if (held.el?.isConnected) {
        el.scrollTop += held.el.getBoundingClientRect().top - held.top;
        pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 48;
      }
    } else if (!hasEarlier) {
      // Nothing came (there was nothing earlier after all).
      anchor.current = null;
    }
  }, [transcript, hasEarlier]);
  // The citation whose passage is open, if any.
  const [citing, setCiting] = useState<string | null>(null);

  useEffect(() => {
    if (pinned.current) end.current?.scrollIntoView?.({ block: "end" });
  }, [transcript]);

  // The message a search hit opened: brought into view once it is shown (the messages may
  // still be loading), marked until FLASH_MS after that.
  const focusShown = focus != null && transcript.items.some((item) => messageIdOf(item) === focus.messageId);
  const focusKey = focus?.key;
  const [faded, setFaded] = useState<string | null>(null);
  const flashing = focusShown && faded !== focusKey ? focus.messageId : null;
  const scrolledFor = useRef<string | null>(null);
  useEffect(() => {
    if (!focusShown || !focus || scrolledFor.current === focus.key) return;
    const target = [...(box.current?.querySelectorAll<HTMLElement>("[data-message-id]") ?? [])].find(
      (el) => el.dataset.messageId === focus.messageId,
    );
    if (!target) return;
    scrolledFor.current = focus.key;
    // Reading back through the thread: newer messages must not pull the view to the end.
    pinned.current = false;
    target.scrollIntoView?.({ block: "center" });
  }, [focus, focusShown]);
  useEffect(() => {
    if (!focusShown || !focusKey) return;
    const timer = setTimeout(() => setFaded(focusKey), FLASH_MS);
    return () => clearTimeout(timer);
  }, [focusShown, focusKey]);

  return (
    <>
      <div
        className="conversation"
        ref={box}
        role="log"
        aria-live="polite"
        onScroll={() => {
          const el = box.current;
          if (el) pinned.current = el.scrollHeight - el.scrollTop - el.clientHeight < 48;
        }}
      >
        {hasEarlier && onLoadEarlier && transcript.items.length > 0 && (
          <button
            type="button"
            ref={earlierButton}
            className="load-earlier"
            data-testid="load-earlier"
            disabled={loadingEarlier}
            aria-busy={loadingEarlier}
            onClick={loadEarlier}
          >
            {loadingEarlier ? t("chat.loadingEarlier") : t("chat.loadEarlier")}
          </button>
        )}
        {transcript.items.length === 0 && empty}
        {transcript.items.map((item) => (
          <Entry
            key={item.key}
            item={item}
            toolExtra={toolExtra}
            messageActions={messageActions}
            onOpenRun={onOpenRun}
            editor={editor}
            onCitation={setCiting}
            flash={flashing != null && messageIdOf(item) === flashing}
          />
        ))}
        <div ref={end} />
      </div>
      {citing && <CitationDialog citation={citing} onClose={() => setCiting(null)} />}
    </>
  );
}

/** A user message: its text, and the files attached to it (the line naming them) as chips. */
function UserText({ text }: { text: string }) {
  const { t } = useTranslation();
  const { text: said, paths } = splitAttachments(text);
  return (
    <>
      {said && <p className="pre">{said}</p>}
      {paths.length > 0 && (
        <ul className="message-files" aria-label={t("composer.attachedFiles")} data-testid="message-files">
          {paths.map((path) => (
            <li key={path} className="message-file" data-path={path}>
              <Icon name="paperclip" />
              {path}
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
