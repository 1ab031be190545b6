import { describe, expect, test } from "vitest";
import type { RunEvent, RunEventKind } from "../api/events";
import type { Message } from "../api/types";
import {
  addCommitted,
  addUserInput,
  applyEvent,
  EMPTY_TRANSCRIPT,
  fromMessages,
  isSettled,
  lastAssistantSeq,
  replayFilter,
  type Transcript,
} from "./transcript";

let nextId = 1;
function ev(kind: RunEventKind, run = "r1"): RunEvent {
  return { id: nextId++, run_id: run, thread_id: "t1", at: "2026-01-01T00:00:00Z", ...kind };
}

function msg(id: string, role: Message["role"], content: string, extra: Partial<Message> = {}): Message {
  return {
    id,
    thread_id: "t1",
    run_id: "r1",
    seq: 0,
    role,
    content,
    created_at: "2026-01-01T00:00:00Z",
    ...extra,
  } as Message;
}

const toolTurn = msg("m2", "assistant", "", {
  tool_calls: [{ id: "call_0_0", name: "write_file", arguments: '{"path":"a.txt"}' }],
});
const toolResult = msg("m3", "tool", "wrote a.txt", { tool_call_id: "call_0_0", tool_name: "write_file" });
const answer = msg("m4", "assistant", "done: wrote a.txt");

function play(start: Transcript, events: RunEvent[]): Transcript {
  return events.reduce(applyEvent, start);
}

function runEvents(): RunEvent[] {
  return [
    ev({ type: "run_status", status: "running" }),
    ev({ type: "message_started", role: "assistant" }),
    ev({ type: "message_completed", message: toolTurn }),
    ev({ type: "tool_call_started", call_id: "call_0_0", name: "write_file", arguments: '{"path":"a.txt"}' }),
    ev({
      type: "tool_call_finished",
      call_id: "call_0_0",
      name: "write_file",
      is_error: false,
      preview: "wrote…",
    }),
    ev({ type: "message_completed", message: toolResult }),
    ev({ type: "message_started", role: "assistant" }),
    ev({ type: "message_delta", text: "done: " }),
    ev({ type: "message_delta", text: "wrote a.txt" }),
    ev({ type: "message_completed", message: answer }),
    ev({ type: "run_status", status: "success", output: "done: wrote a.txt" }),
  ];
}

const summary = (t: Transcript) =>
  t.items.map((item) =>
    item.kind === "tool" ? `tool:${item.name}=${item.result}` : `${item.kind}:${item.text}`,
  );

describe("transcript", () => {
  test("persisted messages show user text, assistant text and tool cards with results", () => {
    const t = fromMessages([msg("m1", "user", "hi"), toolTurn, toolResult, answer]);
    expect(summary(t)).toEqual(["user:hi", "tool:write_file=wrote a.txt", "assistant:done: wrote a.txt"]);
  });

  test("a live run streams text and ends equal to its persisted messages", () => {
    const live = play(addUserInput(EMPTY_TRANSCRIPT, "r1", "hi"), runEvents());
    const persisted = fromMessages([msg("m1", "user", "hi"), toolTurn, toolResult, answer]);
    expect(summary(live)).toEqual(summary(persisted));
    expect(isSettled(live)).toBe(true);
  });

  test("streaming text is visible before the message is committed", () => {
    const events = runEvents().slice(0, 9);
    const t = play(EMPTY_TRANSCRIPT, events);
    expect(summary(t).at(-1)).toBe("assistant:done: wrote a.txt");
    expect(isSettled(t)).toBe(false);
  });

  test("replaying a run over its persisted messages adds nothing twice", () => {
    const persisted = fromMessages([msg("m1", "user", "hi"), toolTurn, toolResult, answer]);
    const replayed = play(persisted, runEvents());
    expect(summary(replayed)).toEqual(summary(persisted));
  });

  test("resuming mid-run from a settled point completes the transcript without duplicates", () => {
    const events = runEvents();
    // The page reloaded after the tool call started: persisted messages hold the tool turn.
    const reloaded = fromMessages([msg("m1", "user", "hi"), toolTurn]);
    const resumed = play(reloaded, events.slice(4));
    expect(summary(resumed)).toEqual([
      "user:hi",
      "tool:write_file=wrote a.txt",
      "assistant:done: wrote a.txt",
    ]);
  });

  test("a tool card shows the preview until the full result arrives", () => {
    const t = play(EMPTY_TRANSCRIPT, runEvents().slice(0, 5));
    expect(summary(t)).toEqual(["tool:write_file=wrote…"]);
  });

  test("same call ids in different runs are different cards", () => {
    const first = fromMessages([toolTurn, toolResult]);
    const second = applyEvent(
      first,
      ev({ type: "tool_call_started", call_id: "call_0_0", name: "ls", arguments: "{}" }, "r2"),
    );
    expect(second.items.filter((i) => i.kind === "tool")).toHaveLength(2);
  });

  test("a terminal status stops streaming and keeps a cancelled turn's partial text", () => {
    const t = play(EMPTY_TRANSCRIPT, [
      ev({ type: "message_started", role: "assistant" }),
      ev({ type: "message_delta", text: "partial" }),
      ev({ type: "run_status", status: "cancelled" }),
    ]);
    expect(summary(t)).toEqual(["assistant:partial"]);
    expect(isSettled(t)).toBe(true);
  });

  test("a run cancelled before any text leaves no empty reply bubble", () => {
    const t = play(fromMessages([msg("m1", "user", "hi")]), [
      ev({ type: "message_started", role: "assistant" }),
      ev({ type: "run_status", status: "cancelled" }),
    ]);
    expect(summary(t)).toEqual(["user:hi"]);
    expect(isSettled(t)).toBe(true);
  });

  test("system messages (notices) are shown as notices", () => {
    const t = fromMessages([msg("n1", "system", "subagent finished", { run_id: null })]);
    expect(summary(t)).toEqual(["notice:subagent finished"]);
  });
});

describe("interrupted tool calls", () => {
  test("a stored call the server marks interrupted shows as done and interrupted", () => {
    const cut = msg("m2", "assistant", "", {
      tool_calls: [{ id: "call_0_0", name: "execute", arguments: "{}", interrupted: true }],
    });
    const items = fromMessages([msg("m1", "user", "go"), cut]).items;
    const tool = items.find((i) => i.kind === "tool");
    expect(tool).toMatchObject({ kind: "tool", done: true, interrupted: true, result: null });
  });

  test("a call still open when its run ends is interrupted, a finished one is not", () => {
    const open = play(EMPTY_TRANSCRIPT, [
      ev({ type: "run_status", status: "running" }),
      ev({ type: "message_completed", message: toolTurn }),
      ev({ type: "tool_call_started", call_id: "call_0_0", name: "write_file", arguments: "{}" }),
      ev({ type: "run_status", status: "cancelled" }),
    ]);
    expect(open.items.find((i) => i.kind === "tool")).toMatchObject({ done: true, interrupted: true });
    const finished = play(EMPTY_TRANSCRIPT, runEvents());
    expect(finished.items.find((i) => i.kind === "tool")).toMatchObject({ done: true, interrupted: false });
  });
});

describe("a model stream asked again", () => {
  test("the partial text of a broken attempt is replaced by the retried answer", () => {
    const t = play(EMPTY_TRANSCRIPT, [
      ev({ type: "run_status", status: "running" }),
      ev({ type: "message_started", role: "assistant" }),
      ev({ type: "message_delta", text: "half an ans" }),
      ev({ type: "error", message: "the model stream broke; retrying (attempt 2 of 3)" }),
      ev({ type: "message_started", role: "assistant" }),
      ev({ type: "message_delta", text: "the whole answer" }),
    ]);
    const texts = t.items
      .filter((i) => i.kind === "assistant")
      .map((i) => (i.kind === "assistant" ? i.text : ""));
    expect(texts).toEqual(["the whole answer"]);
  });
});

describe("messages sent into a running run", () => {
  const steered = msg("s1", "user", "also mention cats", { steer: true });

  test("a steer message from history is a user message marked steer; others are not", () => {
    const t = fromMessages([msg("m1", "user", "hi"), answer, steered]);
    const users = t.items.filter((i) => i.kind === "user");
    expect(users.map((u) => (u.kind === "user" ? [u.text, u.steer] : null))).toEqual([
      ["hi", false],
      ["also mention cats", true],
    ]);
    expect(addUserInput(EMPTY_TRANSCRIPT, "r1", "typed").items[0]).toMatchObject({ steer: false });
  });

  test("shown when sent, it is not added again when the run reads it", () => {
    const sent = addCommitted(addUserInput(EMPTY_TRANSCRIPT, "r1", "hi"), steered);
    const read = play(sent, [
      ev({ type: "message_completed", message: steered }),
      ev({ type: "message_completed", message: answer }),
    ]);
    expect(summary(read)).toEqual(["user:hi", "user:also mention cats", "assistant:done: wrote a.txt"]);
    expect(addCommitted(read, steered)).toBe(read);
  });
});

describe("a parent woken by its background child", () => {
  const notice = msg("n1", "system", "[notice] Background subagent late finished", {
    run_id: "r2",
    notice: {
      run_id: "child-run",
      thread_id: "child-thread",
      status: "success",
      subagent_slug: "late",
    },
  });

  test("the notice that started the woken run is a notice card, followed by the run's answer", () => {
    const woken = fromMessages([msg("m1", "user", "start"), answer, notice]);
    const answered = play(woken, [
      ev({ type: "message_started", role: "assistant" }, "r2"),
      ev({ type: "message_completed", message: msg("m9", "assistant", "Done", { run_id: "r2" }) }, "r2"),
      ev({ type: "run_status", status: "success" }, "r2"),
    ]);
    expect(summary(answered)).toEqual([
      "user:start",
      "assistant:done: wrote a.txt",
      "notice:[notice] Background subagent late finished",
      "assistant:Done",
    ]);
    const card = answered.items.find((i) => i.kind === "notice");
    expect(card).toMatchObject({ notice: { run_id: "child-run", subagent_slug: "late" } });
  });
});

describe("a run replayed from its first event over a page that holds part of it", () => {
  const page = [
    msg("m1", "user", "hi", { seq: 1 }),
    msg("m2", "assistant", "", { seq: 2, tool_calls: toolTurn.tool_calls }),
    msg("m3", "tool", "wrote a.txt", { seq: 3, tool_call_id: "call_0_0", tool_name: "write_file" }),
    msg("m4", "assistant", "done: wrote a.txt", { seq: 4 }),
  ];
  const events = () => {
    const [started, firstStarted, , toolStarted, toolFinished, , answerStarted, delta1, delta2, , end] =
      runEvents();
    return [
      started!,
      firstStarted!,
      ev({ type: "message_completed", message: page[1]! }),
      toolStarted!,
      toolFinished!,
      ev({ type: "message_completed", message: page[2]! }),
      answerStarted!,
      delta1!,
      delta2!,
      ev({ type: "message_completed", message: page[3]! }),
      end!,
    ];
  };
  /** Every state the replay passes through, each event through `shows` when given. */
  const states = (start: Transcript, shows?: (event: RunEvent) => boolean) => {
    const seen: Transcript[] = [];
    events().reduce((t, event) => {
      const next = !shows || shows(event) ? applyEvent(t, event) : t;
      seen.push(next);
      return next;
    }, start);
    return seen;
  };
  const answers = (t: Transcript) => summary(t).filter((s) => s === "assistant:done: wrote a.txt").length;

  test("an answer the page holds is never shown twice, not even while it streams again", () => {
    const shown = fromMessages(page);
    expect(lastAssistantSeq(page, "r1")).toBe(4);
    // Unfiltered, the replayed stream shows a second copy until its commit arrives.
    expect(Math.max(...states(shown).map(answers))).toBe(2);
    const filtered = states(shown, replayFilter(lastAssistantSeq(page, "r1")));
    expect(filtered.map(answers)).toEqual(filtered.map(() => 1));
    expect(summary(filtered.at(-1)!)).toEqual(summary(shown));
  });

  test("what the page does not hold yet still streams", () => {
    const shown = fromMessages(page.slice(0, 2));
    const filtered = states(shown, replayFilter(lastAssistantSeq(page.slice(0, 2), "r1")));
    // After the second delta, before the commit: the answer streams.
    const streaming = filtered[8]!;
    expect(summary(streaming).at(-1)).toBe("assistant:done: wrote a.txt");
    expect(isSettled(streaming)).toBe(false);
    expect(summary(filtered.at(-1)!)).toEqual(summary(fromMessages(page)));
  });

  test("without a page to replay over, nothing is held back", () => {
    const shows = replayFilter(undefined);
    expect(events().every(shows)).toBe(true);
    expect(lastAssistantSeq(page, "other-run")).toBeUndefined();
  });
});
