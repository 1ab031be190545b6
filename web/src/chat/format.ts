import type { Usage } from "../api/types";

/** `m:ss` (or `h:mm:ss`) between two instants. */
export function elapsed(from: string, to: number): string {
  const total = Math.max(0, Math.floor((to - Date.parse(from)) / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

export function usageText(usage: Usage): string {
  const total = usage.prompt_tokens + usage.completion_tokens;
  return `${total.toLocaleString()} tokens (${usage.prompt_tokens.toLocaleString()} in, ${usage.completion_tokens.toLocaleString()} out)`;
}
