import { useTranslation } from "react-i18next";
import { CheckboxGroup, type CheckboxOption } from "../components/CheckboxGroup";
import { FieldError } from "../components/FieldError";

interface InheritableListProps {
  legend: string;
  field: string;
  options: readonly CheckboxOption[];
  /** `null`: not set, the agent inherits the server default. */
  value: string[] | null;
  onChange: (next: string[] | null) => void;
  optionTestId: (value: string) => string;
  emptyHint: string;
  error: string | undefined;
}

/** A list field that is either inherited (not set) or the agent's own choice, even if empty. */
export function InheritableList(props: InheritableListProps) {
  const { legend, field, options, value, onChange, optionTestId, emptyHint, error } = props;
  const { t } = useTranslation();
  const hint =
    value === null ? (
      <>{t("agentForm.inheritNotSet")}</>
    ) : (
      <>
        {value.length === 0
          ? t("agentForm.inheritNone")
          : t("agentForm.inheritSelected", { count: value.length })}{" "}
        <button type="button" className="link" onClick={() => onChange(null)}>
          {t("common.useServerDefault")}
        </button>
      </>
    );
  return (
    <CheckboxGroup
      legend={legend}
      testId={`field-${field}`}
      options={options}
      selected={value ?? []}
      onChange={onChange}
      optionTestId={optionTestId}
      emptyHint={emptyHint}
      hint={options.length > 0 ? hint : undefined}
      error={<FieldError field={field} message={error} />}
    />
  );
}
