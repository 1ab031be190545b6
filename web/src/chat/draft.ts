/**
 * The new-chat draft: a conversation that exists only in the page until its first message.
 * "New thread" opens one without asking the server for anything, so leaving it leaves no empty
 * thread behind; the first message creates the thread and starts its run together.
 */

/** The title a thread gets when it is created without one (the server's default). */
export const DEFAULT_TITLE = "New thread";

/** A thread title from the first message (counted in characters, so Chinese is cut right). */
export function titleFrom(input: string, fallback: string): string {
  const line = input.trim().split("\n")[0] ?? "";
  const chars = [...line];
  return chars.length > 60 ? `${chars.slice(0, 59).join("")}…` : line || fallback;
}

/**
 * What sending a message does: steer the open thread's running agent, start a run on the open
 * thread, or (on a draft, with no thread yet) create the thread and start its first run.
 */
export type SendMode = "steer" | "send" | "create";

export function sendMode(threadId: string | undefined, active: boolean): SendMode {
  if (!threadId) return "create";
  return active ? "steer" : "send";
}

/** A draft's address: it names its agent, so a reload opens the same new chat. */
export function draftPath(agentSlug: string | undefined): string {
  return agentSlug ? `/chat/new?agent=${encodeURIComponent(agentSlug)}` : "/chat";
}
