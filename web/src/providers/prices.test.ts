import { describe, expect, test } from "vitest";
import { checkPrices, parsePrice, priceBoxes, pricesWrite } from "./prices";

describe("a provider's prices in its form", () => {
  test("a price is a number from 0 to 1,000,000, a comma as the decimal mark too", () => {
    expect(parsePrice("2.5")).toBe(2.5);
    expect(parsePrice(" 0 ")).toBe(0);
    expect(parsePrice("0,27")).toBe(0.27);
    expect(parsePrice(".5")).toBe(0.5);
    expect(parsePrice("1000000")).toBe(1_000_000);
    expect(parsePrice("1000001")).toBeNull();
    expect(parsePrice("-1")).toBeNull();
    expect(parsePrice("1e3")).toBeNull();
    expect(parsePrice("$2")).toBeNull();
  });

  test("both or neither", () => {
    expect(checkPrices({ input: "", output: "" })).toEqual({});
    expect(checkPrices({ input: "1", output: "2" })).toEqual({});
    expect(checkPrices({ input: "1", output: "" })).toEqual({ output: "both" });
    expect(checkPrices({ input: "", output: "2" })).toEqual({ input: "both" });
    expect(checkPrices({ input: "x", output: "" })).toEqual({ input: "invalid", output: "both" });
  });

  test("written as `prices`, removed with null, left out when there were none", () => {
    const priced = { prices: { input: 1, output: 2 } };
    expect(pricesWrite({ input: "0.5", output: "3" }, null)).toEqual({ prices: { input: 0.5, output: 3 } });
    expect(pricesWrite({ input: "", output: "" }, priced)).toEqual({ prices: null });
    expect(pricesWrite({ input: "", output: "" }, { prices: null })).toEqual({});
    expect(pricesWrite({ input: "", output: "" }, null)).toEqual({});
    expect(priceBoxes(priced)).toEqual({ input: "1", output: "2" });
    expect(priceBoxes(null)).toEqual({ input: "", output: "" });
  });
});
