/** MCP servers (`/api/mcp-servers`): listing, writing, sharing, deleting and the connection check. */

import { api, unwrap } from ".";
import type { McpCheckView, McpServerPatch, McpServerView, McpServerWrite } from "./types";

export type {
  McpCheckView,
  McpServerPatch,
  McpServerView,
  McpServerWrite,
  McpToolView,
  McpTransportView,
  McpTransportWrite,
  McpValueView,
} from "./types";

const byId = (id: string) => ({ params: { path: { id } } });

/** Every MCP server the caller can see (admins: all), by slug. */
export function listMcpServers(): Promise<McpServerView[]> {
  return unwrap(api.GET("/api/mcp-servers"));
}

export function getMcpServer(id: string): Promise<McpServerView> {
  return unwrap(api.GET("/api/mcp-servers/{id}", byId(id)));
}

export function createMcpServer(body: McpServerWrite): Promise<McpServerView> {
  return unwrap(api.POST("/api/mcp-servers", { body }));
}

/** Replaces a server's fields; environment and header values merge over the stored ones. */
export function updateMcpServer(id: string, body: McpServerWrite): Promise<McpServerView> {
  return unwrap(api.PUT("/api/mcp-servers/{id}", { ...byId(id), body }));
}

/** Changes some fields (sharing, the enabled tools); absent ones keep their value. */
export function patchMcpServer(id: string, body: McpServerPatch): Promise<McpServerView> {
  return unwrap(api.PATCH("/api/mcp-servers/{id}", { ...byId(id), body }));
}

export async function deleteMcpServer(id: string): Promise<void> {
  await unwrap(api.DELETE("/api/mcp-servers/{id}", byId(id)));
}

/** Connects, initialises and lists the tools; a failed check is `ok: false`, not a throw. */
export function checkMcpServer(id: string): Promise<McpCheckView> {
  return unwrap(api.POST("/api/mcp-servers/{id}/check", byId(id)));
}
