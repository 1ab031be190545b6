import { useTranslation } from "react-i18next";
import type { KnowledgeBaseView } from "../api/knowledge";
import type { SkillView } from "../api/skills";
import type { Agent, McpServerView, ModelCatalog, ToolDescription } from "../api/types";
import { CheckField, controlProps, Field } from "../components/Field";
import { NameFields } from "../components/NameFields";
import { ShareToggle } from "../components/ShareToggle";
import { agentDescription, agentName, toolDescription } from "../lib/builtinText";
import {
  modelValue,
  showsScript,
  visibleFields,
  type AgentFormState,
  type BackendChoice,
  type FieldErrors,
  type FormField,
} from "./formModel";
import { KnowledgeBasesField } from "./KnowledgeBasesField";
import { ListChoiceField } from "./ListChoiceField";
import { LIST_SPECS, type InheritedDefaults } from "./listChoice";
import { McpServersField } from "./McpServersField";
import { ScriptHelp } from "./ScriptHelp";
import { SkillsField } from "./SkillsField";

/** What the agent form offers to choose from, read once when the form opens. */
export interface AgentCatalog {
  models: ModelCatalog;
  tools: ToolDescription[];
  agents: Agent[];
  /** `null` when the skills could not be listed: the form still works, without choices. */
  skills: SkillView[] | null;
  /** `null` when the MCP servers could not be listed, likewise. */
  mcpServers: McpServerView[] | null;
  /** `null` when the knowledge bases could not be listed, likewise. */
  knowledgeBases: KnowledgeBaseView[] | null;
}

interface AgentFieldsProps {
  form: AgentFormState;
  onChange: (patch: Partial<AgentFormState>) => void;
  errors: FieldErrors;
  catalog: AgentCatalog;
  original: Agent | null;
  isAdmin: boolean;
  /** What each list field inherits; absent while loading or when it could not be read. */
  inherited?: InheritedDefaults | null;
}

export function AgentFields(props: AgentFieldsProps) {
  const { form, onChange, errors, catalog, original, isAdmin, inherited } = props;
  const { t } = useTranslation();
  const shown = visibleFields(form.backend);
  // A subagent inherits the SubAgentContext defaults over the base ones.
  const defaults = form.backend === "SubAgentBackend" ? inherited?.subagent : inherited?.base;
  const toolNames = catalog.tools.map((tool) => tool.name);
  const subagents = catalog.agents.filter((a) => a.is_subagent);
  // A built-in agent keeps its slug, type and sharing: other agents and every user rely on them.
  const builtin = original?.is_builtin ?? false;
  const input = (field: FormField) => controlProps("", field, errors[field]);

  return (
    <>
      <NameFields
        prefix=""
        texts="agentForm"
        form={form}
        errors={errors}
        onChange={onChange}
        slugFixed={builtin}
        slugHint={builtin ? t("agentForm.builtinSlug") : t("agentForm.slugHint")}
        slugFollowsName={!original}
        slugKind="agent"
      />

      <section className="form-section" aria-labelledby="section-type">
        <h2 id="section-type">{t("agentForm.sections.type")}</h2>
        <Field
          label={t("agentForm.backend")}
          field="backend"
          error={errors.backend}
          hint={
            builtin
              ? t("agentForm.builtinBackend")
              : form.backend === "SubAgentBackend"
                ? t("agentForm.backendHintSubagent")
                : t("agentForm.backendHintNormal")
          }
        >
          <select
            {...input("backend")}
            disabled={builtin}
            value={form.backend}
            onChange={(e) => onChange({ backend: e.target.value as BackendChoice })}
          >
            <option value="normal">{t("agentForm.backendNormal")}</option>
            <option value="SubAgentBackend">{t("agentForm.backendSubagent")}</option>
          </select>
        </Field>
        <ShareToggle
          testId="field-share-config"
          field="share-config"
          checked={form.shared}
          disabled={builtin}
          onChange={(shared) => onChange({ shared })}
          error={errors["share-config"]}
        />
        {builtin && <p className="hint">{t("agentForm.builtinSharing")}</p>}
        {shown.isDefault && (
          <CheckField
            label={t("agentForm.isDefault")}
            testId="field-default"
            field="default"
            checked={form.isDefault}
            disabled={!isAdmin}
            onChange={(isDefault) => onChange({ isDefault })}
            hint={isAdmin ? undefined : t("agentForm.defaultAdminOnly")}
            error={errors.default}
          />
        )}
      </section>

      <section className="form-section" aria-labelledby="section-runtime">
        <h2 id="section-runtime">{t("agentForm.sections.runtime")}</h2>
        <Field
          label={t("agentForm.systemPrompt")}
          field="system-prompt"
          error={errors["system-prompt"]}
          hint={t("agentForm.systemPromptHint")}
        >
          <textarea
            {...input("system-prompt")}
            rows={5}
            value={form.systemPrompt}
            onChange={(e) => onChange({ systemPrompt: e.target.value })}
          />
        </Field>
        <ModelField form={form} onChange={onChange} errors={errors} models={catalog.models} input={input} />
        <ListChoiceField
          field="tools"
          legend={t("agentForm.tools")}
          spec={LIST_SPECS.tools}
          labels={{ none: t("listChoice.noneTools") }}
          value={form.tools}
          onChange={(tools) => onChange({ tools })}
          options={[
            ...catalog.tools.map((tool) => ({
              value: tool.name,
              label: tool.name,
              description: toolDescription(tool.name, tool.description) || undefined,
            })),
            // A stored name this server does not offer stays, so saving does not drop it silently.
            ...(form.tools ?? [])
              .filter((name) => !toolNames.includes(name))
              .map((name) => ({ value: name, label: name })),
          ]}
          optionTestId={(name) => `tool-${name}`}
          emptyHint={catalog.tools.length === 0 ? t("agentForm.toolsEmpty") : undefined}
          inherited={defaults?.tools}
          all={toolNames}
          error={errors.tools}
        />
        <KnowledgeBasesField
          value={form.knowledgeBases}
          onChange={(knowledgeBases) => onChange({ knowledgeBases })}
          bases={catalog.knowledgeBases}
          inherited={defaults?.knowledge_bases}
          error={errors["knowledge-bases"]}
        />
        <McpServersField
          value={form.mcpServers}
          onChange={(mcpServers) => onChange({ mcpServers })}
          servers={catalog.mcpServers}
          inherited={defaults?.mcp_servers}
          error={errors["mcp-servers"]}
        />
        <SkillsField
          value={form.skills}
          onChange={(skills) => onChange({ skills })}
          skills={catalog.skills}
          inherited={defaults?.skills}
          error={errors.skills}
        />
        {shown.subagents && (
          <ListChoiceField
            field="subagents"
            legend={t("agentForm.subagents")}
            spec={LIST_SPECS.subagents}
            labels={{ all: t("listChoice.allSubagents") }}
            value={form.subagents}
            onChange={(next) => onChange({ subagents: next })}
            options={[
              ...subagents.map((a) => ({
                value: a.slug,
                label: `${agentName(a)} (${a.slug})`,
                description: agentDescription(a) || undefined,
              })),
              ...(form.subagents ?? [])
                .filter((slug) => !subagents.some((a) => a.slug === slug))
                .map((slug) => ({ value: slug, label: slug })),
            ]}
            optionTestId={(slug) => `subagent-option-${slug}`}
            emptyHint={subagents.length === 0 ? t("agentForm.subagentsEmpty") : undefined}
            inherited={undefined}
            all={subagents.map((a) => a.slug).sort((a, b) => a.localeCompare(b))}
            error={errors.subagents}
          />
        )}
        <fieldset className="field limits">
          <legend>{t("agentForm.limits")}</legend>
          <Field label={t("agentForm.maxSteps")} field="max-steps" error={errors["max-steps"]}>
            <input
              {...input("max-steps")}
              inputMode="numeric"
              value={form.maxSteps}
              onChange={(e) => onChange({ maxSteps: e.target.value })}
            />
          </Field>
          <Field label={t("agentForm.timeout")} field="timeout" error={errors.timeout}>
            <input
              {...input("timeout")}
              inputMode="numeric"
              value={form.timeout}
              onChange={(e) => onChange({ timeout: e.target.value })}
            />
          </Field>
          <Field label={t("agentForm.maxTokens")} field="max-tokens" error={errors["max-tokens"]}>
            <input
              {...input("max-tokens")}
              inputMode="numeric"
              value={form.maxTokens}
              onChange={(e) => onChange({ maxTokens: e.target.value })}
            />
          </Field>
        </fieldset>
      </section>
    </>
  );
}

type InputProps = (field: FormField) => ReturnType<typeof controlProps>;

function ModelField({
  form,
  onChange,
  errors,
  models,
  input,
}: {
  form: AgentFormState;
  onChange: (patch: Partial<AgentFormState>) => void;
  errors: FieldErrors;
  models: ModelCatalog;
  input: InputProps;
}) {
  const { t } = useTranslation();
  const options = models.providers.flatMap((p) => p.models.map((m) => modelValue(p.name, m)));
  // A stored model the catalog does not advertise (providers may accept others) stays selectable.
  if (form.model && !options.includes(form.model)) options.unshift(form.model);
  const fallback = models.default_model
    ? t("agentForm.modelServerDefault", {
        model: modelValue(models.default_model.provider, models.default_model.name),
      })
    : t("agentForm.modelServerDefaultNone");
  return (
    <>
      <Field
        label={t("agentForm.model")}
        field="model"
        error={errors.model}
        hint={
          !form.model && !models.default_model ? (
            <span className="warning" role="note" data-testid="no-model-warning">
              {t("agentForm.noModelWarning")}
            </span>
          ) : undefined
        }
      >
        <select {...input("model")} value={form.model} onChange={(e) => onChange({ model: e.target.value })}>
          <option value="">{fallback}</option>
          {options.map((value) => (
            <option key={value} value={value}>
              {value}
            </option>
          ))}
        </select>
      </Field>
      {showsScript(models, form.model) && (
        <Field
          label={t("agentForm.script")}
          field="script"
          error={errors.script}
          hint={t("agentForm.scriptHint", { example: '[{"text": "Hello {{input}}"}]' })}
        >
          <textarea
            {...input("script")}
            className="code"
            rows={8}
            spellCheck={false}
            value={form.script}
            onChange={(e) => onChange({ script: e.target.value })}
          />
          <ScriptHelp onUseExample={(script) => onChange({ script })} />
        </Field>
      )}
    </>
  );
}
