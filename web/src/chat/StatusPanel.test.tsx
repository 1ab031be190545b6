import { render, screen } from "@testing-library/react";
import { describe, expect, test } from "vitest";
import type { SubagentRun } from "../api/types";
import i18n from "../i18n";
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

  test("a timed-out subagent says timed out, not failed, with its limit in the UI's words", () => {
    panel({
      ...run("timeout", "the run hit its time limit of 60 s"),
      // The generated type has no room for values (`Record<string, never>`).
      error_params: { limit_s: 60 } as unknown as Record<string, never>,
    });
    expect(screen.getByTestId("subagent-error").textContent).toBe(
      "Timed out: The run hit its time limit of 60 s.",
    );
  });

  test("a failure in Chinese keeps the provider's English words to a tooltip", async () => {
    await i18n.changeLanguage("zh-CN");
    try {
      panel({ ...run("error", "quota exceeded for this key"), error_code: "model_error" });
      const error = screen.getByTestId("subagent-error");
      expect(error.textContent).toBe("运行失败：模型提供方返回了错误。");
      expect(error.getAttribute("title")).toBe("quota exceeded for this key");
    } finally {
      await i18n.changeLanguage("en");
    }
  });
});
