import { useTranslation } from "react-i18next";
import type { SkillView } from "../api/skills";
import { skillDescription } from "../lib/builtinText";
import { skillNameOptions } from "../skills/skillModel";
import { ListChoiceField } from "./ListChoiceField";
import { LIST_SPECS } from "./listChoice";

interface SkillsFieldProps {
  /** `null`: not set, the agent inherits the server default. */
  value: string[] | null;
  onChange: (next: string[] | null) => void;
  /** The skills the user can see; `null` when they could not be loaded. */
  skills: SkillView[] | null;
  /** What not setting the field resolves to; `undefined` when unknown. */
  inherited: readonly string[] | undefined;
  error: string | undefined;
}

/**
 * The agent's skills: inherited (not set), every skill the user can see (`["*"]`), none
 * (`[]`), or exactly the names ticked.
 */
export function SkillsField({ value, onChange, skills, inherited, error }: SkillsFieldProps) {
  const { t } = useTranslation();
  const names = skillNameOptions(skills ?? [], value);
  const visible = skillNameOptions(skills ?? [], null);
  const winners = new Map((skills ?? []).filter((s) => !s.shadowed).map((s) => [s.name, s]));
  const options = names.map((name) => {
    const skill = winners.get(name);
    return {
      value: name,
      label: (
        <>
          {name}
          {skills !== null && !visible.includes(name) && (
            <span className="muted">{t("skillsField.notVisible")}</span>
          )}
        </>
      ),
      description: skill ? skillDescription(skill) || undefined : undefined,
    };
  });
  return (
    <ListChoiceField
      field="skills"
      legend={t("skillsField.legend")}
      spec={LIST_SPECS.skills}
      labels={{ all: t("listChoice.allSkills"), none: t("listChoice.noneSkills") }}
      value={value}
      onChange={onChange}
      options={options}
      optionTestId={(name) => `skill-option-${name}`}
      emptyHint={
        skills === null
          ? t("skillsField.loadFailed")
          : names.length === 0
            ? t("skillsField.noneInstalled")
            : undefined
      }
      inherited={inherited}
      all={visible}
      error={error}
    />
  );
}
