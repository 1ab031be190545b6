import { useState } from "react";
import { useTranslation } from "react-i18next";
import { fallbackSlug, suggestSlug } from "../lib/slug";
import { controlProps, Field } from "./Field";

/** The part of a resource form's state this section edits. */
export interface NameValues {
  name: string;
  slug: string;
  description: string;
}

interface NameFieldsProps {
  /** The form's prefix of control ids (see `controlProps`); the section is `<prefix>section-display`. */
  prefix: string;
  /** The form's words: `name`, `slug`, `description` and `sections.display`. */
  texts: "agentForm" | "knowledge.form" | "mcp.form";
  form: NameValues;
  errors: Partial<Record<keyof NameValues, string>>;
  onChange: (patch: Partial<NameValues>) => void;
  /** The slug cannot change (others refer to the resource by it): once created, or built in. */
  slugFixed: boolean;
  slugHint: string;
  descriptionHint?: string;
  /**
   * Set for a new resource: the slug follows the name (see `suggestSlug`) for as long as it still
   * equals the slug the name suggests (an edited slug stays as the user wrote it).
   */
  slugFollowsName: boolean;
  /** What a name that spells no slug (emoji only) is called instead: `<slugKind>-x7k2`. */
  slugKind: "agent" | "kb" | "mcp";
}

/** The first section of a resource form: the name, the slug it is referred to by, a description. */
export function NameFields(props: NameFieldsProps) {
  const { prefix, texts, form, errors, onChange, slugFixed, slugHint, descriptionHint } = props;
  const { slugFollowsName, slugKind } = props;
  const { t } = useTranslation();
  // Drawn once per form, so the slug of such a name stays put while the user types.
  const [fallback] = useState(() => fallbackSlug(slugKind));
  const suggest = (name: string) => suggestSlug(name, fallback);
  return (
    <section className="form-section" aria-labelledby={`${prefix}section-display`}>
      <h2 id={`${prefix}section-display`}>{t(`${texts}.sections.display`)}</h2>
      <Field prefix={prefix} label={t(`${texts}.name`)} field="name" error={errors.name}>
        <input
          {...controlProps(prefix, "name", errors.name)}
          value={form.name}
          onChange={(e) => {
            const name = e.target.value;
            const followsName = slugFollowsName && form.slug === suggest(form.name);
            onChange(followsName ? { name, slug: suggest(name) } : { name });
          }}
        />
      </Field>
      <Field prefix={prefix} label={t(`${texts}.slug`)} field="slug" error={errors.slug} hint={slugHint}>
        <input
          {...controlProps(prefix, "slug", errors.slug)}
          value={form.slug}
          readOnly={slugFixed}
          onChange={(e) => onChange({ slug: e.target.value })}
        />
      </Field>
      <Field
        prefix={prefix}
        label={t(`${texts}.description`)}
        field="description"
        error={errors.description}
        hint={descriptionHint}
      >
        <textarea
          {...controlProps(prefix, "description", errors.description)}
          rows={2}
          value={form.description}
          onChange={(e) => onChange({ description: e.target.value })}
        />
      </Field>
    </section>
  );
}
