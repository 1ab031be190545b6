/**
 * Numbers, sizes, times and token counts in the UI's language (`Intl` with the i18n language).
 * Components that show them call `useTranslation`, so they re-render when the language changes.
 */

import type { Usage } from "../api/types";
import i18n from "../i18n";

const locale = () => i18n.resolvedLanguage ?? "en";

/** `m:ss` (or `h:mm:ss`) between two instants. */
export function elapsed(from: string, to: number): string {
  const total = Math.max(0, Math.floor((to - Date.parse(from)) / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, "0");
  return h > 0 ? `${h}:${String(m).padStart(2, "0")}:${s}` : `${m}:${s}`;
}

export function formatNumber(value: number): string {
  return new Intl.NumberFormat(locale()).format(value);
}

export function usageText(usage: Usage): string {
  const total = usage.prompt_tokens + usage.completion_tokens;
  return i18n.t("usage.tokens", {
    count: total,
    total: formatNumber(total),
    prompt: formatNumber(usage.prompt_tokens),
    completion: formatNumber(usage.completion_tokens),
  });
}

/** A date and time, short, in the UI's language: only the time for today. */
export function formatDateTime(iso: string, now: number = Date.now()): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  const today = new Date(now).toDateString() === date.toDateString();
  const options: Intl.DateTimeFormatOptions = today
    ? { timeStyle: "short" }
    : { dateStyle: "medium", timeStyle: "short" };
  return new Intl.DateTimeFormat(locale(), options).format(date);
}

/** "5 minutes ago", "yesterday", … relative to `now`; beyond a week, the date. */
export function formatRelative(iso: string, now: number = Date.now()): string {
  const then = Date.parse(iso);
  if (Number.isNaN(then)) return iso;
  const seconds = Math.round((then - now) / 1000);
  const abs = Math.abs(seconds);
  const rtf = new Intl.RelativeTimeFormat(locale(), { numeric: "auto" });
  if (abs < 45) return rtf.format(0, "second");
  if (abs < 3600) return rtf.format(Math.round(seconds / 60), "minute");
  if (abs < 86400) return rtf.format(Math.round(seconds / 3600), "hour");
  if (abs < 7 * 86400) return rtf.format(Math.round(seconds / 86400), "day");
  return new Intl.DateTimeFormat(locale(), { dateStyle: "medium" }).format(new Date(then));
}

/** `1.5 KB`-style sizes, with the language's decimal mark. */
export function formatBytes(bytes: number): string {
  const n = (value: number) => {
    const digits = value < 10 ? 1 : 0;
    return new Intl.NumberFormat(locale(), {
      minimumFractionDigits: digits,
      maximumFractionDigits: digits,
    }).format(value);
  };
  if (bytes < 1024) return `${formatNumber(bytes)} B`;
  const kb = bytes / 1024;
  if (kb < 1024) return `${n(kb)} KB`;
  const mb = kb / 1024;
  if (mb < 1024) return `${n(mb)} MB`;
  return `${n(mb / 1024)} GB`;
}

/** `42%`-style shares of a whole (`fraction` from 0 to 1), in the UI's language. */
export function formatPercent(fraction: number): string {
  const clamped = Math.max(0, Math.min(1, Number.isFinite(fraction) ? fraction : 0));
  return new Intl.NumberFormat(locale(), { style: "percent", maximumFractionDigits: 0 }).format(clamped);
}
