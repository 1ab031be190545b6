import { api, unwrap } from ".";
import type { Agent } from "./types";

/**
 * Every agent the caller can see, subagents included (`GET /api/agent?include_subagents=true`).
 *
 * The OpenAPI document describes `include_subagents` as a *path* parameter (utoipa's default
 * for `IntoParams`), so the typed call cannot put it in the query; it goes through
 * `querySerializer` until the document says `in: query`.
 */
export function listAllAgents(): Promise<Agent[]> {
  return unwrap(
    api.GET("/api/agent", {
      params: { path: { include_subagents: true } },
      querySerializer: () => "include_subagents=true",
    }),
  );
}

/** The chat-usable (normal) agents the caller can see. */
export function listChatAgents(): Promise<Agent[]> {
  return unwrap(api.GET("/api/agent", { params: { path: { include_subagents: false } } }));
}
