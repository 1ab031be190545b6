import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { useNavigate, useParams } from "react-router-dom";
import { api, unwrap } from "../api";
import {
  createKnowledgeBase,
  getKnowledgeBase,
  updateKnowledgeBase,
  type KnowledgeBaseView,
} from "../api/knowledge";
import { CheckField, controlProps, Field } from "../components/Field";
import { LoadedPage } from "../components/LoadState";
import { NameFields } from "../components/NameFields";
import { ResourceForm } from "../components/ResourceForm";
import { ShareToggle } from "../components/ShareToggle";
import { useAsync } from "../lib/useAsync";
import { useFormSave } from "../lib/useFormSave";
import {
  buildKbWrite,
  CHUNK_SIZE_MAX,
  CHUNK_SIZE_MIN,
  clearKbEdited,
  emptyKbForm,
  formFromKnowledgeBase,
  kbErrorsFromFailure,
  knowledgeBaseUrl,
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
  return (
    <LoadedPage
      state={kb}
      back={{ to: "/knowledge", label: t("knowledge.backToList") }}
      errorTestId="kb-error"
    >
      {(original) => <KnowledgeBaseForm key={id ?? "new"} original={original} />}
    </LoadedPage>
  );
}

const PREFIX = "kb-";

function KnowledgeBaseForm({ original }: { original: KnowledgeBaseView | null }) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const providers = useAsync(providerNames, "providers");
  const [form, setForm] = useState<KbFormState>(() =>
    original ? formFromKnowledgeBase(original) : emptyKbForm(),
  );
  const save = useFormSave<KbFieldErrors>({ formErrorTestId: "kb-form-error" });
  const errors = save.errors;

  function change(patch: Partial<KbFormState>) {
    save.setErrors((current) => clearKbEdited(current, patch));
    setForm((current) => ({ ...current, ...patch }));
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    const built = buildKbWrite(form, original);
    if (!built.ok) {
      save.fail(built.errors, t("knowledge.form.invalid"));
      return;
    }
    await save.run(async () => {
      const saved = original
        ? await updateKnowledgeBase(original.id, built.write)
        : await createKnowledgeBase(built.write);
      navigate(knowledgeBaseUrl(saved));
    }, kbErrorsFromFailure);
  }

  const input = (field: KbFormField) => controlProps(PREFIX, field, errors[field]);
  const readOnly = original !== null && !original.can_manage;
  return (
    <ResourceForm
      title={original ? t("knowledge.form.editTitle", { name: original.name }) : t("knowledge.form.newTitle")}
      readOnly={readOnly ? t("knowledge.detail.readOnly") : null}
      save={save}
      onSubmit={submit}
      onCancel={() => navigate(original ? knowledgeBaseUrl(original) : "/knowledge")}
      testIds={{ readOnly: "kb-read-only", formError: "kb-form-error", save: "kb-save", cancel: "kb-cancel" }}
    >
      <NameFields
        prefix={PREFIX}
        texts="knowledge.form"
        form={form}
        errors={errors}
        onChange={change}
        slugFixed={original !== null}
        slugHint={original ? t("knowledge.form.slugFixed") : t("knowledge.form.slugHint")}
        descriptionHint={t("knowledge.form.descriptionHint")}
        slugFollowsName={!original}
        slugKind="kb"
      />

      <section className="form-section" aria-labelledby="kb-section-chunking">
        <h2 id="kb-section-chunking">{t("knowledge.form.sections.chunking")}</h2>
        <fieldset className="field limits">
          <legend>{t("knowledge.form.chunking")}</legend>
          <Field
            prefix={PREFIX}
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
            prefix={PREFIX}
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
        <CheckField
          label={t("knowledge.form.embedding")}
          testId="kb-field-embedding"
          field="embedding"
          checked={form.embedding}
          onChange={(embedding) => change({ embedding })}
          hint={t("knowledge.form.embeddingHint")}
          error={errors.embedding}
        />
        {form.embedding && (
          <>
            <Field
              prefix={PREFIX}
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
              prefix={PREFIX}
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
    </ResourceForm>
  );
}
