/**
 * Error answers of the API (`{error: {code, message, field?, active_run_id?}}`) decoded into
 * one exception type, so every page shows them the same way.
 */

import i18n from "../i18n";
import type { SubagentRun } from "./types";

export class ApiError extends Error {
  constructor(
    /** The HTTP status; 0 when the server could not be reached. */
    readonly status: number,
    /** The server's machine-readable code, e.g. `validation_failed`, `busy`. */
    readonly code: string,
    message: string,
    /** The dotted payload path at fault, e.g. `config_json.context.model.script`. */
    readonly field?: string,
    /** `busy` answers: the run keeping the thread busy. */
    readonly activeRunId?: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}

/** Decodes an error body (anything the server or a proxy answered) for `status`. */
export function decodeError(status: number, body: unknown): ApiError {
  const detail = isRecord(body) && isRecord(body.error) ? body.error : null;
  if (!detail) {
    const text = typeof body === "string" && body.trim() ? body.trim() : null;
    return new ApiError(status, "http_error", text ?? `request failed with status ${status}`);
  }
  const str = (key: string) => (typeof detail[key] === "string" ? (detail[key] as string) : undefined);
  return new ApiError(
    status,
    str("code") ?? "http_error",
    str("message") ?? `request failed with status ${status}`,
    str("field"),
    str("active_run_id"),
  );
}

/** The codes whose text the UI words itself, in the user's language. */
const TRANSLATED = new Set([
  "validation_failed",
  "busy",
  "not_found",
  "unauthorized",
  "forbidden",
  "conflict",
  "payload_too_large",
  "too_many_requests",
  "internal",
  "no_model_configured",
  "unknown_provider",
  "model_config_invalid",
  "model_bad_key",
  "model_unknown_model",
  "model_unreachable",
  "model_error",
  "step_limit",
  "token_budget",
  "invalid_tool_arguments",
  "budget_exceeded",
] as const);
type TranslatedCode = typeof TRANSLATED extends Set<infer C> ? C : never;

const isTranslated = (code: string): code is TranslatedCode => TRANSLATED.has(code as TranslatedCode);

/**
 * A human sentence for any thrown value, in the UI's language: the common error codes are
 * worded by the UI (some keep the server's English detail), others show the server's message.
 */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 0) return i18n.t("errors.unreachable");
    if (isTranslated(error.code)) return i18n.t(`errors.${error.code}`, { message: error.message });
    if (error.code === "http_error" && error.message.startsWith("request failed with status")) {
      return i18n.t("errors.http", { status: error.status });
    }
    return error.message;
  }
  if (error instanceof Error) return error.message;
  return String(error);
}

/** A run's error as the UI shows it: translated when the run says a known code. */
export function runErrorMessage(message: string, code?: string | null): string {
  if (code && isTranslated(code)) return i18n.t(`errors.${code}`, { message });
  return message;
}

/**
 * Why a subagent run ended without an answer, as the UI says it: a run that hit its time limit
 * "timed out" (as its status says), it did not "fail". A cancelled run has nothing to add: the
 * server records the word "cancelled" as its error, and its status already says so.
 */
export function subagentEndMessage(run: Pick<SubagentRun, "status" | "error" | "error_code">): string | null {
  if (run.status === "cancelled") return null;
  const reason = runErrorMessage(run.error ?? "", run.error_code);
  return run.status === "timeout"
    ? i18n.t("subagentPopup.timedOut", { reason })
    : i18n.t("subagentPopup.failed", { reason });
}
