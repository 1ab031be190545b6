import type { TFunction } from "i18next";
import { useTranslation } from "react-i18next";
import type { KnowledgeBaseView } from "../api/knowledge";
import { FieldError } from "../components/FieldError";
import { knowledgeBaseOptions, knowledgeBasesChoice, toggleKnowledgeBase } from "./knowledgeModel";

interface KnowledgeBasesFieldProps {
  /** `null`: not set, the agent inherits the server default. */
  value: string[] | null;
  onChange: (next: string[] | null) => void;
  /** The knowledge bases the user can see; `null` when they could not be loaded. */
  bases: KnowledgeBaseView[] | null;
  error: string | undefined;
}

function summary(value: readonly string[] | null, t: TFunction): string {
  const choice = knowledgeBasesChoice(value);
  switch (choice.kind) {
    case "inherit":
      return t("knowledgeField.summaryInherit");
    case "none":
      return t("knowledgeField.summaryNone");
    case "some":
      return t("knowledgeField.summarySome", { names: choice.slugs.join(", ") });
  }
}

/** The agent's knowledge bases: inherited (not set), exactly the ones ticked, or none (`[]`). */
export function KnowledgeBasesField({ value, onChange, bases, error }: KnowledgeBasesFieldProps) {
  const { t } = useTranslation();
  const options = knowledgeBaseOptions(bases, value);
  return (
    <fieldset className="field checkbox-group" data-testid="field-knowledge-bases">
      <legend>{t("knowledgeField.legend")}</legend>
      {options.length > 0 && (
        <ul>
          {options.map((option) => (
            <li key={option.slug}>
              <label>
                <input
                  type="checkbox"
                  data-testid={`knowledge-base-option-${option.slug}`}
                  checked={(value ?? []).includes(option.slug)}
                  onChange={(e) => onChange(toggleKnowledgeBase(value, option.slug, e.target.checked))}
                />
                <span className="option-text">
                  <span className="option-label">
                    {option.visible ? `${option.name} (${option.slug})` : option.slug}
                    {option.visible && (
                      <span className="muted">
                        {" "}
                        {t("knowledgeField.documents", { count: option.documents })}
                      </span>
                    )}
                    {bases !== null && !option.visible && (
                      <span className="muted">{t("knowledgeField.notVisible")}</span>
                    )}
                  </span>
                  {option.description && (
                    <span className="option-description" title={option.description}>
                      {option.description}
                    </span>
                  )}
                </span>
              </label>
            </li>
          ))}
        </ul>
      )}
      {bases === null && <p className="muted empty-hint">{t("knowledgeField.loadFailed")}</p>}
      {bases !== null && options.length === 0 && (
        <p className="muted empty-hint">{t("knowledgeField.noneConfigured")}</p>
      )}
      <p className="hint" data-testid="knowledge-bases-summary">
        {summary(value, t)}{" "}
        {value === null && (
          <button
            type="button"
            className="link"
            data-testid="knowledge-bases-none"
            onClick={() => onChange([])}
          >
            {t("knowledgeField.useNone")}
          </button>
        )}
        {value !== null && (
          <button type="button" className="link" onClick={() => onChange(null)}>
            {t("common.useServerDefault")}
          </button>
        )}
      </p>
      <FieldError field="knowledge-bases" message={error} />
    </fieldset>
  );
}
