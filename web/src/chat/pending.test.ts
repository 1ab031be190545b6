import { describe, expect, test } from "vitest";
import type { PendingItem } from "../api/types";
import {
  argsEdited,
  buildDecisions,
  groupPending,
  initialDraft,
  parseArgs,
  withRequested,
  withResolved,
  type ItemDraft,
} from "./pending";

function approval(callId: string, run = "r1", args: unknown = { command: "echo hi" }): PendingItem {
  return {
    kind: "approval",
    tool: "execute",
    arguments: args,
    call_id: callId,
    run_id: run,
    thread_id: `t-${run}`,
    agent_slug: "runner",
  };
}

function question(callId: string, run = "r1"): PendingItem {
  return {
    kind: "question",
    question: "Which one?",
    options: ["a", "b"],
    call_id: callId,
    run_id: run,
    thread_id: `t-${run}`,
    agent_slug: "asker",
  };
}

const ids = (groups: ReturnType<typeof groupPending>) =>
  groups.map((g) => `${g.runId}:${g.items.map((i) => i.call_id).join(",")}`);

describe("pending groups", () => {
  test("items are grouped by run, in the order they came", () => {
    const groups = groupPending([approval("c1"), approval("c2", "r2"), question("c3")]);
    expect(ids(groups)).toEqual(["r1:c1,c3", "r2:c2"]);
    expect(groups[1]).toMatchObject({ threadId: "t-r2", agentSlug: "runner" });
  });

  test("a run that asks again replaces its group in place; a new one is added last", () => {
    const start = groupPending([approval("c1"), approval("c2", "r2")]);
    expect(ids(withRequested(start, "r1", [approval("c9")]))).toEqual(["r1:c9", "r2:c2"]);
    expect(ids(withRequested(start, "r3", [approval("c4", "r3")]))).toEqual(["r1:c1", "r2:c2", "r3:c4"]);
    expect(ids(withRequested(start, "r1", []))).toEqual(["r2:c2"]);
  });

  test("resolved items leave; a group with none left goes, as does a whole run resolved", () => {
    const start = groupPending([approval("c1"), question("c2"), approval("c3", "r2")]);
    expect(ids(withResolved(start, "r1", ["c1"]))).toEqual(["r1:c2", "r2:c3"]);
    expect(ids(withResolved(start, "r1", ["c1", "c2"]))).toEqual(["r2:c3"]);
    expect(ids(withResolved(start, "r2"))).toEqual(["r1:c1,c2"]);
    expect(ids(withResolved(start, "other", ["c1"]))).toEqual(["r1:c1,c2", "r2:c3"]);
  });
});

describe("decisions from a card", () => {
  const approve = (item: PendingItem, patch: Partial<Extract<ItemDraft, { kind: "approval" }>> = {}) =>
    ({
      ...(initialDraft(item) as Extract<ItemDraft, { kind: "approval" }>),
      choice: "approve",
      ...patch,
    }) as ItemDraft;

  test("the arguments start as pretty JSON", () => {
    expect(initialDraft(approval("c1"))).toEqual({
      kind: "approval",
      choice: null,
      args: '{\n  "command": "echo hi"\n}',
      reason: "",
    });
    expect(initialDraft(question("q1"))).toEqual({ kind: "question", answer: "" });
  });

  test("every item needs a choice or an answer", () => {
    const items = [approval("c1"), question("q1")];
    expect(buildDecisions(items, {})).toEqual({ ok: false, problem: "undecided", callId: "c1" });
    expect(buildDecisions(items, { c1: approve(items[0]!) })).toEqual({
      ok: false,
      problem: "undecided",
      callId: "q1",
    });
    expect(
      buildDecisions(items, { c1: approve(items[0]!), q1: { kind: "question", answer: "  " } }),
    ).toMatchObject({
      ok: false,
      callId: "q1",
    });
  });

  test("approve, reject with and without a reason, and answers are sent together", () => {
    const items = [approval("c1"), approval("c2"), approval("c3"), question("q1")];
    const outcome = buildDecisions(items, {
      c1: approve(items[0]!),
      c2: approve(items[1]!, { choice: "reject", reason: "  not now " }),
      c3: approve(items[2]!, { choice: "reject", args: "{broken" }),
      q1: { kind: "question", answer: "b" },
    });
    expect(outcome).toEqual({
      ok: true,
      decisions: [
        { call_id: "c1", decision: "approve" },
        { call_id: "c2", decision: "reject", message: "not now" },
        { call_id: "c3", decision: "reject" },
        { call_id: "q1", answer: "b" },
      ],
    });
  });

  test("changed arguments are an edit; the same arguments reformatted are not", () => {
    const item = approval("c1", "r1", { command: "echo hi", timeout_s: 5 });
    const reordered = approve(item, { args: '{"timeout_s":5,   "command":"echo hi"}' });
    expect(argsEdited(item, reordered)).toBe(false);
    expect(buildDecisions([item], { c1: reordered })).toEqual({
      ok: true,
      decisions: [{ call_id: "c1", decision: "approve" }],
    });
    const changed = approve(item, { args: '{"command":"echo bye"}' });
    expect(argsEdited(item, changed)).toBe(true);
    expect(buildDecisions([item], { c1: changed })).toEqual({
      ok: true,
      decisions: [{ call_id: "c1", decision: "edit", arguments: { command: "echo bye" } }],
    });
  });

  test("approved arguments must be a JSON object", () => {
    const item = approval("c1");
    expect(parseArgs("{")).toEqual({ ok: false, problem: "invalid_json" });
    expect(parseArgs("[1]")).toEqual({ ok: false, problem: "not_object" });
    expect(parseArgs("null")).toEqual({ ok: false, problem: "not_object" });
    expect(buildDecisions([item], { c1: approve(item, { args: "{" }) })).toEqual({
      ok: false,
      problem: "invalid_json",
      callId: "c1",
    });
    expect(argsEdited(item, approve(item, { args: "{" }))).toBe(false);
  });
});
