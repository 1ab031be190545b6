import type { TFunction } from "i18next";
import { useTranslation } from "react-i18next";
import type { SkillView } from "../api/skills";
import { FieldError } from "../components/FieldError";
import { ALL_SKILLS, skillNameOptions, skillsChoice, toggleSkill } from "../skills/skillModel";

interface SkillsFieldProps {
  /** `null`: not set, the agent inherits the server default. */
  value: string[] | null;
  onChange: (next: string[] | null) => void;
  /** The skills the user can see; `null` when they could not be loaded. */
  skills: SkillView[] | null;
  error: string | undefined;
}

function summary(value: readonly string[] | null, t: TFunction): string {
  const choice = skillsChoice(value);
  switch (choice.kind) {
    case "inherit":
      return t("skillsField.summaryInherit");
    case "all":
      return t("skillsField.summaryAll");
    case "none":
      return t("skillsField.summaryNone");
    case "some":
      return t("skillsField.summarySome", { names: choice.names.join(", ") });
  }
}

/**
 * The agent's skills: inherited (not set), every skill the user can see (`["*"]`), exactly
 * the names ticked, or none (`[]`).
 */
export function SkillsField({ value, onChange, skills, error }: SkillsFieldProps) {
  const { t } = useTranslation();
  const all = skillsChoice(value).kind === "all";
  const names = skillNameOptions(skills ?? [], value);
  const visible = new Set((skills ?? []).map((s) => s.name));
  const descriptions = new Map((skills ?? []).filter((s) => !s.shadowed).map((s) => [s.name, s.description]));
  return (
    <fieldset className="field checkbox-group" data-testid="field-skills">
      <legend>{t("skillsField.legend")}</legend>
      <ul>
        <li>
          <label>
            <input
              type="checkbox"
              data-testid="skill-option-all"
              checked={all}
              onChange={(e) => onChange(toggleSkill(value, ALL_SKILLS, e.target.checked))}
            />
            {t("skillsField.all")}
          </label>
        </li>
        {names.map((name) => (
          <li key={name}>
            <label title={descriptions.get(name)}>
              <input
                type="checkbox"
                data-testid={`skill-option-${name}`}
                checked={all || (value ?? []).includes(name)}
                disabled={all}
                onChange={(e) => onChange(toggleSkill(value, name, e.target.checked))}
              />
              {name}
              {skills !== null && !visible.has(name) && (
                <span className="muted">{t("skillsField.notVisible")}</span>
              )}
            </label>
          </li>
        ))}
      </ul>
      {skills === null && <p className="muted empty-hint">{t("skillsField.loadFailed")}</p>}
      {skills !== null && names.length === 0 && (
        <p className="muted empty-hint">{t("skillsField.noneInstalled")}</p>
      )}
      <p className="hint">
        {summary(value, t)}{" "}
        {value !== null && (
          <button type="button" className="link" onClick={() => onChange(null)}>
            {t("common.useServerDefault")}
          </button>
        )}
      </p>
      <FieldError field="skills" message={error} />
    </fieldset>
  );
}
