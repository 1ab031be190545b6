import { useId, useState, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { CheckboxOptions } from "../components/CheckboxGroup";
import { FieldError } from "../components/FieldError";
import {
  modeOf,
  resolveList,
  resolvedText,
  shortList,
  valueForMode,
  type ListMode,
  type ListSpec,
} from "./listChoice";

export interface ListChoiceOption {
  value: string;
  label: ReactNode;
  /** A longer line under the label. */
  description?: string;
}

interface ListChoiceFieldProps {
  /** Names the test ids and the error: `field-{field}`, `{field}-mode-{mode}`, `{field}-resolved`. */
  field: string;
  legend: string;
  spec: ListSpec;
  /** The words of "All" and "None", for the fields that have them. */
  labels: { all?: string; none?: string };
  /** `null`: not set (inherit, or all subagents). */
  value: string[] | null;
  onChange: (next: string[] | null) => void;
  options: readonly ListChoiceOption[];
  optionTestId: (value: string) => string;
  /** Shown under "Only these" when there is nothing to tick, or the list could not be loaded. */
  emptyHint?: ReactNode;
  /** What "Inherit" resolves to; `undefined` when the server default could not be read. */
  inherited: readonly string[] | undefined;
  /** What "All" resolves to: every one the user can see now. */
  all: readonly string[];
  error: string | undefined;
}

/**
 * A list field as an explicit choice of the states the server tells apart (inherit the default,
 * all, none, only these), with the checkboxes under "Only these" and what the choice resolves
 * to beside it.
 */
export function ListChoiceField(props: ListChoiceFieldProps) {
  const { field, legend, spec, labels, value, onChange, options, optionTestId, emptyHint, error } = props;
  const { t } = useTranslation();
  const [picked, setPicked] = useState<ListMode | null>(null);
  const resolvedId = useId();
  const mode = modeOf(spec, value, picked);
  const resolved = resolveList(mode, value, { inherited: props.inherited, all: props.all });
  const inherited = resolveList("inherit", null, { inherited: props.inherited, all: props.all });
  const selected = value ?? [];

  const label = (choice: ListMode): string => {
    switch (choice) {
      case "inherit":
        return inherited === null
          ? t("listChoice.inherit")
          : t("listChoice.inheritWith", { value: shortList(inherited, t) });
      case "all":
        return labels.all ?? "";
      case "none":
        return labels.none ?? "";
      case "some":
        return t("listChoice.some");
    }
  };
  const choose = (choice: ListMode) => {
    setPicked(choice);
    onChange(valueForMode(spec, choice, value));
  };
  return (
    <fieldset
      className="field checkbox-group list-choice"
      data-testid={`field-${field}`}
      aria-describedby={resolvedId}
    >
      <legend>{legend}</legend>
      <ul className="list-choice-modes">
        {spec.modes.map((choice) => (
          <li key={choice}>
            <label>
              <input
                type="radio"
                name={`${field}-mode`}
                value={choice}
                data-testid={`${field}-mode-${choice}`}
                checked={mode === choice}
                onChange={() => choose(choice)}
              />
              {label(choice)}
            </label>
            {choice === "some" && mode === "some" && (
              <>
                {options.length > 0 && (
                  <CheckboxOptions
                    className="list-choice-options"
                    options={options}
                    selected={selected}
                    onChange={onChange}
                    optionTestId={optionTestId}
                  />
                )}
                {emptyHint && <p className="muted empty-hint">{emptyHint}</p>}
              </>
            )}
          </li>
        ))}
      </ul>
      <p className="hint list-choice-resolved" id={resolvedId} data-testid={`${field}-resolved`}>
        {resolvedText(resolved, t)}
      </p>
      <FieldError field={field} message={error} />
    </fieldset>
  );
}
