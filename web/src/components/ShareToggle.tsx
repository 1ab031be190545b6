import { useTranslation } from "react-i18next";
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
  const { t } = useTranslation();
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
        {t("share.public")}
      </label>
      <FieldError field={field} message={error} />
    </div>
  );
}
