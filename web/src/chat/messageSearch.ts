/**
 * Searching message content (`GET /api/threads/search`): the request, the rule for when a
 * query is sent, the marking of the matched text in a hit's snippet, and the link that opens a
 * thread at one of its messages.
 */

import { api, unwrap } from "../api";
import type { Schemas } from "../api/types";

export type MessageHit = Schemas["MessageHit"];

/** Shorter queries match too much to be worth a request: titles are still filtered locally. */
export const MIN_QUERY_CHARS = 2;
/** The longest query the server takes (in characters). */
export const MAX_QUERY_CHARS = 200;

/** Up to `limit` of the caller's messages (and their agents' answers) holding `text`, newest first. */
export function searchMessages(text: string, signal: AbortSignal, limit = 20): Promise<MessageHit[]> {
  return unwrap(api.GET("/api/threads/search", { params: { query: { q: text, limit } }, signal }));
}

/** What a typed query means for the message search: too short, too long, or the text to send. */
export type QueryCheck = { kind: "short" } | { kind: "long" } | { kind: "ok"; text: string };

/** The server trims the query and counts characters (so a Chinese word of two is enough). */
export function checkQuery(query: string): QueryCheck {
  const text = query.trim();
  const chars = [...text].length;
  if (chars < MIN_QUERY_CHARS) return { kind: "short" };
  if (chars > MAX_QUERY_CHARS) return { kind: "long" };
  return { kind: "ok", text };
}

export interface SnippetPart {
  text: string;
  /** The searched text. */
  match: boolean;
}

/** ASCII letters lowered, everything else as written: lengths (and so offsets) are kept. */
const asciiLower = (text: string) => text.replace(/[A-Z]/g, (c) => c.toLowerCase());

/**
 * `snippet` cut into parts, each occurrence of `query` marked, the way the server matches:
 * literally, ASCII case ignored, any other script as written. The server joins the snippet's
 * whitespace runs into single spaces, so the query's are joined the same way.
 */
export function highlightParts(snippet: string, query: string): SnippetPart[] {
  const needle = asciiLower(query.trim().split(/\s+/).join(" "));
  if (!needle) return snippet ? [{ text: snippet, match: false }] : [];
  const haystack = asciiLower(snippet);
  const parts: SnippetPart[] = [];
  let from = 0;
  for (let at = haystack.indexOf(needle); at >= 0; at = haystack.indexOf(needle, at + needle.length)) {
    if (at > from) parts.push({ text: snippet.slice(from, at), match: false });
    parts.push({ text: snippet.slice(at, at + needle.length), match: true });
    from = at + needle.length;
  }
  if (from < snippet.length) parts.push({ text: snippet.slice(from), match: false });
  return parts;
}

const MESSAGE_HASH = "#message-";

/** The page of a thread that scrolls to one of its messages and marks it. */
export function messageLink(threadId: string, messageId: string): string {
  return `/chat/${encodeURIComponent(threadId)}${MESSAGE_HASH}${encodeURIComponent(messageId)}`;
}

/** The message a location's hash points at (see {@link messageLink}), if any. */
export function linkedMessage(hash: string): string | null {
  if (!hash.startsWith(MESSAGE_HASH)) return null;
  try {
    return decodeURIComponent(hash.slice(MESSAGE_HASH.length)) || null;
  } catch {
    return null;
  }
}
