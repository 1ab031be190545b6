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

function summary(value: readonly string[] | null): string {
  const choice = skillsChoice(value);
  switch (choice.kind) {
    case "inherit":
      return "Not set: inherits the server default (all skills the user can see).";
    case "all":
      return "All skills the user can see, including ones added later.";
    case "none":
      return "None: the agent gets no skills.";
    case "some":
      return `Only: ${choice.names.join(", ")}.`;
  }
}

/**
 * The agent's skills: inherited (not set), every skill the user can see (`["*"]`), exactly
 * the names ticked, or none (`[]`).
 */
export function SkillsField({ value, onChange, skills, error }: SkillsFieldProps) {
  const all = skillsChoice(value).kind === "all";
  const names = skillNameOptions(skills ?? [], value);
  const visible = new Set((skills ?? []).map((s) => s.name));
  const descriptions = new Map((skills ?? []).filter((s) => !s.shadowed).map((s) => [s.name, s.description]));
  return (
    <fieldset className="field checkbox-group" data-testid="field-skills">
      <legend>Skills</legend>
      <ul>
        <li>
          <label>
            <input
              type="checkbox"
              data-testid="skill-option-all"
              checked={all}
              onChange={(e) => onChange(toggleSkill(value, ALL_SKILLS, e.target.checked))}
            />
            All skills I can see
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
              {skills !== null && !visible.has(name) && <span className="muted"> (not visible to you)</span>}
            </label>
          </li>
        ))}
      </ul>
      {skills === null && <p className="muted empty-hint">Could not load the list of skills.</p>}
      {skills !== null && names.length === 0 && (
        <p className="muted empty-hint">No skills are installed yet.</p>
      )}
      <p className="hint">
        {summary(value)}{" "}
        {value !== null && (
          <button type="button" className="link" onClick={() => onChange(null)}>
            Use the server default
          </button>
        )}
      </p>
      <FieldError field="skills" message={error} />
    </fieldset>
  );
}
