/**
 * Where a tool call's tool came from. MCP tools reach the model as `mcp__<server slug>__<tool>`;
 * slugs never hold `_`, so the slug is what lies between the prefix and the next `__`. A name
 * longer than models take (64 characters) is cut to 64 ending in `_<8 hex digits>`. (A name
 * with characters models refuse gets the same suffix with those characters as `_`; it is shown
 * as it is, the name agents know it by.)
 */

const PREFIX = "mcp__";
const SEPARATOR = "__";
/** The longest tool name models take: a shortened name is exactly this long. */
const MAX_TOOL_NAME = 64;
const HASH_SUFFIX = /_[0-9a-f]{8}$/;

export interface McpToolOrigin {
  /** The MCP server's slug. */
  server: string;
  /** The tool's own name, as far as the name tells it. */
  tool: string;
  /** The name was shortened: `tool` is its beginning, without the hash. */
  shortened: boolean;
}

/** The MCP server and tool a tool name stands for; `null` for any other tool. */
export function mcpToolOrigin(name: string): McpToolOrigin | null {
  if (!name.startsWith(PREFIX)) return null;
  const rest = name.slice(PREFIX.length);
  const end = rest.indexOf(SEPARATOR);
  if (end <= 0) return null;
  const tool = rest.slice(end + SEPARATOR.length);
  if (!tool) return null;
  const shortened = name.length === MAX_TOOL_NAME && HASH_SUFFIX.test(tool);
  return { server: rest.slice(0, end), tool: shortened ? tool.replace(HASH_SUFFIX, "") : tool, shortened };
}
