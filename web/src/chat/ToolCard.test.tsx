import { render, screen } from "@testing-library/react";
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
