import type { FormEvent, ReactNode } from "react";
import { useTranslation } from "react-i18next";
import type { FormSave } from "../lib/useFormSave";

interface ResourceFormProps {
  title: string;
  /** Why the user may not change this resource; the form is then shown but cannot be saved. */
  readOnly: string | null;
  /** The form's save state (`useFormSave`). */
  save: Pick<FormSave<unknown>, "formRef" | "formError" | "saving">;
  onSubmit: (event: FormEvent) => void;
  onCancel: () => void;
  testIds: { readOnly: string; formError: string; save: string; cancel: string };
  /** The fields. */
  children: ReactNode;
}

/**
 * The page of a resource form (agents, knowledge bases, MCP servers): the title, the read-only
 * note, the fields, the form-wide error, Save and Cancel.
 */
export function ResourceForm({
  title,
  readOnly,
  save,
  onSubmit,
  onCancel,
  testIds,
  children,
}: ResourceFormProps) {
  const { t } = useTranslation();
  const { formRef, formError, saving } = save;
  const locked = readOnly !== null;
  return (
    <main className="page">
      <h1>{title}</h1>
      {locked && (
        <p className="notice-box" role="note" data-testid={testIds.readOnly}>
          {readOnly}
        </p>
      )}
      <form className="agent-form" ref={formRef} onSubmit={onSubmit} noValidate aria-label={title}>
        <fieldset className="plain" disabled={locked}>
          {children}
        </fieldset>
        {formError && (
          <p className="error" role="alert" data-testid={testIds.formError}>
            {formError}
          </p>
        )}
        <div className="form-actions">
          <button type="submit" className="primary" data-testid={testIds.save} disabled={saving || locked}>
            {saving ? t("common.saving") : t("common.save")}
          </button>
          <button type="button" data-testid={testIds.cancel} onClick={onCancel}>
            {t("common.cancel")}
          </button>
        </div>
      </form>
    </main>
  );
}
