import { useEffect, useRef, useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { Link, useNavigate, useParams } from "react-router-dom";
import { api, errorMessage, unwrap } from "../api";
import { listAllAgents } from "../api/agents";
import { listKnowledgeBases, type KnowledgeBaseView } from "../api/knowledge";
import { listMcpServers } from "../api/mcp";
import { listSkills, type SkillView } from "../api/skills";
import type { Agent, McpServerView, ModelCatalog, ToolDescription } from "../api/types";
import { useUser } from "../auth/AuthContext";
import { useAsync } from "../lib/useAsync";
import { AgentFields } from "./AgentFields";
import {
  buildWrite,
  clearEdited,
  emptyForm,
  errorsFromFailure,
  formFromAgent,
  type AgentFormState,
  type FieldErrors,
} from "./formModel";

interface Catalog {
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

async function loadCatalog(): Promise<Catalog> {
  const [models, tools, agents, skills, mcpServers, knowledgeBases] = await Promise.all([
    unwrap(api.GET("/api/models")),
    unwrap(api.GET("/api/tools")),
    listAllAgents(),
    listSkills().catch(() => null),
    listMcpServers().catch(() => null),
    listKnowledgeBases().catch(() => null),
  ]);
  return { models, tools, agents, skills, mcpServers, knowledgeBases };
}

/** `/agents/new` and `/agents/<id>`: create or edit an agent. */
export function AgentFormPage() {
  const { id } = useParams();
  const { t } = useTranslation();
  const catalog = useAsync(loadCatalog, "catalog");
  const agent = useAsync(
    () => (id ? unwrap(api.GET("/api/agent/{id}", { params: { path: { id } } })) : Promise.resolve(null)),
    id ?? "new",
  );

  const failure = catalog.error ?? agent.error;
  if (failure) {
    return (
      <main className="page">
        <p className="error" role="alert" data-testid="form-error">
          {errorMessage(failure)}
        </p>
        <Link to="/agents">{t("agentForm.backToAgents")}</Link>
      </main>
    );
  }
  if (!catalog.data || agent.data === undefined) {
    return (
      <main className="page">
        <p className="loading">{t("common.loading")}</p>
      </main>
    );
  }
  return <AgentForm key={id ?? "new"} original={agent.data} catalog={catalog.data} />;
}

function AgentForm({ original, catalog }: { original: Agent | null; catalog: Catalog }) {
  const navigate = useNavigate();
  const { t } = useTranslation();
  const user = useUser();
  const [form, setForm] = useState<AgentFormState>(() => (original ? formFromAgent(original) : emptyForm()));
  const [errors, setErrors] = useState<FieldErrors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  // Counts failed saves: after each, the first marked field gets the focus, scrolled into view.
  const [failedSaves, setFailedSaves] = useState(0);
  const formRef = useRef<HTMLFormElement>(null);

  useEffect(() => {
    if (failedSaves === 0) return;
    const form = formRef.current;
    const marked =
      form?.querySelector<HTMLElement>('[aria-invalid="true"]') ??
      form
        ?.querySelector<HTMLElement>(".field-error")
        ?.closest(".field")
        ?.querySelector<HTMLElement>("input, select, textarea") ??
      form?.querySelector<HTMLElement>('[data-testid="form-error"]');
    if (!marked) return;
    marked.scrollIntoView?.({ block: "center" });
    marked.focus({ preventScroll: true });
  }, [failedSaves]);

  async function submit(event: FormEvent) {
    event.preventDefault();
    const built = buildWrite(form, original, catalog.models);
    if (!built.ok) {
      setErrors(built.errors);
      setFormError(t("agentForm.invalid"));
      setFailedSaves((n) => n + 1);
      return;
    }
    setSaving(true);
    setErrors({});
    setFormError(null);
    try {
      if (original) {
        await unwrap(
          api.PUT("/api/agent/{id}", { params: { path: { id: original.id } }, body: built.write }),
        );
      } else {
        await unwrap(api.POST("/api/agent", { body: built.write }));
      }
      navigate("/agents");
    } catch (failure) {
      const shown = errorsFromFailure(failure);
      setErrors(shown.fields);
      setFormError(shown.form);
      setFailedSaves((n) => n + 1);
    } finally {
      setSaving(false);
    }
  }

  // Only an admin may change a built-in agent; others see it as it is.
  const readOnly = Boolean(original?.is_builtin) && user.role !== "admin";
  const title = original ? t("agentForm.editTitle", { name: original.name }) : t("agentForm.newTitle");
  return (
    <main className="page">
      <h1>{title}</h1>
      {readOnly && (
        <p className="notice-box" role="note" data-testid="builtin-read-only">
          {t("agentForm.builtinReadOnly")}
        </p>
      )}
      <form className="agent-form" ref={formRef} onSubmit={submit} noValidate aria-label={title}>
        <fieldset className="plain" disabled={readOnly}>
          <AgentFields
            form={form}
            onChange={(patch) => {
              setForm((current) => ({ ...current, ...patch }));
              setErrors((current) => clearEdited(current, patch));
            }}
            errors={errors}
            catalog={catalog}
            original={original}
            isAdmin={user.role === "admin"}
          />
        </fieldset>
        {formError && (
          <p className="error" role="alert" data-testid="form-error">
            {formError}
          </p>
        )}
        <div className="form-actions">
          <button type="submit" className="primary" data-testid="agent-save" disabled={saving || readOnly}>
            {saving ? t("common.saving") : t("common.save")}
          </button>
          <button type="button" data-testid="agent-cancel" onClick={() => navigate("/agents")}>
            {t("common.cancel")}
          </button>
        </div>
      </form>
    </main>
  );
}
