import { describe, expect, test } from "vitest";
import { slugListChoice, slugListOptions, toggleSlug, type SlugItem } from "./slugListModel";

const item = (slug: string): SlugItem & { extra: number } => ({
  slug,
  name: `Item ${slug}`,
  description: `about ${slug}`,
  extra: slug.length,
});

describe("an agent-form field that names a list by slug", () => {
  test("offers every visible item sorted by slug, carrying the item itself", () => {
    const handbook = item("handbook");
    const options = slugListOptions([item("policies"), handbook], null);
    expect(options.map((o) => o.slug)).toEqual(["handbook", "policies"]);
    // The item's own fields (a document count, a transport) stay at hand for the caller.
    expect(options[0]).toEqual({ slug: "handbook", item: handbook });
  });

  test("keeps slugs the agent names that the user cannot see, with no item", () => {
    const options = slugListOptions([item("handbook")], ["gone", "handbook"]);
    expect(options.map((o) => [o.slug, o.item !== null])).toEqual([
      ["gone", false],
      ["handbook", true],
    ]);
    // Not loaded: the stored slugs are still offered, so saving keeps them.
    expect(slugListOptions(null, ["gone"])).toEqual([{ slug: "gone", item: null }]);
    expect(slugListOptions(null, null)).toEqual([]);
  });

  test("not set inherits, an empty list is none, otherwise the list", () => {
    expect(slugListChoice(null)).toEqual({ kind: "inherit" });
    expect(slugListChoice([])).toEqual({ kind: "none" });
    expect(slugListChoice(["a", "b"])).toEqual({ kind: "some", slugs: ["a", "b"] });
  });

  test("ticking adds a slug once, unticking removes it, and inherit becomes a list", () => {
    expect(toggleSlug(null, "a", true)).toEqual(["a"]);
    expect(toggleSlug(["a"], "a", true)).toEqual(["a"]);
    expect(toggleSlug(["a", "b"], "a", false)).toEqual(["b"]);
    expect(toggleSlug(["a"], "a", false)).toEqual([]);
    expect(toggleSlug(null, "a", false)).toEqual([]);
  });
});
