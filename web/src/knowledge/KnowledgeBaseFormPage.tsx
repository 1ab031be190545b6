import { useEffect, useRef, useState, type FormEvent, type ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { Link, useNavigate, useParams } from "react-router-dom";
import { api, errorMessage, unwrap } from "../api";
import {
  createKnowledgeBase,
  getKnowledgeBase,
  updateKnowledgeBase,
  type KnowledgeBaseView,
} from "../api/knowledge";
import { FieldError } from "../components/FieldError";
import { ShareToggle } from "../components/ShareToggle";
import { useAsync } from "../lib/useAsync";
import {
  buildKbWrite,
  CHUNK_SIZE_MAX,
  CHUNK_SIZE_MIN,
  clearKbEdited,
  emptyKbForm,
  formFromKnowledgeBase,
  kbErrorsFromFailure,
  knowledgeBaseUrl,
  suggestSlug,
  type KbFieldErrors,
  type KbFormField,
  type KbFormState,
} from "./kbModel";

/** The model providers' names, offered for the embedding provider (none when not listed). */
async function providerNames(): Promise<string[]> {
  try {
    const catalog = await unwrap(api.GET("/api/models"));
    return catalog.providers.map((p) => p.name);
  } catch {
    return [];
  }
}

/** `/knowledge/new` and `/knowledge/<id>/edit`: create or change a knowledge base. */
export function KnowledgeBaseFormPage() {
  const { id } = useParams();
  const { t } = useTranslation();
  const kb = useAsync(() => (id ? getKnowledgeBase(id) : Promise.resolve(null)), id ?? "new");
  if (kb.error != null) {
    return (
      <main className="page">
        <p className="error" role="alert" data-testid="kb-error">
          {errorMessage(kb.error)}
        </p>
        <Link to="/knowledge">{t("knowledge.backToList")}</Link>
      </main>
    );
  }
  if (kb.data === undefined) {
    return (
      <main className="page">
        <p className="loading">{t("common.loading")}</p>
      </main>
    );
  }
  return <KnowledgeBaseForm key={id ?? "new"} original={kb.data} />;
}

/** A labelled control with its hint and error underneath. */
function Field({
  label,
  field,
  error,
  hint,
  children,
}: {
  label: string;
  field: KbFormField;
  error: string | undefined;
  hint?: ReactNode;
  children: ReactNode;
}) {
  return (
    <div className="field">
      <label htmlFor={`kb-input-${field}`}>{label}</label>
      {children}
      {hint && <p className="hint">{hint}</p>}
      <FieldError field={field} message={error} />
    </div>
  );
}

function KnowledgeBaseForm({ original }: { original: KnowledgeBaseView | null }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const providers = useAsync(providerNames, "providers");
  const [form, setForm] = useState<KbFormState>(() =>
    original ? formFromKnowledgeBase(original) : emptyKbForm(),
  );
  const [errors, setErrors] = useState<KbFieldErrors>({});
  const [formError, setFormError] = useState<string | null>(null);
  const [saving, setSaving] = useState(false);
  // Counts failed saves: after each, the first marked field gets the focus, scrolled into view.
  const [failedSaves, setFailedSaves] = useState(0);
  const formRef = useRef<HTMLFormElement>(null);

  useEffect(() => {
    if (failedSaves === 0) return;
    const marked =
      formRef.current?.querySelector<HTMLElement>('[aria-invalid="true"]') ??
      formRef.current?.querySelector<HTMLElement>('[data-testid="kb-form-error"]');
    marked?.scrollIntoView?.({ block: "center" });
    marked?.focus({ preventScroll: true });
  }, [failedSaves]);

  function change(patch: Partial<KbFormState>) {
    setErrors((current) => clearKbEdited(current, patch));
    setForm((current) => ({ ...current, ...patch }));
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    const built = buildKbWrite(form, original);
    if (!built.ok) {
      setErrors(built.errors);
      setFormError(t("knowledge.form.invalid"));
      setFailedSaves((n) => n + 1);
      return;
    }
    setSaving(true);
    setErrors({});
    setFormError(null);
    try {
      const saved = original
        ? await updateKnowledgeBase(original.id, built.write)
        : await createKnowledgeBase(built.write);
      navigate(knowledgeBaseUrl(saved));
    } catch (failure) {
      const shown = kbErrorsFromFailure(failure);
      setErrors(shown.fields);
      setFormError(shown.form);
      setFailedSaves((n) => n + 1);
    } finally {
      setSaving(false);
    }
  }

  const input = (field: KbFormField) => ({
    id: `kb-input-${field}`,
    "data-testid": `kb-field-${field}`,
    "aria-invalid": Boolean(errors[field]),
    "aria-describedby": errors[field] ? `error-${field}` : undefined,
  });
  const readOnly = original !== null && !original.can_manage;
  const title = original
    ? t("knowledge.form.editTitle", { name: original.name })
    : t("knowledge.form.newTitle");
  return (
    <main className="page">
      <h1>{title}</h1>
      {readOnly && (
        <p className="notice-box" role="note" data-testid="kb-read-only">
          {t("knowledge.detail.readOnly")}
        </p>
      )}
      <form className="agent-form" ref={formRef} onSubmit={submit} noValidate aria-label={title}>
        <fieldset className="plain" disabled={readOnly}>
          <section className="form-section" aria-labelledby="kb-section-display">
            <h2 id="kb-section-display">{t("knowledge.form.sections.display")}</h2>
            <Field label={t("knowledge.form.name")} field="name" error={errors.name}>
              <input
                {...input("name")}
                value={form.name}
                onChange={(e) => {
                  const name = e.target.value;
                  const followsName = !original && form.slug === suggestSlug(form.name);
                  change(followsName ? { name, slug: suggestSlug(name) } : { name });
                }}
              />
            </Field>
            <Field
              label={t("knowledge.form.slug")}
              field="slug"
              error={errors.slug}
              hint={original ? t("knowledge.form.slugFixed") : t("knowledge.form.slugHint")}
            >
              <input
                {...input("slug")}
                value={form.slug}
                readOnly={original !== null}
                onChange={(e) => change({ slug: e.target.value })}
              />
            </Field>
            <Field
              label={t("knowledge.form.description")}
              field="description"
              error={errors.description}
              hint={t("knowledge.form.descriptionHint")}
            >
              <textarea
                {...input("description")}
                rows={2}
                value={form.description}
                onChange={(e) => change({ description: e.target.value })}
              />
            </Field>
          </section>

          <section className="form-section" aria-labelledby="kb-section-chunking">
            <h2 id="kb-section-chunking">{t("knowledge.form.sections.chunking")}</h2>
            <fieldset className="field limits">
              <legend>{t("knowledge.form.chunking")}</legend>
              <Field
                label={t("knowledge.form.chunkSize")}
                field="chunk-size"
                error={errors["chunk-size"]}
                hint={t("knowledge.form.chunkSizeHint", { min: CHUNK_SIZE_MIN, max: CHUNK_SIZE_MAX })}
              >
                <input
                  {...input("chunk-size")}
                  inputMode="numeric"
                  value={form.chunkSize}
                  onChange={(e) => change({ chunkSize: e.target.value })}
                />
              </Field>
              <Field
                label={t("knowledge.form.chunkOverlap")}
                field="chunk-overlap"
                error={errors["chunk-overlap"]}
                hint={t("knowledge.form.chunkOverlapHint")}
              >
                <input
                  {...input("chunk-overlap")}
                  inputMode="numeric"
                  value={form.chunkOverlap}
                  onChange={(e) => change({ chunkOverlap: e.target.value })}
                />
              </Field>
            </fieldset>
            {original && <p className="hint">{t("knowledge.form.settingsChange")}</p>}
            <div className="field">
              <label className="check">
                <input
                  type="checkbox"
                  data-testid="kb-field-embedding"
                  checked={form.embedding}
                  onChange={(e) => change({ embedding: e.target.checked })}
                />
                {t("knowledge.form.embedding")}
              </label>
              <p className="hint">{t("knowledge.form.embeddingHint")}</p>
              <FieldError field="embedding" message={errors.embedding} />
            </div>
            {form.embedding && (
              <>
                <Field
                  label={t("knowledge.form.embeddingProvider")}
                  field="embedding-provider"
                  error={errors["embedding-provider"]}
                  hint={t("knowledge.form.embeddingProviderHint")}
                >
                  <input
                    {...input("embedding-provider")}
                    list="kb-embedding-providers"
                    value={form.embeddingProvider}
                    onChange={(e) => change({ embeddingProvider: e.target.value })}
                  />
                  <datalist id="kb-embedding-providers">
                    {(providers.data ?? []).map((name) => (
                      <option key={name} value={name} />
                    ))}
                  </datalist>
                </Field>
                <Field
                  label={t("knowledge.form.embeddingModel")}
                  field="embedding-model"
                  error={errors["embedding-model"]}
                  hint={t("knowledge.form.embeddingModelHint")}
                >
                  <input
                    {...input("embedding-model")}
                    placeholder="text-embedding-3-small"
                    value={form.embeddingModel}
                    onChange={(e) => change({ embeddingModel: e.target.value })}
                  />
                </Field>
              </>
            )}
          </section>

          <section className="form-section" aria-labelledby="kb-section-sharing">
            <h2 id="kb-section-sharing">{t("knowledge.form.sections.sharing")}</h2>
            <ShareToggle
              testId="kb-field-share"
              field="share"
              checked={form.shared}
              onChange={(shared) => change({ shared })}
              error={errors.share}
            />
          </section>
        </fieldset>
        {formError && (
          <p className="error" role="alert" data-testid="kb-form-error">
            {formError}
          </p>
        )}
        <div className="form-actions">
          <button type="submit" className="primary" data-testid="kb-save" disabled={saving || readOnly}>
            {saving ? t("common.saving") : t("common.save")}
          </button>
          <button
            type="button"
            data-testid="kb-cancel"
            onClick={() => navigate(original ? knowledgeBaseUrl(original) : "/knowledge")}
          >
            {t("common.cancel")}
          </button>
        </div>
      </form>
    </main>
  );
}
