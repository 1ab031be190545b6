/**
 * An agent-form field that names a list of things by slug (knowledge bases, MCP servers),
 * apart from React: which things it offers and what its value means. The value is `null`
 * (not set) to inherit the server default, a list of slugs, or `[]` for none.
 */

/** What the field needs of each thing it lists. */
export interface SlugItem {
  slug: string;
  name: string;
  description: string;
}

/** A slug the field offers. */
export interface SlugOption<T extends SlugItem> {
  slug: string;
  /** The thing as the user sees it; `null` for a slug the agent names that the user cannot see (or that is gone). */
  item: T | null;
}

/**
 * The slugs the field offers, sorted: every item the user can see, plus slugs the agent names
 * that are not among them, so saving the form does not drop them silently.
 */
export function slugListOptions<T extends SlugItem>(
  items: readonly T[] | null,
  stored: readonly string[] | null,
): SlugOption<T>[] {
  const options = new Map<string, SlugOption<T>>();
  for (const item of items ?? []) options.set(item.slug, { slug: item.slug, item });
  for (const slug of stored ?? []) {
    if (!options.has(slug)) options.set(slug, { slug, item: null });
  }
  return [...options.values()].sort((a, b) => a.slug.localeCompare(b.slug));
}

/** What the field's value means: inherit (`null`), none (`[]`), or a list of slugs. */
export type SlugListChoice = { kind: "inherit" } | { kind: "none" } | { kind: "some"; slugs: string[] };

export function slugListChoice(value: readonly string[] | null): SlugListChoice {
  if (value === null) return { kind: "inherit" };
  if (value.length === 0) return { kind: "none" };
  return { kind: "some", slugs: [...value] };
}

/** The field's value after ticking (`on`) or unticking `slug`. */
export function toggleSlug(value: readonly string[] | null, slug: string, on: boolean): string[] {
  const rest = (value ?? []).filter((s) => s !== slug);
  return on ? [...rest, slug] : rest;
}
