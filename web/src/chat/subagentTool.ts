/**
 * What a subagent tool call (`task`, `subagent_start`, `subagent_status`, …) says about its
 * child, read from the call's JSON arguments and result, so its card can name the child and
 * its task instead of showing raw JSON.
 */

/** The tools that start or act on a subagent run. */
const SUBAGENT_TOOLS = new Set([
  "task",
  "subagent_start",
  "subagent_status",
  "subagent_await",
  "subagent_cancel",
  "subagent_send",
]);

export const isSubagentTool = (name: string): boolean => SUBAGENT_TOOLS.has(name);

/** The JSON object in `text`, or null when it is not one. */
export function jsonObject(text: string | null): Record<string, unknown> | null {
  if (!text) return null;
  try {
    const value: unknown = JSON.parse(text);
    return typeof value === "object" && value !== null && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : null;
  } catch {
    return null;
  }
}

const str = (value: unknown): string | undefined =>
  typeof value === "string" && value.trim() ? value : undefined;

/** The first line of `text`, cut to `max` characters with an ellipsis. */
export function oneLine(text: string, max = 80): string {
  const line = (text.trim().split("\n")[0] ?? "").trim();
  return line.length > max ? `${line.slice(0, max - 1).trimEnd()}…` : line;
}

/** The child a subagent call acts on and its task, as far as the call says. */
export interface SubagentHeadline {
  /** The subagent's slug, or the run id it acts on when the slug is not known. */
  who: string;
  /** The task, on one line (only calls that start a child carry one). */
  task?: string;
}

export function subagentHeadline(
  args: Record<string, unknown> | null,
  result: Record<string, unknown> | null,
): SubagentHeadline | null {
  const who =
    str(args?.subagent_slug) ?? str(result?.subagent_slug) ?? str(args?.run_id) ?? str(args?.thread_id);
  if (!who) return null;
  const task = str(args?.description);
  return { who, task: task && oneLine(task) };
}

/**
 * A child's end that is its own state, not a failure: the server records a cancelled run with
 * the error text "cancelled", so the status decides, whatever the error says.
 */
export function subagentOutcome(result: Record<string, unknown> | null): "cancelled" | "timeout" | null {
  const status = result?.status;
  return status === "cancelled" || status === "timeout" ? status : null;
}

/** Argument and result keys holding a run id that opens a child's popup. */
export const RUN_ID_KEYS = new Set(["run_id", "active_run_id"]);
/** Keys holding other ids, shown as copyable chips. */
export const ID_KEYS = new Set(["thread_id"]);
