/**
 * The command palette's entries and how a query filters them, without React: the pages of the
 * navigation, New thread, and a chat with each agent.
 */

import type { Agent } from "../api/types";
import { draftPath } from "../chat/draft";

export type PaletteKind = "page" | "action" | "agent";

export interface PaletteItem {
  /** Unique in the list (the option's id derives from it). */
  id: string;
  kind: PaletteKind;
  label: string;
  /** Shown beside the label, and searched as well. */
  hint?: string;
  /** Searched but not shown (an agent's slug). */
  keywords?: string;
  /** Where choosing it goes; `null` runs `action` instead. */
  to: string | null;
  action?: "shortcuts";
}

/** A page of the navigation: its address, its words (`nav.*`), and who sees it. */
export interface PalettePage {
  to: string;
  label: string;
  adminOnly?: boolean;
}

interface BuildInput {
  pages: readonly PalettePage[];
  isAdmin: boolean;
  /** The agents a chat can be opened with (subagents are left out here). */
  agents: readonly Agent[];
  /** The agent in use (the open thread's or draft's, else none): New thread keeps it. */
  currentAgentId?: string;
  words: {
    newThread: string;
    chatWith: (name: string) => string;
    shortcuts: string;
  };
}

/** Every entry, in the order shown: New thread, the pages, the agents, the shortcuts list. */
export function paletteItems({ pages, isAdmin, agents, currentAgentId, words }: BuildInput): PaletteItem[] {
  const normal = agents.filter((agent) => !agent.is_subagent);
  // As the chat's New thread button does: the agent in use, else the default one, else the first.
  const current =
    normal.find((agent) => agent.id === currentAgentId) ??
    normal.find((agent) => agent.is_default) ??
    normal[0];
  const items: PaletteItem[] = [];
  if (current) {
    items.push({
      id: "new-thread",
      kind: "action",
      label: words.newThread,
      hint: current.name,
      keywords: current.slug,
      to: draftPath(current.slug),
    });
  }
  for (const page of pages) {
    if (page.adminOnly && !isAdmin) continue;
    items.push({ id: `page:${page.to}`, kind: "page", label: page.label, hint: page.to, to: page.to });
  }
  for (const agent of normal) {
    items.push({
      id: `agent:${agent.id}`,
      kind: "agent",
      label: words.chatWith(agent.name),
      keywords: `${agent.name} ${agent.slug}`,
      to: draftPath(agent.slug),
    });
  }
  items.push({ id: "shortcuts", kind: "action", label: words.shortcuts, to: null, action: "shortcuts" });
  return items;
}

/**
 * The entries a query keeps: every word of it appears in the label, the hint or the keywords
 * (any case). An empty query keeps them all.
 */
export function filterItems(items: readonly PaletteItem[], query: string): PaletteItem[] {
  const words = query.toLocaleLowerCase().split(/\s+/).filter(Boolean);
  if (words.length === 0) return [...items];
  return items.filter((item) => {
    const text = [item.label, item.hint ?? "", item.keywords ?? ""].join(" ").toLocaleLowerCase();
    return words.every((word) => text.includes(word));
  });
}
