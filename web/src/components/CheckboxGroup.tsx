import type { ReactNode } from "react";

export interface CheckboxOption {
  value: string;
  label: ReactNode;
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
  return (
    <fieldset className="field checkbox-group" data-testid={testId}>
      <legend>{legend}</legend>
      {options.length === 0 ? (
        <p className="muted empty-hint">{emptyHint}</p>
      ) : (
        <CheckboxOptions
          options={options}
          selected={selected}
          onChange={onChange}
          optionTestId={optionTestId}
        />
      )}
      {hint && <p className="hint">{hint}</p>}
      {error}
    </fieldset>
  );
}

interface CheckboxOptionsProps {
  options: readonly CheckboxOption[];
  selected: readonly string[];
  onChange: (next: string[]) => void;
  optionTestId: (value: string) => string;
  className?: string;
}

/** The labelled checkboxes of a multi-select, each with its description when it has one. */
export function CheckboxOptions({
  options,
  selected,
  onChange,
  optionTestId,
  className,
}: CheckboxOptionsProps) {
  const toggle = (value: string, on: boolean) =>
    onChange(on ? [...selected, value] : selected.filter((v) => v !== value));
  return (
    <ul className={className}>
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
  );
}
