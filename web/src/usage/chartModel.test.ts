import { describe, expect, test } from "vitest";
import type { UsageLine } from "../api/usage";
import { chartModel, LAYOUT, niceStep } from "./chartModel";

const day = (key: string, prompt = 0, completion = 0, runs = prompt + completion > 0 ? 1 : 0): UsageLine => ({
  key,
  label: key,
  runs,
  prompt_tokens: prompt,
  completion_tokens: completion,
  total_tokens: prompt + completion,
  unpriced_tokens: prompt + completion,
});

const plotHeight = LAYOUT.height - LAYOUT.top - LAYOUT.bottom;
const baseline = LAYOUT.top + plotHeight;

describe("the axis", () => {
  test("steps are 1, 2 or 5 times a power of ten, never below 1", () => {
    expect(niceStep(0)).toBe(1);
    expect(niceStep(3)).toBe(1);
    expect(niceStep(10)).toBe(5);
    expect(niceStep(1234)).toBe(500);
    expect(niceStep(1_900_000)).toBe(500_000);
  });

  test("the top is the largest day rounded up to a step, with a tick at every step", () => {
    const chart = chartModel([day("2025-03-01", 1000, 234), day("2025-03-02", 400, 100)]);
    expect(chart.max).toBe(1500);
    expect(chart.ticks.map((tick) => tick.value)).toEqual([0, 500, 1000, 1500]);
    expect(chart.ticks[0]!.y).toBe(baseline);
    expect(chart.ticks.at(-1)!.y).toBe(LAYOUT.top);
  });
});

describe("the bars", () => {
  test("scale with the tokens: input at the bottom, output stacked on it", () => {
    const chart = chartModel([day("2025-03-01", 1000, 500), day("2025-03-02", 300, 0)]);
    const [first, second] = chart.bars;
    expect(chart.max).toBe(1500);
    expect(first!.input.height).toBeCloseTo((1000 / 1500) * plotHeight);
    expect(first!.input.y + first!.input.height).toBeCloseTo(baseline);
    expect(first!.output.height).toBeCloseTo((500 / 1500) * plotHeight);
    expect(first!.output.y + first!.output.height).toBeCloseTo(first!.input.y);
    // The largest day reaches the top.
    expect(first!.output.y).toBeCloseTo(LAYOUT.top);
    expect(second!.input.height).toBeCloseTo((300 / 1500) * plotHeight);
    expect(second!.output.height).toBe(0);
  });

  test("every day has its slot, side by side across the plot, days without runs included", () => {
    const days = [day("2025-03-01"), day("2025-03-02", 50, 50), day("2025-03-03")];
    const chart = chartModel(days);
    expect(chart.bars.map((bar) => bar.day)).toEqual(["2025-03-01", "2025-03-02", "2025-03-03"]);
    const slot = (LAYOUT.width - LAYOUT.left - LAYOUT.right) / 3;
    chart.bars.forEach((bar, i) => {
      expect(bar.slotX).toBeCloseTo(LAYOUT.left + i * slot);
      expect(bar.slotWidth).toBeCloseTo(slot);
      expect(bar.x).toBeGreaterThanOrEqual(bar.slotX);
      expect(bar.x + bar.width).toBeLessThanOrEqual(bar.slotX + slot + 1e-9);
    });
    expect(chart.bars[0]!.input.height).toBe(0);
    expect(chart.bars[2]!.output.height).toBe(0);
    expect(chart.peak?.key).toBe("2025-03-02");
  });

  test("a span without tokens draws empty bars on a zero axis and has no peak", () => {
    const chart = chartModel([day("2025-03-01"), day("2025-03-02")]);
    expect(chart.max).toBe(0);
    expect(chart.ticks).toEqual([{ value: 0, y: baseline }]);
    expect(chart.bars.every((bar) => bar.input.height === 0 && bar.output.height === 0)).toBe(true);
    expect(chart.peak).toBeNull();
    expect(chartModel([]).bars).toEqual([]);
  });

  test("a long span labels every few days, a week every day", () => {
    const days = Array.from({ length: 90 }, (_, i) => day(`d${i}`));
    const labels = chartModel(days).labels;
    expect(labels.length).toBeLessThanOrEqual(8);
    expect(labels[0]!.day).toBe("d0");
    expect(chartModel(days.slice(0, 7)).labels).toHaveLength(7);
  });
});
