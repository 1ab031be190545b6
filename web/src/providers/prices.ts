/**
 * A provider's prices in its form, without React: two optional boxes (per million input and
 * output tokens), both filled or both empty, each a number from 0 to 1,000,000; what they write
 * (`prices`, or `null` to remove the stored ones).
 */

import type { ProviderView, ProviderWrite } from "../api/providers";

export const MAX_PRICE = 1_000_000;

export interface PriceBoxes {
  input: string;
  output: string;
}

export type PriceProblem = "both" | "invalid";

/** Which box is wrong and why, if any. */
export interface PriceCheck {
  input?: PriceProblem;
  output?: PriceProblem;
}

/** The boxes as the stored prices fill them (empty when none). */
export function priceBoxes(provider: Pick<ProviderView, "prices"> | null): PriceBoxes {
  const prices = provider?.prices;
  return prices ? { input: String(prices.input), output: String(prices.output) } : { input: "", output: "" };
}

/** A price as typed (a comma as the decimal mark too), or `null` when it is not one. */
export function parsePrice(text: string): number | null {
  const trimmed = text.trim().replace(",", ".");
  if (!/^\d+(\.\d+)?$|^\.\d+$/.test(trimmed)) return null;
  const value = Number(trimmed);
  return Number.isFinite(value) && value >= 0 && value <= MAX_PRICE ? value : null;
}

/** What is wrong with the boxes: a price that is not one, or one box filled without the other. */
export function checkPrices(boxes: PriceBoxes): PriceCheck {
  const input = boxes.input.trim();
  const output = boxes.output.trim();
  const check: PriceCheck = {};
  if (input && parsePrice(input) == null) check.input = "invalid";
  if (output && parsePrice(output) == null) check.output = "invalid";
  if (input && !output) check.output ??= "both";
  if (output && !input) check.input ??= "both";
  return check;
}

export const pricesValid = (boxes: PriceBoxes) => Object.keys(checkPrices(boxes)).length === 0;

/**
 * The `prices` of a write: both set, or `null` when the boxes are empty and the provider had
 * prices (removed); absent otherwise. Call it on valid boxes only.
 */
export function pricesWrite(
  boxes: PriceBoxes,
  original: Pick<ProviderView, "prices"> | null,
): Pick<ProviderWrite, "prices"> {
  const input = parsePrice(boxes.input);
  const output = parsePrice(boxes.output);
  if (input != null && output != null) return { prices: { input, output } };
  return original?.prices ? { prices: null } : {};
}
