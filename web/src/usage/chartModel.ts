/**
 * The Usage page's chart of tokens per day, without React: where each day's bar goes (input
 * tokens at the bottom, output tokens above), the value axis rounded up to a readable maximum,
 * and which days get a label under the axis.
 */

import type { UsageLine } from "../api/usage";

/** The drawing's size (the SVG's `viewBox`) and the margins around the plot, for axis labels. */
export interface ChartLayout {
  width: number;
  height: number;
  left: number;
  right: number;
  top: number;
  bottom: number;
}

export const LAYOUT: ChartLayout = { width: 800, height: 250, left: 64, right: 12, top: 30, bottom: 34 };

/** A vertical span in the drawing's units (`y` is its top). */
export interface Span {
  y: number;
  height: number;
}

export interface Bar {
  /** The day, `YYYY-MM-DD`. */
  day: string;
  line: UsageLine;
  /** The day's slot: the whole column, for the tooltip to answer anywhere over it. */
  slotX: number;
  slotWidth: number;
  /** The bar inside the slot. */
  x: number;
  width: number;
  input: Span;
  output: Span;
}

export interface Tick {
  value: number;
  y: number;
}

export interface Chart {
  layout: ChartLayout;
  /** The value at the top of the axis: the largest day rounded up to a step (0 with no tokens). */
  max: number;
  /** The axis' marks from 0 up to `max`. */
  ticks: Tick[];
  bars: Bar[];
  /** The days labelled under the axis (every one on a short span, every few on a long one). */
  labels: Bar[];
  /** The y of the axis line (value 0). */
  baseline: number;
  /** The day with the most tokens (the first such), none when no day has any. */
  peak: UsageLine | null;
}

/** A step of 1, 2 or 5 times a power of ten that splits `max` into about `parts` parts (at least 1). */
export function niceStep(max: number, parts = 4): number {
  if (!(max > 0)) return 1;
  const raw = max / parts;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const n = raw / magnitude;
  const step = (n <= 1 ? 1 : n <= 2 ? 2 : n <= 5 ? 5 : 10) * magnitude;
  return Math.max(1, step);
}

/** How many labels fit under the axis at most. */
const MAX_LABELS = 8;

export function chartModel(days: readonly UsageLine[], layout: ChartLayout = LAYOUT): Chart {
  const plotWidth = layout.width - layout.left - layout.right;
  const plotHeight = layout.height - layout.top - layout.bottom;
  const baseline = layout.top + plotHeight;
  const largest = days.reduce((most, day) => Math.max(most, day.total_tokens), 0);
  const step = niceStep(largest);
  const max = largest > 0 ? Math.ceil(largest / step) * step : 0;
  const scale = (value: number) => (max > 0 ? (value / max) * plotHeight : 0);

  const ticks: Tick[] = [];
  for (let value = 0; value <= max; value += step) ticks.push({ value, y: baseline - scale(value) });

  const slot = days.length ? plotWidth / days.length : plotWidth;
  // A gap between bars while they are wide enough to have one.
  const gap = slot >= 4 ? Math.min(slot * 0.25, 8) : 0;
  const bars = days.map((line, i): Bar => {
    const inputHeight = scale(line.prompt_tokens);
    const outputHeight = scale(line.completion_tokens);
    return {
      day: line.key,
      line,
      slotX: layout.left + i * slot,
      slotWidth: slot,
      x: layout.left + i * slot + gap / 2,
      width: slot - gap,
      input: { y: baseline - inputHeight, height: inputHeight },
      output: { y: baseline - inputHeight - outputHeight, height: outputHeight },
    };
  });

  const every = Math.max(1, Math.ceil(days.length / MAX_LABELS));
  const labels = bars.filter((_, i) => i % every === 0);
  const peak = days.reduce<UsageLine | null>(
    (best, day) => (day.total_tokens > 0 && (!best || day.total_tokens > best.total_tokens) ? day : best),
    null,
  );
  return { layout, max, ticks, bars, labels, baseline, peak };
}
