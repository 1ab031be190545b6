import { describe, expect, test } from "vitest";
import type { KnowledgeBaseView } from "../api/knowledge";
import { knowledgeBaseOptions, knowledgeBasesChoice, toggleKnowledgeBase } from "./knowledgeModel";

const kb = (slug: string, documents = 2) =>
  ({
    id: `id-${slug}`,
    slug,
    name: `KB ${slug}`,
    description: `about ${slug}`,
    counts: { documents },
  }) as KnowledgeBaseView;

describe("the agent form's knowledge bases field", () => {
  test("offers the visible knowledge bases by slug, with their name and document count", () => {
    const options = knowledgeBaseOptions([kb("policies"), kb("handbook", 5)], null);
    expect(options.map((o) => o.slug)).toEqual(["handbook", "policies"]);
    expect(options[0]).toEqual({
      slug: "handbook",
      name: "KB handbook",
      description: "about handbook",
      documents: 5,
      visible: true,
    });
  });

  test("keeps slugs the agent names that the user cannot see, marked as such", () => {
    const options = knowledgeBaseOptions([kb("handbook")], ["gone", "handbook"]);
    expect(options.map((o) => [o.slug, o.visible])).toEqual([
      ["gone", false],
      ["handbook", true],
    ]);
    expect(knowledgeBaseOptions(null, ["gone"]).map((o) => o.slug)).toEqual(["gone"]);
    expect(knowledgeBaseOptions(null, null)).toEqual([]);
  });

  test("not set inherits, an empty list is none, otherwise the list", () => {
    expect(knowledgeBasesChoice(null)).toEqual({ kind: "inherit" });
    expect(knowledgeBasesChoice([])).toEqual({ kind: "none" });
    expect(knowledgeBasesChoice(["a"])).toEqual({ kind: "some", slugs: ["a"] });
  });

  test("ticking adds a slug once, unticking removes it, and inherit becomes a list", () => {
    expect(toggleKnowledgeBase(null, "a", true)).toEqual(["a"]);
    expect(toggleKnowledgeBase(["a"], "a", true)).toEqual(["a"]);
    expect(toggleKnowledgeBase(["a", "b"], "a", false)).toEqual(["b"]);
    expect(toggleKnowledgeBase(null, "a", false)).toEqual([]);
  });
});
