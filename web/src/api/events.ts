/**
 * The run events streamed by `GET /api/runs/{id}/events`. They travel as SSE, which the
 * OpenAPI document does not describe, so their shapes are written out here (from
 * `crates/ars-events/src/event.rs`); the payloads reuse the generated wire types.
 */

import type { Message, RunErrorCode, RunStatus, Usage } from "./types";

interface Envelope {
  /** 1, 2, 3, … per run: the SSE `id`. */
  id: number;
  run_id: string;
  thread_id: string;
  at: string;
  parent?: { parent_run_id: string; parent_tool_call_id?: string; parent_thread_id: string };
}

export type RunEventKind =
  | { type: "run_status"; status: RunStatus; error?: string; error_code?: RunErrorCode; output?: string }
  | { type: "message_started"; role: Message["role"] }
  | { type: "message_delta"; text: string }
  | { type: "message_completed"; message: Message }
  | { type: "tool_call_started"; call_id: string; name: string; arguments: string }
  | { type: "tool_call_finished"; call_id: string; name: string; is_error: boolean; preview: string }
  | { type: "usage"; usage: Usage }
  | { type: "error"; message: string };

export type RunEvent = Envelope & RunEventKind;

const ACTIVE: readonly RunStatus[] = ["pending", "running", "waiting"];

/** Whether a run in `status` has ended (every status but `pending`, `running` and `waiting`). */
export function isTerminalStatus(status: RunStatus): boolean {
  return !ACTIVE.includes(status);
}
