/**
 * What the runs of a thread (and of its subagents) wait on, grouped by run, and the decisions
 * an approval card sends. A waiting run is decided all at once (`POST /api/runs/{id}/decisions`
 * takes every pending item of the run), so the UI shows one card per run.
 */

import type { DecisionInput, PendingItem } from "../api/types";

/** One waiting run and the items it waits on. */
export interface PendingGroup {
  runId: string;
  threadId: string;
  agentSlug: string;
  items: readonly PendingItem[];
}

/** The items of a thread's stream snapshot, one group per run, in the order they came. */
export function groupPending(items: readonly PendingItem[]): PendingGroup[] {
  let groups: PendingGroup[] = [];
  for (const item of items) {
    const group = groups.find((g) => g.runId === item.run_id);
    groups = group
      ? groups.map((g) => (g === group ? { ...g, items: [...g.items, item] } : g))
      : [
          ...groups,
          { runId: item.run_id, threadId: item.thread_id, agentSlug: item.agent_slug, items: [item] },
        ];
  }
  return groups;
}

/** A run asks for decisions on `items`: its group now holds exactly those. */
export function withRequested(
  groups: readonly PendingGroup[],
  runId: string,
  items: readonly PendingItem[],
): PendingGroup[] {
  const rest = groups.filter((g) => g.runId !== runId);
  const [group] = groupPending(items.filter((item) => item.run_id === runId));
  if (!group) return rest;
  const at = groups.findIndex((g) => g.runId === runId);
  // A run that asks again keeps its place, so cards do not jump around.
  return at === -1 ? [...rest, group] : [...rest.slice(0, at), group, ...rest.slice(at)];
}

/** Items of a run were decided (or its wait ran out): they are no longer pending. */
export function withResolved(
  groups: readonly PendingGroup[],
  runId: string,
  callIds?: readonly string[],
): PendingGroup[] {
  return groups
    .map((g) =>
      g.runId === runId && callIds
        ? { ...g, items: g.items.filter((item) => !callIds.includes(item.call_id)) }
        : g,
    )
    .filter((g) => (callIds ? g.items.length > 0 : g.runId !== runId));
}

/** What the person chose for one item, as a card holds it. */
export type ItemDraft =
  | {
      kind: "approval";
      choice: "approve" | "reject" | null;
      /** The arguments as editable JSON text. */
      args: string;
      /** Why it is rejected (optional; the model reads it). */
      reason: string;
    }
  | { kind: "question"; answer: string };

export function initialDraft(item: PendingItem): ItemDraft {
  if (item.kind === "question") return { kind: "question", answer: "" };
  return { kind: "approval", choice: null, args: JSON.stringify(item.arguments ?? {}, null, 2), reason: "" };
}

export type ArgsProblem = "invalid_json" | "not_object";

/** The edited arguments, or what is wrong with them. */
export function parseArgs(
  text: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; problem: ArgsProblem } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, problem: "invalid_json" };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, problem: "not_object" };
  }
  return { ok: true, value: value as Record<string, unknown> };
}

/** JSON with object keys sorted, so reordered but equal arguments compare equal. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(",")}]`;
  if (typeof value === "object" && value !== null) {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/** Whether the draft's arguments differ from what the model asked for (valid JSON only). */
export function argsEdited(item: PendingItem, draft: ItemDraft): boolean {
  if (item.kind !== "approval" || draft.kind !== "approval") return false;
  const parsed = parseArgs(draft.args);
  return parsed.ok && canonical(parsed.value) !== canonical(item.arguments ?? {});
}

export type DecisionsOutcome =
  | { ok: true; decisions: DecisionInput[] }
  /** `undecided`: an approval without a choice or a question without an answer. */
  | { ok: false; problem: "undecided" | ArgsProblem; callId: string };

/**
 * The decisions for every item of a run, or the first item that keeps them from being sent.
 * An approved call whose arguments were changed is sent as `edit` with the new arguments.
 */
export function buildDecisions(
  items: readonly PendingItem[],
  drafts: Readonly<Record<string, ItemDraft>>,
): DecisionsOutcome {
  const decisions: DecisionInput[] = [];
  for (const item of items) {
    const draft = drafts[item.call_id] ?? initialDraft(item);
    const callId = item.call_id;
    if (draft.kind === "question") {
      if (!draft.answer.trim()) return { ok: false, problem: "undecided", callId };
      decisions.push({ call_id: callId, answer: draft.answer });
      continue;
    }
    if (draft.choice === null) return { ok: false, problem: "undecided", callId };
    if (draft.choice === "reject") {
      const reason = draft.reason.trim();
      decisions.push(
        reason
          ? { call_id: callId, decision: "reject", message: reason }
          : { call_id: callId, decision: "reject" },
      );
      continue;
    }
    const parsed = parseArgs(draft.args);
    if (!parsed.ok) return { ok: false, problem: parsed.problem, callId };
    decisions.push(
      argsEdited(item, draft)
        ? { call_id: callId, decision: "edit", arguments: parsed.value }
        : { call_id: callId, decision: "approve" },
    );
  }
  return { ok: true, decisions };
}
