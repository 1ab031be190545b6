import { api, unwrap } from ".";
import type { Agent } from "./types";

/** Every agent the caller can see, subagents included (`GET /api/agent?include_subagents=true`). */
export function listAllAgents(): Promise<Agent[]> {
  return unwrap(api.GET("/api/agent", { params: { query: { include_subagents: true } } }));
}

/** The chat-usable (normal) agents the caller can see. */
export function listChatAgents(): Promise<Agent[]> {
  return unwrap(api.GET("/api/agent", { params: { query: { include_subagents: false } } }));
}
