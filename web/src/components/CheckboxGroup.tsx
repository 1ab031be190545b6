import type { ReactNode } from "react";

export interface CheckboxOption {
  value: string;
  label: string;
  description?: string;
}

interface CheckboxGroupProps {
  legend: string;
  testId: string;
  options: readonly CheckboxOption[];
  selected: readonly string[];
  onChange: (next: string[]) => void;
  optionTestId: (value: string) => string;
  /** Shown instead of the options when there are none. */
  emptyHint: string;
  /** A line under the options (what the current choice means). */
  hint?: ReactNode;
  error?: ReactNode;
}

/** A multi-select as a fieldset of labelled checkboxes. */
export function CheckboxGroup(props: CheckboxGroupProps) {
  const { legend, testId, options, selected, onChange, optionTestId, emptyHint, hint, error } = props;
  const toggle = (value: string, on: boolean) =>
    onChange(on ? [...selected, value] : selected.filter((v) => v !== value));
  return (
    <fieldset className="field checkbox-group" data-testid={testId}>
      <legend>{legend}</legend>
      {options.length === 0 ? (
        <p className="muted empty-hint">{emptyHint}</p>
      ) : (
        <ul>
          {options.map((option) => (
            <li key={option.value}>
              <label>
                <input
                  type="checkbox"
                  data-testid={optionTestId(option.value)}
                  checked={selected.includes(option.value)}
                  onChange={(e) => toggle(option.value, e.target.checked)}
                />
                <span className="option-text">
                  <span className="option-label">{option.label}</span>
                  {option.description && (
                    <span
                      className="option-description"
                      title={option.description}
                      data-testid={`${optionTestId(option.value)}-description`}
                    >
                      {option.description}
                    </span>
                  )}
                </span>
              </label>
            </li>
          ))}
        </ul>
      )}
      {hint && <p className="hint">{hint}</p>}
      {error}
    </fieldset>
  );
}
