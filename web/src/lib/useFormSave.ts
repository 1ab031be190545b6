import { useEffect, useRef, useState, type RefObject } from "react";

/** What a refused save shows: a message per field, and one for the whole form. */
export interface SaveFailure<E> {
  fields: E;
  form: string | null;
}

export interface FocusOptions {
  /** The test id of the form-wide error: focused when no control is marked. */
  formErrorTestId: string;
  /**
   * Before the form-wide error, try the first control inside the first field that shows an
   * error (a group of checkboxes marks no single control as invalid).
   */
  controlOfFieldError?: boolean;
}

export interface FormSave<E> {
  /** The `<form>`, searched for the control to focus after a refused save. */
  formRef: RefObject<HTMLFormElement | null>;
  errors: E;
  /** Changes the field errors in place (an edit clears the error of the field it touched). */
  setErrors: (update: (current: E) => E) => void;
  formError: string | null;
  saving: boolean;
  /** Shows a refusal found before sending, then moves the focus to it. */
  fail: (fields: E, form: string | null) => void;
  /**
   * Sends: clears the errors and shows "Saving…" meanwhile; a failure is worded by `explain`
   * and shown like {@link FormSave.fail}.
   */
  run: (send: () => Promise<void>, explain: (failure: unknown) => SaveFailure<E>) => Promise<void>;
}

/**
 * The state of a resource form around its save: the field errors, the form-wide error, the
 * saving flag, and the focus that goes, after every refused save, to the first marked control
 * (scrolled into view) so that a keyboard or screen reader user lands on what to fix.
 */
export function useFormSave<E extends object>(focus: FocusOptions): FormSave<E> {
  const { formErrorTestId, controlOfFieldError = false } = focus;
  const [errors, setErrorsState] = useState<E>(() => ({}) as E);
  const [formError, setFormError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  // Counts refused saves: each one moves the focus again, even when the errors are the same.
  const [failedSaves, setFailedSaves] = useState(0);
  const formRef = useRef<HTMLFormElement>(null);

  useEffect(() => {
    if (failedSaves === 0) return;
    const form = formRef.current;
    const marked =
      form?.querySelector<HTMLElement>('[aria-invalid="true"]') ??
      (controlOfFieldError
        ? form
            ?.querySelector<HTMLElement>(".field-error")
            ?.closest(".field")
            ?.querySelector<HTMLElement>("input, select, textarea")
        : undefined) ??
      form?.querySelector<HTMLElement>(`[data-testid="${formErrorTestId}"]`);
    if (!marked) return;
    marked.scrollIntoView?.({ block: "center" });
    marked.focus({ preventScroll: true });
  }, [failedSaves, controlOfFieldError, formErrorTestId]);

  function fail(fields: E, form: string | null) {
    setErrorsState(fields);
    setFormError(form);
    setFailedSaves((n) => n + 1);
  }

  async function run(send: () => Promise<void>, explain: (failure: unknown) => SaveFailure<E>) {
    setSaving(true);
    setErrorsState({} as E);
    setFormError(null);
    try {
      await send();
    } catch (failure) {
      const shown = explain(failure);
      fail(shown.fields, shown.form);
    } finally {
      setSaving(false);
    }
  }

  return { formRef, errors, setErrors: setErrorsState, formError, saving, fail, run };
}
