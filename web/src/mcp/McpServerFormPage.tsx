import { useEffect, useRef, useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { Link, useNavigate, useParams } from "react-router-dom";
import { errorMessage } from "../api";
import { createMcpServer, getMcpServer, updateMcpServer, type McpServerView } from "../api/mcp";
import { useUser } from "../auth/AuthContext";
import { useAsync } from "../lib/useAsync";
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
  if (server.error != null) {
    return (
      <main className="page">
        <p className="error" role="alert" data-testid="mcp-error">
          {errorMessage(server.error)}
        </p>
        <Link to="/mcp-servers">{t("mcp.backToList")}</Link>
      </main>
    );
  }
  if (server.data === undefined) {
    return (
      <main className="page">
        <p className="loading">{t("common.loading")}</p>
      </main>
    );
  }
  return <McpServerForm key={id ?? "new"} original={server.data} />;
}

function McpServerForm({ original }: { original: McpServerView | null }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const user = useUser();
  const [form, setForm] = useState<McpFormState>(() =>
    original ? formFromServer(original) : emptyMcpForm(),
  );
  const [errors, setErrors] = useState<McpFieldErrors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  // Counts failed saves: after each, the first marked field gets the focus, scrolled into view.
  const [failedSaves, setFailedSaves] = useState(0);
  const formRef = useRef<HTMLFormElement>(null);

  useEffect(() => {
    if (failedSaves === 0) return;
    const marked =
      formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]') ??
      formRef.current?.querySelector<HTMLElement>('[data-testid="mcp-form-error"]');
    marked?.scrollIntoView?.({ block: "center" });
    marked?.focus({ preventScroll: true });
  }, [failedSaves]);

  function change(patch: Partial<McpFormState>) {
    setErrors((current) => clearEdited(current, patch, form));
    setForm((current) => ({ ...current, ...patch }));
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    const built = buildMcpWrite(form, original);
    if (!built.ok) {
      setErrors(built.errors);
      setFormError(t("mcp.form.invalid"));
      setFailedSaves((n) => n + 1);
      return;
    }
    setSaving(true);
    setErrors({});
    setFormError(null);
    try {
      const saved = original
        ? await updateMcpServer(original.id, built.write)
        : await createMcpServer(built.write);
      navigate(mcpServerUrl(saved));
    } catch (failure) {
      const shown = errorsFromFailure(failure, form);
      setErrors(shown.fields);
      setFormError(shown.form);
      setFailedSaves((n) => n + 1);
    } finally {
      setSaving(false);
    }
  }

  const readOnly = original !== null && !original.can_manage;
  const title = original ? t("mcp.form.editTitle", { name: original.name }) : t("mcp.form.newTitle");
  return (
    <main className="page">
      <h1>{title}</h1>
      {readOnly && (
        <p className="notice-box" role="note" data-testid="mcp-read-only">
          {original.transport.type === "stdio" ? t("mcp.detail.stdioAdminOnly") : t("mcp.detail.readOnly")}
        </p>
      )}
      <form className="agent-form" ref={formRef} onSubmit={submit} noValidate aria-label={title}>
        <fieldset className="plain" disabled={readOnly}>
          <McpServerFields
            form={form}
            onChange={change}
            errors={errors}
            original={original}
            isAdmin={user.role === "admin"}
          />
        </fieldset>
        {formError && (
          <p className="error" role="alert" data-testid="mcp-form-error">
            {formError}
          </p>
        )}
        <div className="form-actions">
          <button type="submit" className="primary" data-testid="mcp-save" disabled={saving || readOnly}>
            {saving ? t("common.saving") : t("common.save")}
          </button>
          <button
            type="button"
            data-testid="mcp-cancel"
            onClick={() => navigate(original ? mcpServerUrl(original) : "/mcp-servers")}
          >
            {t("common.cancel")}
          </button>
        </div>
      </form>
    </main>
  );
}
