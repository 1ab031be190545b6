import { render, screen } from "@testing-library/react";
import { describe, expect, test } from "vitest";
import type { SubagentRun } from "../api/types";
import { StatusPanel } from "./StatusPanel";

function run(status: SubagentRun["status"], error: string | null): SubagentRun {
  return {
    run_id: "r1",
    thread_id: "t1",
    subagent_slug: "researcher",
    description: "Find sources",
    status,
    error,
    created_at: "2026-01-01T00:00:00Z",
    started_at: "2026-01-01T00:00:00Z",
    finished_at: "2026-01-01T00:00:05Z",
    usage: { prompt_tokens: 0, completion_tokens: 0 },
  } as SubagentRun;
}

function panel(entry: SubagentRun) {
  return render(
    <StatusPanel
      entries={[entry]}
      onOpen={() => {}}
      open
      onClose={() => {}}
      tab="subagents"
      onTab={() => {}}
    />,
  );
}

describe("the subagents panel", () => {
  test("a cancelled subagent reads cancelled once, with no failure line", () => {
    panel(run("cancelled", "cancelled"));
    const entry = screen.getByTestId("subagent-entry");
    expect(entry.textContent?.match(/cancelled/g)).toHaveLength(1);
    expect(screen.queryByTestId("subagent-error")).toBeNull();
  });

  test("a timed-out subagent says timed out, not failed", () => {
    panel(run("timeout", "the run hit its time limit of 60 s"));
    expect(screen.getByTestId("subagent-error").textContent).toBe(
      "Timed out: the run hit its time limit of 60 s",
    );
  });
});
