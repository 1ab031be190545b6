/**
 * The labelled controls every resource form is made of. A form names its controls after its
 * fields with one prefix (`""` for agents, `kb-`, `mcp-`): the control is `<prefix>input-<field>`
 * (what the label points at) with the test id `<prefix>field-<field>`, and the error under it is
 * `error-<field>`, which the control names as its description while the error shows.
 */

import type { ReactNode } from "react";
import { FieldError } from "./FieldError";

/** The id, test id and error wiring of the control of `field` (spread onto the control). */
export function controlProps(prefix: string, field: string, error: string | undefined) {
  return {
    id: `${prefix}input-${field}`,
    "data-testid": `${prefix}field-${field}`,
    "aria-invalid": Boolean(error),
    "aria-describedby": error ? `error-${field}` : undefined,
  };
}

interface FieldProps {
  label: string;
  field: string;
  error: string | undefined;
  hint?: ReactNode;
  /** The form's prefix of control ids (see {@link controlProps}); none by default. */
  prefix?: string;
  /** The control, made with {@link controlProps} and the same prefix and field. */
  children: ReactNode;
}

/** A labelled control with its hint and error underneath. */
export function Field({ label, field, error, hint, prefix = "", children }: FieldProps) {
  return (
    <div className="field">
      <label htmlFor={`${prefix}input-${field}`}>{label}</label>
      {children}
      {hint && <p className="hint">{hint}</p>}
      <FieldError field={field} message={error} />
    </div>
  );
}

interface CheckFieldProps {
  label: ReactNode;
  checked: boolean;
  onChange: (checked: boolean) => void;
  testId: string;
  /** The `error-<field>` id its error is shown under. */
  field: string;
  error?: string | undefined;
  hint?: ReactNode;
  disabled?: boolean;
}

/** A checkbox with its label beside it, then its hint and error underneath. */
export function CheckField({
  label,
  checked,
  onChange,
  testId,
  field,
  error,
  hint,
  disabled,
}: CheckFieldProps) {
  return (
    <div className="field">
      <label className="check">
        <input
          type="checkbox"
          data-testid={testId}
          checked={checked}
          disabled={disabled}
          onChange={(e) => onChange(e.target.checked)}
        />
        {label}
      </label>
      {hint && <p className="hint">{hint}</p>}
      <FieldError field={field} message={error} />
    </div>
  );
}
