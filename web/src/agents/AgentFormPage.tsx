import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { useNavigate, useParams } from "react-router-dom";
import { api, unwrap } from "../api";
import { listAllAgents } from "../api/agents";
import { listKnowledgeBases } from "../api/knowledge";
import { listMcpServers } from "../api/mcp";
import { listSkills } from "../api/skills";
import type { Agent, ResolvedContext } from "../api/types";
import { useUser } from "../auth/AuthContext";
import { LoadedPage } from "../components/LoadState";
import { ResourceForm } from "../components/ResourceForm";
import { agentName } from "../lib/builtinText";
import { useAsync } from "../lib/useAsync";
import { useFormSave } from "../lib/useFormSave";
import { AgentFields, type AgentCatalog } from "./AgentFields";
import {
  buildWrite,
  clearEdited,
  emptyForm,
  errorsFromFailure,
  formFromAgent,
  type AgentFormState,
  type FieldErrors,
} from "./formModel";
import { inheritedDefaults, type InheritedDefaults } from "./listChoice";

async function loadCatalog(): Promise<AgentCatalog> {
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

function resolvedContext(id: string): Promise<ResolvedContext | null> {
  return unwrap(api.GET("/api/agent/{id}/resolved-context", { params: { path: { id } } })).catch(() => null);
}

/**
 * What the list fields inherit, read from resolved contexts (the server has no endpoint for its
 * defaults): the built-in general-purpose subagent's, whose own context is empty, and the edited
 * agent's.
 */
async function loadInherited(original: Agent | null): Promise<InheritedDefaults> {
  const [general, own] = await Promise.all([
    resolvedContext("general-purpose"),
    original ? resolvedContext(original.id) : Promise.resolve(null),
  ]);
  return inheritedDefaults([
    general && { context: general, subagent: true },
    own && original && { context: own, subagent: original.is_subagent },
  ]);
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
  // The catalog is read once; the agent again for every address.
  const both = {
    data: catalog.data && agent.data !== undefined ? { catalog: catalog.data, agent: agent.data } : undefined,
    error: catalog.error ?? agent.error,
  };
  return (
    <LoadedPage
      state={both}
      back={{ to: "/agents", label: t("agentForm.backToAgents") }}
      errorTestId="form-error"
    >
      {(loaded) => <AgentForm key={id ?? "new"} original={loaded.agent} catalog={loaded.catalog} />}
    </LoadedPage>
  );
}

function AgentForm({ original, catalog }: { original: Agent | null; catalog: AgentCatalog }) {
  const navigate = useNavigate();
  const { t } = useTranslation();
  const user = useUser();
  const [form, setForm] = useState<AgentFormState>(() => (original ? formFromAgent(original) : emptyForm()));
  const inherited = useAsync(() => loadInherited(original), original?.id ?? "new");
  const save = useFormSave<FieldErrors>({ formErrorTestId: "form-error", controlOfFieldError: true });

  async function submit(event: FormEvent) {
    event.preventDefault();
    const built = buildWrite(form, original, catalog.models);
    if (!built.ok) {
      save.fail(built.errors, t("agentForm.invalid"));
      return;
    }
    await save.run(async () => {
      if (original) {
        await unwrap(
          api.PUT("/api/agent/{id}", { params: { path: { id: original.id } }, body: built.write }),
        );
      } else {
        await unwrap(api.POST("/api/agent", { body: built.write }));
      }
      navigate("/agents");
    }, errorsFromFailure);
  }

  // Only an admin may change a built-in agent; others see it as it is.
  const readOnly = Boolean(original?.is_builtin) && user.role !== "admin";
  return (
    <ResourceForm
      title={original ? t("agentForm.editTitle", { name: agentName(original) }) : t("agentForm.newTitle")}
      readOnly={readOnly ? t("agentForm.builtinReadOnly") : null}
      save={save}
      onSubmit={submit}
      onCancel={() => navigate("/agents")}
      testIds={{
        readOnly: "builtin-read-only",
        formError: "form-error",
        save: "agent-save",
        cancel: "agent-cancel",
      }}
    >
      <AgentFields
        form={form}
        onChange={(patch) => {
          setForm((current) => ({ ...current, ...patch }));
          save.setErrors((current) => clearEdited(current, patch));
        }}
        errors={save.errors}
        catalog={catalog}
        original={original}
        isAdmin={user.role === "admin"}
        inherited={inherited.data}
      />
    </ResourceForm>
  );
}
