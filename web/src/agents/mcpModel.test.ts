import { describe, expect, test } from "vitest";
import type { McpServerView } from "../api/types";
import { mcpServerOptions, mcpServersChoice, toggleMcpServer } from "./mcpModel";

const server = (slug: string, type: "stdio" | "streamable_http" = "streamable_http") =>
  ({
    id: `id-${slug}`,
    slug,
    name: `Server ${slug}`,
    description: `about ${slug}`,
    transport:
      type === "stdio"
        ? { type, command: "npx", args: [], env: [], network: false }
        : { type, url: "http://127.0.0.1:9/mcp", headers: [] },
  }) as unknown as McpServerView;

describe("the agent form's MCP servers field", () => {
  test("offers the visible servers by slug, with their name, description and transport", () => {
    const options = mcpServerOptions([server("weather"), server("everything", "stdio")], null);
    expect(options.map((o) => o.slug)).toEqual(["everything", "weather"]);
    expect(options[0]).toEqual({
      slug: "everything",
      name: "Server everything",
      description: "about everything",
      transport: "stdio",
      visible: true,
    });
  });

  test("keeps slugs the agent names that the user cannot see, marked as such", () => {
    const options = mcpServerOptions([server("weather")], ["gone", "weather"]);
    expect(options.map((o) => [o.slug, o.visible])).toEqual([
      ["gone", false],
      ["weather", true],
    ]);
    // Not loaded: the stored slugs are still offered, so saving keeps them.
    expect(mcpServerOptions(null, ["gone"]).map((o) => o.slug)).toEqual(["gone"]);
    expect(mcpServerOptions(null, null)).toEqual([]);
  });

  test("not set inherits, an empty list is none, otherwise the list", () => {
    expect(mcpServersChoice(null)).toEqual({ kind: "inherit" });
    expect(mcpServersChoice([])).toEqual({ kind: "none" });
    expect(mcpServersChoice(["a", "b"])).toEqual({ kind: "some", slugs: ["a", "b"] });
  });

  test("ticking adds a slug once, unticking removes it, and inherit becomes a list", () => {
    expect(toggleMcpServer(null, "a", true)).toEqual(["a"]);
    expect(toggleMcpServer(["a"], "a", true)).toEqual(["a"]);
    expect(toggleMcpServer(["a", "b"], "a", false)).toEqual(["b"]);
    expect(toggleMcpServer(["a"], "a", false)).toEqual([]);
    expect(toggleMcpServer(null, "a", false)).toEqual([]);
  });
});
