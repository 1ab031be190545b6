import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { useNavigate, useParams } from "react-router-dom";
import { createMcpServer, getMcpServer, updateMcpServer, type McpServerView } from "../api/mcp";
import { useUser } from "../auth/AuthContext";
import { LoadedPage } from "../components/LoadState";
import { ResourceForm } from "../components/ResourceForm";
import { useAsync } from "../lib/useAsync";
import { useFormSave } from "../lib/useFormSave";
import { McpServerFields } from "./McpServerFields";
import {
  buildMcpWrite,
  clearEdited,
  emptyMcpForm,
  errorsFromFailure,
  formFromServer,
  mcpServerUrl,
  type McpFieldErrors,
  type McpFormState,
} from "./serverModel";

/** `/mcp-servers/new` and `/mcp-servers/<id>/edit`: add or change an MCP server. */
export function McpServerFormPage() {
  const { id } = useParams();
  const { t } = useTranslation();
  const server = useAsync(() => (id ? getMcpServer(id) : Promise.resolve(null)), id ?? "new");
  return (
    <LoadedPage
      state={server}
      back={{ to: "/mcp-servers", label: t("mcp.backToList") }}
      errorTestId="mcp-error"
    >
      {(original) => <McpServerForm key={id ?? "new"} original={original} />}
    </LoadedPage>
  );
}

function McpServerForm({ original }: { original: McpServerView | null }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const user = useUser();
  const [form, setForm] = useState<McpFormState>(() =>
    original ? formFromServer(original) : emptyMcpForm(),
  );
  const save = useFormSave<McpFieldErrors>({ formErrorTestId: "mcp-form-error" });

  function change(patch: Partial<McpFormState>) {
    save.setErrors((current) => clearEdited(current, patch, form));
    setForm((current) => ({ ...current, ...patch }));
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    const built = buildMcpWrite(form, original);
    if (!built.ok) {
      save.fail(built.errors, t("mcp.form.invalid"));
      return;
    }
    await save.run(
      async () => {
        const saved = original
          ? await updateMcpServer(original.id, built.write)
          : await createMcpServer(built.write);
        navigate(mcpServerUrl(saved));
      },
      (failure) => errorsFromFailure(failure, form),
    );
  }

  const readOnly = original !== null && !original.can_manage;
  return (
    <ResourceForm
      title={original ? t("mcp.form.editTitle", { name: original.name }) : t("mcp.form.newTitle")}
      readOnly={
        !readOnly
          ? null
          : original.transport.type === "stdio"
            ? t("mcp.detail.stdioAdminOnly")
            : t("mcp.detail.readOnly")
      }
      save={save}
      onSubmit={submit}
      onCancel={() => navigate(original ? mcpServerUrl(original) : "/mcp-servers")}
      testIds={{
        readOnly: "mcp-read-only",
        formError: "mcp-form-error",
        save: "mcp-save",
        cancel: "mcp-cancel",
      }}
    >
      <McpServerFields
        form={form}
        onChange={change}
        errors={save.errors}
        original={original}
        isAdmin={user.role === "admin"}
      />
    </ResourceForm>
  );
}
