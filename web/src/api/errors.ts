/**
 * Error answers of the API (`{error: {code, message, field?, active_run_id?}}`) decoded into
 * one exception type, so every page shows them the same way.
 */

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

/** A human sentence for any thrown value. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message;
  return String(error);
}
