/**
 * Error answers of the API (`{error: {code, message, field?, active_run_id?, reason, params}}`)
 * decoded into one exception type, so every page shows them the same way: worded by the UI in
 * its own language from `reason` and `params` (the English `message` is for API users).
 */

import i18n, { currentLanguage } from "../i18n";
import { formatBytes, formatNumber } from "../lib/format";
import type { RunErrorCode, RunStatus, Schemas } from "./types";

export type ErrorReason = Schemas["ErrorReason"];
export type ErrorSubject = Schemas["Subject"];

/** An error's values by name (`max`, `limit`, `name`, `subject`, …): numbers or text. */
export type ErrorParams = Readonly<Record<string, unknown>>;

export class ApiError extends Error {
  constructor(
    /** The HTTP status; 0 when the server could not be reached. */
    readonly status: number,
    /** The server's coarse machine-readable code, e.g. `validation_failed`, `busy`. */
    readonly code: string,
    message: string,
    /** The dotted payload path at fault, e.g. `config_json.context.model.script`. */
    readonly field?: string,
    /** `busy` answers: the run keeping the thread busy. */
    readonly activeRunId?: string,
    /** The exact stable code of the error (an {@link ErrorReason}), when the server sent one. */
    readonly reason?: string,
    /** The reason's values. */
    readonly params: ErrorParams = {},
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
    str("reason"),
    isRecord(detail.params) ? detail.params : {},
  );
}

/** The coarse codes the UI words itself when an answer carries no reason it knows. */
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
] as const);
type TranslatedCode = typeof TRANSLATED extends Set<infer C> ? C : never;

const isTranslated = (code: string): code is TranslatedCode => TRANSLATED.has(code as TranslatedCode);

/**
 * Every reason the server answers, with the parameters its sentence needs (a reason without
 * them is worded by its coarse code instead). A reason added to the API without a place here
 * fails type-checking.
 */
const REASONS: Record<ErrorReason, readonly string[]> = {
  malformed_request: [],
  body_too_large: ["limit"],
  unsupported_media_type: [],
  method_not_allowed: [],
  no_such_endpoint: [],
  credentials_missing: [],
  credentials_invalid: [],
  login_failed: [],
  too_many_logins: ["retry_after_s"],
  account_disabled: [],
  admin_only: [],
  cannot_delete: ["subject"],
  cannot_change: ["subject"],
  builtin_cannot_be_deleted: ["subject"],
  builtin_keeps: [],
  own_account: [],
  last_admin: ["name"],
  forbidden: [],
  not_found: [],
  gone: [],
  taken: [],
  skill_exists: ["name"],
  file_exists: ["path"],
  thread_busy: [],
  run_ended: [],
  run_not_waiting: ["status"],
  default_agent_stays: [],
  not_replaceable: [],
  conflict: [],
  required: [],
  blank: [],
  too_long: ["max"],
  length: ["max"],
  bad_characters: [],
  bad_slug: ["max"],
  bad_username: ["max"],
  password_length: ["min", "max"],
  too_many: ["max"],
  out_of_range: ["min", "max"],
  duplicate: ["name"],
  unknown: ["name"],
  bad_url: [],
  subagent_nesting: [],
  path_refused: [],
  invalid_value: [],
  unsupported_format: ["name", "formats"],
  file_too_large: ["limit"],
  knowledge_base_full: ["limit"],
  empty_file: ["name"],
  too_large: [],
  server_busy: ["retry_after_s"],
  internal: [],
};

const isReason = (reason: string | undefined): reason is ErrorReason =>
  reason !== undefined && Object.hasOwn(REASONS, reason);

/**
 * Catch-all reasons: the server's English sentence says more than the catalogue's, so the
 * English UI shows it; other languages show the catalogue's.
 */
const GENERIC = new Set<ErrorReason>([
  "invalid_value",
  "forbidden",
  "conflict",
  "malformed_request",
  "too_large",
]);

const SUBJECTS: Record<ErrorSubject, true> = {
  agent: true,
  thread: true,
  run: true,
  message: true,
  file: true,
  skill: true,
  skill_file: true,
  user: true,
  token: true,
  model_provider: true,
  knowledge_base: true,
  document: true,
  passage: true,
  mcp_server: true,
  mcp_session: true,
  metrics: true,
};

const RUN_STATUSES: Record<RunStatus, true> = {
  pending: true,
  running: true,
  waiting: true,
  success: true,
  error: true,
  cancelled: true,
  timeout: true,
  interrupted: true,
};

const english = () => currentLanguage() === "en";

/** A parameter as its sentence shows it: sizes and numbers in the UI's language, codes as words. */
function shown(name: string, value: unknown): string | null {
  if (typeof value === "number") {
    return name === "limit" ? formatBytes(value) : formatNumber(value);
  }
  if (typeof value !== "string" || !value) return null;
  if (name === "subject") {
    return Object.hasOwn(SUBJECTS, value)
      ? i18n.t(`errors.subject.${value as ErrorSubject}`)
      : i18n.t("errors.subjectOther");
  }
  if (name === "status" && Object.hasOwn(RUN_STATUSES, value))
    return i18n.t(`runStatus.${value as RunStatus}`);
  return value;
}

/** The sentence of a known reason, or `null` when a value it needs is missing. */
function reasonMessage(reason: ErrorReason, params: ErrorParams): string | null {
  const values: Record<string, string> = {};
  for (const [name, value] of Object.entries(params)) {
    // Forms place a field's error beside the field: its payload path is never shown.
    if (name === "field") continue;
    const text = shown(name, value);
    if (text !== null) values[name] = text;
  }
  if (REASONS[reason].some((name) => values[name] === undefined)) return null;
  const { subject = "", name = "", status = "", limit = "" } = values;
  switch (reason) {
    case "not_found":
      if (subject && name) return i18n.t("errors.reason.notFoundNamed", { subject, name });
      if (name) return i18n.t("errors.reason.notFoundName", { name });
      if (subject) return i18n.t("errors.reason.notFoundSubject", { subject });
      return i18n.t("errors.reason.not_found");
    case "run_ended":
      return status ? i18n.t("errors.reason.runEndedStatus", { status }) : i18n.t("errors.reason.run_ended");
    case "file_too_large":
      return name
        ? i18n.t("errors.reason.fileTooLargeNamed", { name, limit })
        : i18n.t("errors.reason.file_too_large", { limit });
    case "skill_exists":
      // Names the box of the upload form that makes an upload replace the skill.
      return i18n.t("errors.reason.skill_exists", { name, replace: i18n.t("skills.upload.replace") });
    default: {
      // Each reason's own values (checked by REASONS above, and by the catalogue tests).
      const translate = i18n.t as (key: `errors.reason.${ErrorReason}`, options: object) => string;
      return translate(`errors.reason.${reason}`, values);
    }
  }
}

/**
 * A human sentence for any thrown value, in the UI's language: an API error is worded from its
 * reason and values (the server's English sentence only where it says more, in the English UI).
 */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 0) return i18n.t("errors.unreachable");
    if (isReason(error.reason)) {
      if (GENERIC.has(error.reason) && english() && error.message.trim()) return error.message;
      const sentence = reasonMessage(error.reason, error.params);
      if (sentence !== null) return sentence;
    }
    if (isTranslated(error.code)) return i18n.t(`errors.${error.code}`, { message: error.message });
    if (error.code === "http_error" && error.message.startsWith("request failed with status")) {
      return i18n.t("errors.http", { status: error.status });
    }
    return error.message;
  }
  if (error instanceof Error) return error.message;
  return String(error);
}

/** How a run ended, as the API reports it on runs, subagent entries and `run_status` events. */
export interface RunEnd {
  status: RunStatus;
  /** The server's words (English). */
  error?: string | null;
  error_code?: RunErrorCode | null;
  /** The values to word the end with (a timeout's `limit_s`). */
  error_params?: ErrorParams | null;
}

/** Every code the server can put on a failed run (a new one fails type-checking here). */
export const RUN_CODES: Record<RunErrorCode, true> = {
  no_model_configured: true,
  unknown_provider: true,
  model_config_invalid: true,
  model_bad_key: true,
  model_unknown_model: true,
  model_unreachable: true,
  model_error: true,
  step_limit: true,
  token_budget: true,
  invalid_tool_arguments: true,
  budget_exceeded: true,
};

const isRunCode = (code: string | null | undefined): code is RunErrorCode =>
  typeof code === "string" && Object.hasOwn(RUN_CODES, code);

/** A timed-out run's limit in seconds: from its values, or read from the server's words. */
function timeLimit(run: RunEnd): number | null {
  const value = run.error_params?.limit_s;
  if (typeof value === "number") return value;
  const words = /time limit of (\d+) s\b/.exec(run.error ?? "");
  return words ? Number(words[1]) : null;
}

/** The sentence of a run's time limit. */
function timeLimitText(run: RunEnd): string {
  const limit = timeLimit(run);
  return limit === null
    ? i18n.t("errors.run.timeoutNoLimit")
    : i18n.t("errors.run.timeout", { limit_s: formatNumber(limit) });
}

/**
 * Why a run ended without an answer, in the UI's language: its code's sentence (in English
 * with the provider's own detail), its time limit, the word "cancelled", an interruption.
 * A failure without a code keeps the server's words in English and is a plain "it failed"
 * elsewhere (see {@link runErrorDetail}). `null` when there is nothing to say.
 */
export function runErrorMessage(run: RunEnd): string | null {
  if (run.status === "cancelled") return i18n.t("runStatus.cancelled");
  if (run.status === "timeout") return timeLimitText(run);
  if (run.status === "interrupted") return i18n.t("errors.run.interrupted");
  if (isRunCode(run.error_code)) return i18n.t(`errors.run.${run.error_code}`, { message: run.error ?? "" });
  if (!run.error) return null;
  return english() ? run.error : i18n.t("errors.run.failed");
}

/**
 * The server's own words about a failed run when {@link runErrorMessage} leaves them out (in
 * any language but English): external text for a tooltip. `null` when the sentence holds them.
 */
export function runErrorDetail(run: RunEnd): string | null {
  if (run.status !== "error" || !run.error || english()) return null;
  return run.error;
}

/**
 * Why a subagent run ended without an answer, as the UI says it: a run that hit its time limit
 * "timed out" (as its status says), it did not "fail". A cancelled run has nothing to add: its
 * status already says so.
 */
export function subagentEndMessage(run: RunEnd): string | null {
  if (run.status === "cancelled") return null;
  if (run.status === "timeout") return i18n.t("subagentPopup.timedOut", { reason: timeLimitText(run) });
  if (run.status === "interrupted") return i18n.t("errors.run.interrupted");
  if (isRunCode(run.error_code) || (english() && run.error)) {
    return i18n.t("subagentPopup.failed", { reason: runErrorMessage(run) ?? "" });
  }
  return run.error ? i18n.t("errors.run.failed") : null;
}
