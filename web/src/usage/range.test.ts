import { describe, expect, test } from "vitest";
import { formatCost, formatDay, presetRange, rangeProblem, spanDays } from "./range";

const NOON = Date.parse("2025-03-10T12:00:00Z");

describe("the period", () => {
  test("a preset is the last N days up to today (UTC), today included", () => {
    expect(presetRange(7, NOON)).toEqual({ from: "2025-03-04", to: "2025-03-10" });
    expect(presetRange(30, NOON)).toEqual({ from: "2025-02-09", to: "2025-03-10" });
    expect(spanDays(presetRange(90, NOON))).toBe(90);
  });

  test("a custom span is checked as the server checks it", () => {
    expect(rangeProblem({ from: "2025-03-01", to: "2025-03-01" })).toBeNull();
    expect(rangeProblem({ from: "", to: "2025-03-01" })).toBe("missing");
    expect(rangeProblem({ from: "2025-03-02", to: "2025-03-01" })).toBe("reversed");
    expect(rangeProblem({ from: "2024-01-01", to: "2024-12-31" })).toBeNull(); // 366 days
    expect(rangeProblem({ from: "2024-01-01", to: "2025-01-01" })).toBe("tooLong");
  });
});

describe("numbers in the UI's language", () => {
  test("costs have no currency sign and keep small amounts visible", () => {
    expect(formatCost(1234.5, "en")).toBe("1,234.50");
    expect(formatCost(0.000072, "en")).toBe("0.000072");
    expect(formatCost(0, "en")).toBe("0");
    expect(formatCost(1234.5, "de")).toBe("1.234,50");
  });

  test("days are UTC days, short", () => {
    expect(formatDay("2025-03-01", "en")).toBe("Mar 1");
    expect(formatDay("2025-03-01", "zh-CN")).toBe("3月1日");
    expect(formatDay("2025-03-01", "en", true)).toBe("Mar 1, 2025");
  });
});
