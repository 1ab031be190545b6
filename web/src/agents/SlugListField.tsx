import type { ReactNode } from "react";
import { ListChoiceField } from "./ListChoiceField";
import { LIST_SPECS } from "./listChoice";
import { slugListOptions, type SlugItem } from "./slugListModel";

/**
 * The field's own words, already translated. The callers pass them rather than an i18n key
 * prefix so every key stays a literal that the compiler and the i18n completeness test check.
 */
export interface SlugListTexts {
  legend: string;
  /** After a slug the user cannot see. */
  notVisible: string;
  loadFailed: string;
  noneConfigured: string;
  /** The "None" choice. */
  none: string;
}

interface SlugListFieldProps<T extends SlugItem> {
  /** Names the field in test ids and its error: `field-{field}`, `{field}-mode-{mode}`, `{field}-resolved`. */
  field: string;
  /** Each checkbox's test id is `{optionTestId}-{slug}`. */
  optionTestId: string;
  texts: SlugListTexts;
  /** `null`: not set, the agent inherits the server default. */
  value: string[] | null;
  onChange: (next: string[] | null) => void;
  /** The things the user can see; `null` when they could not be loaded. */
  items: T[] | null;
  /** Extra words after a visible item's name, such as its document count. */
  detail?: (item: T) => ReactNode;
  /** What not setting the field resolves to; `undefined` when unknown. */
  inherited: readonly string[] | undefined;
  error: string | undefined;
}

/** A list of things by slug: inherited (not set), none (`[]`), or exactly the ones ticked. */
export function SlugListField<T extends SlugItem>({
  field,
  optionTestId,
  texts,
  value,
  onChange,
  items,
  detail,
  inherited,
  error,
}: SlugListFieldProps<T>) {
  const options = slugListOptions(items, value).map(({ slug, item }) => ({
    value: slug,
    label: (
      <>
        {item ? `${item.name} (${slug})` : slug}
        {item && detail && <span className="muted"> {detail(item)}</span>}
        {items !== null && !item && <span className="muted">{texts.notVisible}</span>}
      </>
    ),
    description: item?.description || undefined,
  }));
  return (
    <ListChoiceField
      field={field}
      legend={texts.legend}
      spec={LIST_SPECS.knowledgeBases}
      labels={{ none: texts.none }}
      value={value}
      onChange={onChange}
      options={options}
      optionTestId={(slug) => `${optionTestId}-${slug}`}
      emptyHint={items === null ? texts.loadFailed : options.length === 0 ? texts.noneConfigured : undefined}
      inherited={inherited}
      all={[]}
      error={error}
    />
  );
}
