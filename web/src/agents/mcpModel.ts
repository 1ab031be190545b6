/**
 * The agent form's MCP servers field, apart from React: which servers it offers and what its
 * value means. The value is the agent's `context.mcp_servers`: `null` (not set) inherits the
 * server default, a list names servers by slug, `[]` is none.
 */

import type { McpServerView } from "../api/types";

/** A server the field offers. */
export interface McpServerOption {
  slug: string;
  name: string;
  description: string;
  transport: McpServerView["transport"]["type"] | null;
  /** `false` for a slug the agent names that the user cannot see (or that is gone). */
  visible: boolean;
}

/**
 * The servers the field offers, by slug: every server the user can see, plus slugs the agent
 * names that are not among them, so saving the form does not drop them silently.
 */
export function mcpServerOptions(
  servers: readonly McpServerView[] | null,
  stored: readonly string[] | null,
): McpServerOption[] {
  const options = new Map<string, McpServerOption>();
  for (const server of servers ?? []) {
    options.set(server.slug, {
      slug: server.slug,
      name: server.name,
      description: server.description,
      transport: server.transport.type,
      visible: true,
    });
  }
  for (const slug of stored ?? []) {
    if (!options.has(slug)) {
      options.set(slug, { slug, name: slug, description: "", transport: null, visible: false });
    }
  }
  return [...options.values()].sort((a, b) => a.slug.localeCompare(b.slug));
}

/** What the field's value means: inherit (`null`), none (`[]`), or a list of slugs. */
export type McpServersChoice = { kind: "inherit" } | { kind: "none" } | { kind: "some"; slugs: string[] };

export function mcpServersChoice(value: readonly string[] | null): McpServersChoice {
  if (value === null) return { kind: "inherit" };
  if (value.length === 0) return { kind: "none" };
  return { kind: "some", slugs: [...value] };
}

/** The field's value after ticking (`on`) or unticking the server `slug`. */
export function toggleMcpServer(value: readonly string[] | null, slug: string, on: boolean): string[] {
  const rest = (value ?? []).filter((s) => s !== slug);
  return on ? [...rest, slug] : rest;
}
