/**
 * The Usage page's period and numbers, without React: the presets (the last 7, 30 or 90 days,
 * today included, in UTC as the server counts days), a custom span checked as the server
 * checks it, and costs and days worded in the UI's language.
 */

export const PRESETS = [7, 30, 90] as const;
export type Preset = (typeof PRESETS)[number];
export const DEFAULT_PRESET: Preset = 30;

/** The longest span a report covers, in days (as the server allows). */
export const MAX_DAYS = 366;

export interface Range {
  from: string;
  to: string;
}

const DAY_MS = 86_400_000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

/** `YYYY-MM-DD` of an instant, in UTC. */
export function isoDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** The last `days` days up to today (UTC), today included. */
export function presetRange(days: number, now: number = Date.now()): Range {
  return { from: isoDay(now - (days - 1) * DAY_MS), to: isoDay(now) };
}

/** How many days a span covers, both ends included; `NaN` for a day that is not one. */
export function spanDays({ from, to }: Range): number {
  if (!DATE.test(from) || !DATE.test(to)) return Number.NaN;
  return Math.round((Date.parse(`${to}T00:00:00Z`) - Date.parse(`${from}T00:00:00Z`)) / DAY_MS) + 1;
}

export type RangeProblem = "missing" | "reversed" | "tooLong";

/** What is wrong with a custom span before it is asked for, if anything. */
export function rangeProblem(range: Range): RangeProblem | null {
  const days = spanDays(range);
  if (Number.isNaN(days)) return "missing";
  if (days < 1) return "reversed";
  if (days > MAX_DAYS) return "tooLong";
  return null;
}

/** A report's day (`YYYY-MM-DD`, a UTC day) as the language writes it: short, or with the year. */
export function formatDay(day: string, locale: string, withYear = false): string {
  const date = new Date(`${day}T00:00:00Z`);
  if (Number.isNaN(date.getTime())) return day;
  return new Intl.DateTimeFormat(locale, {
    timeZone: "UTC",
    month: "short",
    day: "numeric",
    ...(withYear ? { year: "numeric" } : {}),
  }).format(date);
}

/**
 * A cost as a plain number (no currency sign: prices are in whatever currency the admin keeps):
 * two decimals from 1 up, and below that enough digits to show something (0.000072, not 0.00).
 */
export function formatCost(value: number, locale: string): string {
  if (value === 0) return new Intl.NumberFormat(locale).format(0);
  const options: Intl.NumberFormatOptions =
    Math.abs(value) >= 1
      ? { minimumFractionDigits: 2, maximumFractionDigits: 2 }
      : { maximumSignificantDigits: 2 };
  return new Intl.NumberFormat(locale, options).format(value);
}

/** A count, short, for the chart's axis: 12K, 1.5M (1.2万 in Chinese). */
export function formatCompact(value: number, locale: string): string {
  return new Intl.NumberFormat(locale, { notation: "compact", maximumFractionDigits: 1 }).format(value);
}
