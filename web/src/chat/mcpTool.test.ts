import { describe, expect, test } from "vitest";
import { mcpToolOrigin } from "./mcpTool";

describe("the MCP server a tool came from", () => {
  test("is the slug between mcp__ and the next __, and the tool keeps its own name", () => {
    expect(mcpToolOrigin("mcp__everything__echo")).toEqual({
      server: "everything",
      tool: "echo",
      shortened: false,
    });
    // A tool's own name may hold `_` and `__`: only the first separator ends the slug.
    expect(mcpToolOrigin("mcp__fs__read_text_file")).toEqual({
      server: "fs",
      tool: "read_text_file",
      shortened: false,
    });
    expect(mcpToolOrigin("mcp__my-server__a__b")?.tool).toBe("a__b");
  });

  test("built-in tools and malformed names have none", () => {
    for (const name of [
      "read_file",
      "task",
      "mcp_everything_echo",
      "mcp____x",
      "mcp__everything",
      "mcp__x__",
    ]) {
      expect(mcpToolOrigin(name), name).toBeNull();
    }
  });

  test("a shortened name (64 characters ending in _<8 hex>) shows its beginning without the hash", () => {
    // ars-mcp's `tool_name("weather-service-for-the-whole-world", "get_everything_about_the_weather_today")`
    const name = "mcp__weather-service-for-the-whole-world__get_everythin_cc421331";
    expect(name).toHaveLength(64);
    expect(mcpToolOrigin(name)).toEqual({
      server: "weather-service-for-the-whole-world",
      tool: "get_everythin",
      shortened: true,
    });
    // A short name ending like a hash is a tool's own name.
    expect(mcpToolOrigin("mcp__x__files_read_0badc0de")).toEqual({
      server: "x",
      tool: "files_read_0badc0de",
      shortened: false,
    });
  });
});
