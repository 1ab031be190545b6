import { FieldError } from "./FieldError";

interface ShareToggleProps {
  checked: boolean;
  onChange: (shared: boolean) => void;
  testId: string;
  /** The `error-<field>` id its error is shown under. */
  field: string;
  error?: string | undefined;
  disabled?: boolean;
}

/** "Share with every user (public)": the sharing control of agents and skills. */
export function ShareToggle({ checked, onChange, testId, field, error, disabled }: ShareToggleProps) {
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
        Share with every user (public)
      </label>
      <FieldError field={field} message={error} />
    </div>
  );
}
