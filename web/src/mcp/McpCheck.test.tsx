import { fireEvent, render, screen } from "@testing-library/react";
import { describe, expect, test, vi } from "vitest";
import type { McpCheckView } from "../api/types";
import i18n from "../i18n";
import { McpCheckResult } from "./McpCheck";

type McpToolView = McpCheckView["tools"][number];

const echoTool: McpToolView = {
  name: "echo",
  agent_name: "mcp__everything__echo",
  description: "Echoes back the input",
  input_schema: { type: "object", properties: { message: { type: "string" } } } as never,
  enabled: true,
};

const ok: McpCheckView = {
  ok: true,
  protocol_version: "2025-06-18",
  server_info: { name: "mcp-servers/everything", title: "Everything Reference Server", version: "2.0.0" },
  instructions: "Use echo to test.",
  latency_ms: 42,
  tools: [
    echoTool,
    {
      name: "add",
      agent_name: "mcp__everything__add",
      description: "Adds two numbers",
      input_schema: { type: "object" } as never,
      enabled: false,
    },
  ],
};

function renderResult(check: McpCheckView, enabledTools: string[] | null = null, canManage = true) {
  const onToggle = vi.fn();
  const onEnableAll = vi.fn();
  render(
    <McpCheckResult
      check={check}
      enabledTools={enabledTools}
      canManage={canManage}
      busy={false}
      onToggle={onToggle}
      onEnableAll={onEnableAll}
    />,
  );
  return { onToggle, onEnableAll };
}

describe("a connection check's result", () => {
  test("says why a tool whose schema cannot be checked is never offered", () => {
    const problem = "its input schema cannot be checked safely: its references loop";
    renderResult({
      ...ok,
      tools: [{ ...echoTool, name: "loop", agent_name: "mcp__everything__loop", problem }],
    });
    expect(screen.getByTestId("mcp-tool-problem-loop").textContent).toBe(
      `Never offered to agents: ${problem}`,
    );
    expect(screen.queryByTestId("mcp-tool-problem-echo")).toBeNull();
  });

  test("shows the server, protocol version, latency and each tool with its schema", () => {
    renderResult(ok);
    expect(screen.getByTestId("mcp-check-ok").textContent).toContain("Connected in 42 ms.");
    expect(screen.getByTestId("mcp-check-server").textContent).toBe(
      "Everything Reference Server (mcp-servers/everything) 2.0.0",
    );
    expect(screen.getByTestId("mcp-check-protocol").textContent).toBe("2025-06-18");
    expect(screen.getByTestId("mcp-check-latency").textContent).toBe("42 ms");
    const echo = screen.getByTestId("mcp-tool-echo");
    expect(echo.textContent).toContain("Echoes back the input");
    expect(echo.textContent).toContain("mcp__everything__echo");
    expect(JSON.parse(screen.getByTestId("mcp-tool-schema-echo").textContent!)).toEqual({
      type: "object",
      properties: { message: { type: "string" } },
    });
    expect(screen.getByTestId("mcp-tools-summary").textContent).toMatch(/Every tool is offered/);
  });

  test("ticks follow the server's allow-list and report changes", () => {
    const { onToggle, onEnableAll } = renderResult(ok, ["echo"]);
    const echo = screen.getByTestId("mcp-tool-toggle-echo") as HTMLInputElement;
    const add = screen.getByTestId("mcp-tool-toggle-add") as HTMLInputElement;
    expect([echo.checked, add.checked]).toEqual([true, false]);
    expect(screen.getByTestId("mcp-tools-summary").textContent).toMatch(/1 of 2 tools is offered/);
    fireEvent.click(add);
    expect(onToggle).toHaveBeenCalledWith("add", true);
    fireEvent.click(screen.getByTestId("mcp-tools-all"));
    expect(onEnableAll).toHaveBeenCalled();
  });

  test("a user who cannot manage the server sees the choice but cannot change it", () => {
    renderResult(ok, ["echo"], false);
    expect((screen.getByTestId("mcp-tool-toggle-echo") as HTMLInputElement).disabled).toBe(true);
    expect(screen.queryByTestId("mcp-tools-all")).toBeNull();
  });

  test("a failed check explains its kind and shows the server's message", async () => {
    const failed: McpCheckView = {
      ok: false,
      latency_ms: 1500,
      tools: [],
      error: { kind: "unreachable", message: "MCP server `everything`: connection refused" },
    };
    renderResult(failed);
    const box = screen.getByTestId("mcp-check-error");
    expect(box.getAttribute("data-kind")).toBe("unreachable");
    expect(box.textContent).toContain("The server could not be reached.");
    expect(screen.getByTestId("mcp-check-message").textContent).toContain("connection refused");
  });

  test("a refused address is explained as the policy's answer, not the server's", async () => {
    renderResult({
      ok: false,
      latency_ms: 2,
      tools: [],
      error: {
        kind: "refused_address",
        message: "MCP server `x` may not be reached: the address 127.0.0.1 is a loopback address",
      },
    });
    const box = screen.getByTestId("mcp-check-error");
    expect(box.getAttribute("data-kind")).toBe("refused_address");
    expect(box.textContent).toContain("an admin can allow it");
    const why = screen.getByTestId("mcp-check-message").textContent ?? "";
    expect(why).toMatch(/^Why: /);
    expect(why).not.toContain("The server said");
  });

  test("an HTTP error is worded with its status in the message", async () => {
    renderResult({
      ok: false,
      latency_ms: 2,
      tools: [],
      error: { kind: "http_status", status: 404, message: "MCP server `x` answered HTTP 404" },
    });
    expect(screen.getByTestId("mcp-check-error").textContent).toContain(
      "The server answered with an HTTP error.",
    );
    expect(screen.getByTestId("mcp-check-message").textContent).toContain("HTTP 404");
  });

  test("an unknown failure kind is still worded, in Chinese too", async () => {
    await i18n.changeLanguage("zh-CN");
    renderResult({ ok: false, latency_ms: 3, tools: [], error: { kind: "brand-new", message: "boom" } });
    const box = screen.getByTestId("mcp-check-error");
    expect(box.getAttribute("data-kind")).toBe("other");
    expect(box.textContent).toContain("测试失败。");
    expect(box.textContent).toContain("服务器返回：boom");
  });
});
