import { fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, test } from "vitest";
import { ToolCard } from "./ToolCard";
import type { ToolItem } from "./transcript";

function item(name: string): ToolItem {
  return {
    kind: "tool",
    key: "c1",
    runId: "r1",
    callId: "c1",
    name,
    arguments: '{"message":"hi"}',
    result: "Echo: hi",
    isError: false,
    done: true,
    interrupted: false,
  };
}

describe("a tool card", () => {
  test("an MCP tool is labelled with its server and shows the tool's own name", () => {
    render(<ToolCard item={item("mcp__everything__echo")} />);
    const card = screen.getByTestId("tool-card");
    expect(card.getAttribute("data-tool")).toBe("mcp__everything__echo");
    const label = screen.getByTestId("tool-mcp-server");
    expect(label.textContent).toBe("MCP · everything");
    expect(label.getAttribute("data-server")).toBe("everything");
    expect(screen.getByTestId("tool-own-name").textContent).toBe("echo");
    expect(card.querySelector(".tool-name")?.getAttribute("title")).toBe("mcp__everything__echo");
  });

  test("a built-in tool shows its name alone", () => {
    render(<ToolCard item={item("read_file")} />);
    expect(screen.queryByTestId("tool-mcp-server")).toBeNull();
    expect(screen.getByTestId("tool-card").querySelector(".tool-name")?.textContent).toBe("read_file");
  });
});

function call(name: string, args: object, result: object | null, isError = false): ToolItem {
  return {
    ...item(name),
    arguments: JSON.stringify(args),
    result: result && JSON.stringify(result),
    isError,
    done: result !== null,
  };
}

describe("a subagent tool card", () => {
  test("a task card names its subagent and its task, cut to one line, when collapsed", () => {
    const long = `Find three sources on ${"tidal power ".repeat(10)}\nand summarize them.`;
    render(<ToolCard item={call("task", { subagent_slug: "researcher", description: long }, null)} />);
    const headline = screen.getByTestId("tool-subagent").textContent ?? "";
    expect(headline.startsWith("researcher — Find three sources on tidal power")).toBe(true);
    expect(headline.endsWith("…")).toBe(true);
    expect(headline).not.toContain("summarize");
  });

  test("a subagent_status card names the child it acts on, from its result when known", () => {
    render(
      <ToolCard
        item={call(
          "subagent_status",
          { run_id: "run-1" },
          { run_id: "run-1", subagent_slug: "coder", status: "running" },
        )}
      />,
    );
    expect(screen.getByTestId("tool-subagent").textContent).toBe("coder");
  });

  test("a subagent_cancel card names the run it acts on when only its id is known", () => {
    render(<ToolCard item={call("subagent_cancel", { run_id: "run-9" }, null)} />);
    expect(screen.getByTestId("tool-subagent").textContent).toBe("run-9");
  });

  test("a cancelled child reads cancelled, not failed, whatever its error says", () => {
    const result = { run_id: "r", status: "cancelled", error: "cancelled" };
    render(<ToolCard item={call("task", { subagent_slug: "a", description: "x" }, result, true)} />);
    const card = screen.getByTestId("tool-card");
    expect(card.getAttribute("data-state")).toBe("cancelled");
    expect(card.querySelector("summary .status")?.textContent).toBe("cancelled");
  });

  test("a timed-out child reads timed out, as the panel and popup say it", () => {
    const result = { run_id: "r", status: "timeout", error: "the run hit its time limit" };
    render(<ToolCard item={call("task", { subagent_slug: "a", description: "x" }, result, true)} />);
    expect(screen.getByTestId("tool-card").querySelector("summary .status")?.textContent).toBe("timed out");
  });

  test("a subagent call's run id opens the child's popup, its thread id is a chip, the rest are labelled fields", () => {
    const opened: string[] = [];
    const result = { run_id: "run-7", thread_id: "thread-7", subagent_slug: "researcher", status: "running" };
    render(
      <ToolCard
        item={call("subagent_start", { subagent_slug: "researcher", description: "Find it" }, result)}
        onOpenRun={(id) => opened.push(id)}
      />,
    );
    fireEvent.click(screen.getByTestId("tool-open-run"));
    expect(opened).toEqual(["run-7"]);
    expect(screen.getByTestId("tool-id-chip").textContent).toBe("thread-7");
    const labels = [...screen.getAllByTestId("tool-fields")[0]!.querySelectorAll("dt")].map(
      (dt) => dt.textContent,
    );
    expect(labels).toEqual(["Subagent", "Task"]);
    expect(screen.getByTestId("tool-card").querySelector("pre")).toBeNull();
  });

  test("without a popup to open, a run id is a copyable chip", () => {
    render(<ToolCard item={call("subagent_await", { run_id: "run-3" }, null)} />);
    expect(screen.queryByTestId("tool-open-run")).toBeNull();
    expect(screen.getByTestId("tool-id-chip").textContent).toBe("run-3");
  });
});
