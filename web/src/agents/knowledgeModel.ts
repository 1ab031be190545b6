/**
 * The agent form's knowledge bases field, apart from React: which knowledge bases it offers
 * and what its value means. The value is the agent's `context.knowledge_bases`: `null` (not
 * set) inherits the server default, a list names knowledge bases by slug, `[]` is none.
 */

import type { KnowledgeBaseView } from "../api/knowledge";

/** A knowledge base the field offers. */
export interface KnowledgeBaseOption {
  slug: string;
  name: string;
  description: string;
  documents: number;
  /** `false` for a slug the agent names that the user cannot see (or that is gone). */
  visible: boolean;
}

/**
 * The knowledge bases the field offers, by slug: every one the user can see, plus slugs the
 * agent names that are not among them, so saving the form does not drop them silently.
 */
export function knowledgeBaseOptions(
  bases: readonly KnowledgeBaseView[] | null,
  stored: readonly string[] | null,
): KnowledgeBaseOption[] {
  const options = new Map<string, KnowledgeBaseOption>();
  for (const kb of bases ?? []) {
    options.set(kb.slug, {
      slug: kb.slug,
      name: kb.name,
      description: kb.description,
      documents: kb.counts.documents,
      visible: true,
    });
  }
  for (const slug of stored ?? []) {
    if (!options.has(slug)) {
      options.set(slug, { slug, name: slug, description: "", documents: 0, visible: false });
    }
  }
  return [...options.values()].sort((a, b) => a.slug.localeCompare(b.slug));
}

/** What the field's value means: inherit (`null`), none (`[]`), or a list of slugs. */
export type KnowledgeBasesChoice = { kind: "inherit" } | { kind: "none" } | { kind: "some"; slugs: string[] };

export function knowledgeBasesChoice(value: readonly string[] | null): KnowledgeBasesChoice {
  if (value === null) return { kind: "inherit" };
  if (value.length === 0) return { kind: "none" };
  return { kind: "some", slugs: [...value] };
}

/** The field's value after ticking (`on`) or unticking the knowledge base `slug`. */
export function toggleKnowledgeBase(value: readonly string[] | null, slug: string, on: boolean): string[] {
  const rest = (value ?? []).filter((s) => s !== slug);
  return on ? [...rest, slug] : rest;
}
