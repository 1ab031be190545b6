/**
 * The rendered conversation, built from persisted messages and kept up to date by run events.
 *
 * Applying events is idempotent: a message already shown (by id) or a tool call already shown
 * (by run and call id) is not added again, so a replayed stream (a popup opened mid-run, a
 * resume that overlaps what the persisted messages already hold) never duplicates anything.
 */

import type { RunEvent } from "../api/events";
import { isTerminalStatus } from "../api/events";
import type { Message } from "../api/types";

export interface UserItem {
  kind: "user";
  key: string;
  /** The persisted message's id (`null` for an input shown before the server commits it). */
  messageId: string | null;
  text: string;
  /** When it was sent. */
  at: string;
  /** Sent into a run while it was active (steering): the model read it before its next step. */
  steer: boolean;
}

export interface AssistantItem {
  kind: "assistant";
  key: string;
  /** The persisted message's id (`null` while it streams, before the server commits it). */
  messageId: string | null;
  runId: string | null;
  text: string;
  /** Still receiving deltas: not yet committed. */
  streaming: boolean;
  /** When it was written (or began streaming). */
  at: string;
}

export interface ToolItem {
  kind: "tool";
  key: string;
  runId: string | null;
  callId: string;
  name: string;
  /** The raw JSON text the model produced. */
  arguments: string;
  /** The full result, or the event's preview until the tool message arrives. */
  result: string | null;
  isError: boolean;
  done: boolean;
  /** Its run ended before it got a result (a stop, crash or cancel): it never will. */
  interrupted: boolean;
}

export interface NoticeItem {
  kind: "notice";
  key: string;
  text: string;
  /** A completion notice: the background subagent run it reports on. */
  notice: Message["notice"] | null;
}

export type Item = UserItem | AssistantItem | ToolItem | NoticeItem;

export interface Transcript {
  items: readonly Item[];
  /** Ids of the committed messages already shown. */
  seen: ReadonlySet<string>;
}

export const EMPTY_TRANSCRIPT: Transcript = { items: [], seen: new Set() };

const toolKey = (runId: string | null, callId: string) => `call:${runId ?? "-"}:${callId}`;

function toolItems(message: Message): ToolItem[] {
  return (message.tool_calls ?? []).map((call) => ({
    kind: "tool",
    key: toolKey(message.run_id ?? null, call.id),
    runId: message.run_id ?? null,
    callId: call.id,
    name: call.name,
    arguments: call.arguments,
    result: null,
    isError: false,
    done: call.interrupted ?? false,
    interrupted: call.interrupted ?? false,
  }));
}

/** Appends one committed message; `replaceKey` names a streaming item it takes the place of. */
function addMessage(items: Item[], message: Message, replaceKey?: string): Item[] {
  const runId = message.run_id ?? null;
  switch (message.role) {
    case "user":
      return [
        ...items,
        {
          kind: "user",
          key: `m:${message.id}`,
          messageId: message.id,
          text: message.content,
          at: message.created_at,
          steer: message.steer ?? false,
        },
      ];
    case "system":
      return [
        ...items,
        { kind: "notice", key: `m:${message.id}`, text: message.content, notice: message.notice ?? null },
      ];
    case "tool": {
      const key = toolKey(runId, message.tool_call_id ?? "");
      const finish = (item: Item): Item =>
        item.kind === "tool" && item.key === key
          ? { ...item, result: message.content, isError: message.is_error ?? false, done: true }
          : item;
      if (items.some((item) => item.key === key)) return items.map(finish);
      return [
        ...items,
        {
          kind: "tool",
          key,
          runId,
          callId: message.tool_call_id ?? "",
          name: message.tool_name ?? "tool",
          arguments: "",
          result: message.content,
          isError: message.is_error ?? false,
          done: true,
          interrupted: false,
        },
      ];
    }
    case "assistant": {
      const own: Item[] = [];
      if (message.content.trim()) {
        own.push({
          kind: "assistant",
          key: `m:${message.id}`,
          messageId: message.id,
          runId,
          text: message.content,
          streaming: false,
          at: message.created_at,
        });
      }
      own.push(...toolItems(message).filter((tool) => !items.some((item) => item.key === tool.key)));
      const at = replaceKey ? items.findIndex((item) => item.key === replaceKey) : -1;
      if (at === -1) return [...items, ...own];
      return [...items.slice(0, at), ...own, ...items.slice(at + 1)];
    }
  }
}

/** The transcript of a thread's persisted messages. */
export function fromMessages(messages: readonly Message[]): Transcript {
  let items: Item[] = [];
  for (const message of messages) items = addMessage(items, message);
  return { items, seen: new Set(messages.map((m) => m.id)) };
}

/**
 * Adds a message committed outside the followed stream (a completion notice, a message sent
 * into the running run), unless already shown.
 */
export function addCommitted(transcript: Transcript, message: Message): Transcript {
  if (transcript.seen.has(message.id)) return transcript;
  return {
    items: addMessage([...transcript.items], message),
    seen: new Set(transcript.seen).add(message.id),
  };
}

/** The transcript before its last user message: what a regenerated or edited turn replaces. */
export function truncateAtLastUser(transcript: Transcript): Transcript {
  let at = -1;
  for (let i = transcript.items.length - 1; i >= 0; i--) {
    if (transcript.items[i]!.kind === "user") {
      at = i;
      break;
    }
  }
  return at < 0 ? transcript : { ...transcript, items: transcript.items.slice(0, at) };
}

/** Shows the user's input of a run just started (the server commits it without an event). */
export function addUserInput(transcript: Transcript, runId: string, text: string): Transcript {
  const item: UserItem = {
    kind: "user",
    key: `input:${runId}`,
    messageId: null,
    text,
    at: new Date().toISOString(),
    steer: false,
  };
  return { ...transcript, items: [...transcript.items, item] };
}

function streamingKey(items: readonly Item[], runId: string): string | undefined {
  for (let i = items.length - 1; i >= 0; i--) {
    const item = items[i]!;
    if (item.kind === "assistant" && item.streaming && item.runId === runId) return item.key;
  }
  return undefined;
}

/** Applies one run event. */
export function applyEvent(transcript: Transcript, event: RunEvent): Transcript {
  const { items, seen } = transcript;
  switch (event.type) {
    case "message_started": {
      if (event.role !== "assistant") return transcript;
      const item: AssistantItem = {
        kind: "assistant",
        key: `live:${event.run_id}:${event.id}`,
        messageId: null,
        runId: event.run_id,
        text: "",
        streaming: true,
        at: event.at,
      };
      // A message still streaming when the next one starts was never committed: the model's
      // stream broke and the server asks again, so the partial text goes.
      const kept = items.filter(
        (old) => !(old.kind === "assistant" && old.streaming && old.runId === event.run_id),
      );
      return { items: [...kept, item], seen };
    }
    case "message_delta": {
      const key = streamingKey(items, event.run_id);
      if (!key) {
        const item: AssistantItem = {
          kind: "assistant",
          key: `live:${event.run_id}:${event.id}`,
          messageId: null,
          runId: event.run_id,
          text: event.text,
          streaming: true,
          at: event.at,
        };
        return { items: [...items, item], seen };
      }
      return {
        items: items.map((item) =>
          item.key === key && item.kind === "assistant" ? { ...item, text: item.text + event.text } : item,
        ),
        seen,
      };
    }
    case "message_completed": {
      const { message } = event;
      const key = message.role === "assistant" ? streamingKey(items, event.run_id) : undefined;
      if (seen.has(message.id)) {
        return key ? { items: items.filter((item) => item.key !== key), seen } : transcript;
      }
      return { items: addMessage([...items], message, key), seen: new Set(seen).add(message.id) };
    }
    case "tool_call_started": {
      const key = toolKey(event.run_id, event.call_id);
      if (items.some((item) => item.key === key)) return transcript;
      const item: ToolItem = {
        kind: "tool",
        key,
        runId: event.run_id,
        callId: event.call_id,
        name: event.name,
        arguments: event.arguments,
        result: null,
        isError: false,
        done: false,
        interrupted: false,
      };
      return { items: [...items, item], seen };
    }
    case "tool_call_finished": {
      const key = toolKey(event.run_id, event.call_id);
      return {
        items: items.map((item) =>
          item.key === key && item.kind === "tool" && !item.done
            ? { ...item, result: event.preview, isError: event.is_error, done: true }
            : item,
        ),
        seen,
      };
    }
    case "run_status": {
      if (!isTerminalStatus(event.status)) return transcript;
      // Whatever was still streaming stops here; a cancelled turn keeps its partial text, and a
      // reply that never got any text is no reply at all.
      return {
        items: items
          .filter(
            (item) =>
              !(
                item.kind === "assistant" &&
                item.streaming &&
                item.runId === event.run_id &&
                !item.text.trim()
              ),
          )
          .map((item) => {
            if (item.kind === "assistant" && item.streaming && item.runId === event.run_id) {
              return { ...item, streaming: false };
            }
            if (item.kind === "tool" && !item.done && item.runId === event.run_id) {
              // A run that ends while a call is open has cut it off: no result will come.
              return { ...item, done: true, interrupted: true };
            }
            return item;
          }),
        seen,
      };
    }
    case "usage":
    case "error":
      return transcript;
  }
}

/**
 * Whether the transcript shows nothing that the persisted messages lack beyond what a
 * replay from this point restores: no message is half-streamed.
 */
export function isSettled(transcript: Transcript): boolean {
  return !transcript.items.some((item) => item.kind === "assistant" && item.streaming);
}

/** The highest seq among run `runId`'s assistant messages in `messages`, if it has any. */
export function lastAssistantSeq(messages: readonly Message[], runId: string): number | undefined {
  let last: number | undefined;
  for (const message of messages) {
    if (message.run_id === runId && message.role === "assistant")
      last = Math.max(last ?? message.seq, message.seq);
  }
  return last;
}

/**
 * For a stream that replays a run from its first event over a page that already holds the run's
 * assistant messages up to seq `shownUpTo`: whether each event should reach the transcript.
 * The run's messages commit in order, so while no assistant message at or past `shownUpTo` has
 * completed in the replay, the one streaming is one the page holds: its start and text are
 * left out (its `message_completed` then finds it shown), instead of a second copy streaming
 * beside it until then. Everything else, and everything past the page, goes through.
 */
export function replayFilter(shownUpTo: number | undefined): (event: RunEvent) => boolean {
  let completed = -Infinity;
  return (event) => {
    if (shownUpTo === undefined) return true;
    if (event.type === "message_completed") {
      if (event.message.role === "assistant") completed = Math.max(completed, event.message.seq);
      return true;
    }
    const streaming =
      (event.type === "message_started" && event.role === "assistant") || event.type === "message_delta";
    return !(streaming && completed < shownUpTo);
  };
}
