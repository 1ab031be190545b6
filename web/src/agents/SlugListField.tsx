import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { FieldError } from "../components/FieldError";
import { slugListChoice, slugListOptions, toggleSlug, type SlugItem } from "./slugListModel";

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
  summaryInherit: string;
  summaryNone: string;
  summarySome: (names: string) => string;
  useNone: string;
}

interface SlugListFieldProps<T extends SlugItem> {
  /** Names the field in test ids and its error: `field-{field}`, `{field}-summary`, `{field}-none`. */
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
  error: string | undefined;
}

function summary(value: readonly string[] | null, texts: SlugListTexts): string {
  const choice = slugListChoice(value);
  switch (choice.kind) {
    case "inherit":
      return texts.summaryInherit;
    case "none":
      return texts.summaryNone;
    case "some":
      return texts.summarySome(choice.slugs.join(", "));
  }
}

/** A list of things by slug: inherited (not set), exactly the ones ticked, or none (`[]`). */
export function SlugListField<T extends SlugItem>({
  field,
  optionTestId,
  texts,
  value,
  onChange,
  items,
  detail,
  error,
}: SlugListFieldProps<T>) {
  const { t } = useTranslation();
  const options = slugListOptions(items, value);
  return (
    <fieldset className="field checkbox-group" data-testid={`field-${field}`}>
      <legend>{texts.legend}</legend>
      {options.length > 0 && (
        <ul>
          {options.map(({ slug, item }) => (
            <li key={slug}>
              <label>
                <input
                  type="checkbox"
                  data-testid={`${optionTestId}-${slug}`}
                  checked={(value ?? []).includes(slug)}
                  onChange={(e) => onChange(toggleSlug(value, slug, e.target.checked))}
                />
                <span className="option-text">
                  <span className="option-label">
                    {item ? `${item.name} (${slug})` : slug}
                    {item && detail && <span className="muted"> {detail(item)}</span>}
                    {items !== null && !item && <span className="muted">{texts.notVisible}</span>}
                  </span>
                  {item?.description && (
                    <span className="option-description" title={item.description}>
                      {item.description}
                    </span>
                  )}
                </span>
              </label>
            </li>
          ))}
        </ul>
      )}
      {items === null && <p className="muted empty-hint">{texts.loadFailed}</p>}
      {items !== null && options.length === 0 && <p className="muted empty-hint">{texts.noneConfigured}</p>}
      <p className="hint" data-testid={`${field}-summary`}>
        {summary(value, texts)}{" "}
        {value === null && (
          <button type="button" className="link" data-testid={`${field}-none`} onClick={() => onChange([])}>
            {texts.useNone}
          </button>
        )}
        {value !== null && (
          <button type="button" className="link" onClick={() => onChange(null)}>
            {t("common.useServerDefault")}
          </button>
        )}
      </p>
      <FieldError field={field} message={error} />
    </fieldset>
  );
}
