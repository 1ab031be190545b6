import { useTranslation } from "react-i18next";
import type { KnowledgeBaseView } from "../api/knowledge";
import { SlugListField } from "./SlugListField";

interface KnowledgeBasesFieldProps {
  /** `null`: not set, the agent inherits the server default. */
  value: string[] | null;
  onChange: (next: string[] | null) => void;
  /** The knowledge bases the user can see; `null` when they could not be loaded. */
  bases: KnowledgeBaseView[] | null;
  /** What not setting the field resolves to; `undefined` when unknown. */
  inherited: readonly string[] | undefined;
  error: string | undefined;
}

/** The agent's knowledge bases (`context.knowledge_bases`), each shown with its document count. */
export function KnowledgeBasesField({ value, onChange, bases, inherited, error }: KnowledgeBasesFieldProps) {
  const { t } = useTranslation();
  return (
    <SlugListField
      field="knowledge-bases"
      optionTestId="knowledge-base-option"
      texts={{
        legend: t("knowledgeField.legend"),
        notVisible: t("knowledgeField.notVisible"),
        loadFailed: t("knowledgeField.loadFailed"),
        noneConfigured: t("knowledgeField.noneConfigured"),
        none: t("listChoice.noneKnowledgeBases"),
      }}
      value={value}
      onChange={onChange}
      items={bases}
      detail={(kb) => t("knowledgeField.documents", { count: kb.counts.documents })}
      inherited={inherited}
      error={error}
    />
  );
}
