import { useEffect, useRef, type ReactNode } from "react";
import { Markdown } from "./Markdown";
import { ToolCard } from "./ToolCard";
import type { Item, ToolItem, Transcript } from "./transcript";

interface ConversationProps {
  transcript: Transcript;
  /** Extra content for a tool card (the link from a `task` card to its subagent). */
  toolExtra?: (item: ToolItem) => ReactNode;
  empty?: ReactNode;
}

function Entry({ item, toolExtra }: { item: Item; toolExtra?: (item: ToolItem) => ReactNode }) {
  switch (item.kind) {
    case "user":
      return (
        <div className="message user" data-testid="message-user">
          <p className="pre">{item.text}</p>
        </div>
      );
    case "assistant":
      return (
        <div className="message assistant" data-testid="message-assistant" aria-busy={item.streaming}>
          <Markdown text={item.text} />
          {item.streaming && <span className="cursor" aria-hidden="true" />}
        </div>
      );
    case "tool":
      return <ToolCard item={item} extra={toolExtra?.(item)} />;
    case "notice":
      return <p className="notice">{item.text}</p>;
  }
}

/** The messages and tool calls of a transcript, kept scrolled to the newest while at the end. */
export function Conversation({ transcript, toolExtra, empty }: ConversationProps) {
  const end = useRef<HTMLDivElement>(null);
  const box = useRef<HTMLDivElement>(null);
  const pinned = useRef(true);

  useEffect(() => {
    if (pinned.current) end.current?.scrollIntoView?.({ block: "end" });
  }, [transcript]);

  return (
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
      {transcript.items.length === 0 && empty}
      {transcript.items.map((item) => (
        <Entry key={item.key} item={item} toolExtra={toolExtra} />
      ))}
      <div ref={end} />
    </div>
  );
}
