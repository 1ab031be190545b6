import { useState } from "react";
import { useTranslation } from "react-i18next";
import { Link } from "react-router-dom";
import { errorMessage } from "../api";
import {
  deleteProvider,
  getModelSettings,
  listProviders,
  setDefaultModel,
  type ModelSettings,
  type ProviderView,
} from "../api/providers";
import { ConfirmDeleteDialog } from "../components/ConfirmDeleteDialog";
import { ListTable } from "../components/ListTable";
import { ErrorNote, Loading } from "../components/LoadState";
import { useAsync } from "../lib/useAsync";

async function load() {
  const [providers, settings] = await Promise.all([listProviders(), getModelSettings()]);
  return { providers, settings };
}

/** `/providers` (admins): the model providers agents run on, and the server default model. */
export function ProvidersPage() {
  const { t } = useTranslation();
  const loaded = useAsync(load, "providers");
  const [deleting, setDeleting] = useState<ProviderView | null>(null);

  return (
    <main className="page">
      <div className="page-head">
        <h1>{t("providers.title")}</h1>
        <Link className="button primary" to="/providers/new" data-testid="provider-new">
          {t("providers.new")}
        </Link>
      </div>
      <p className="hint">{t("providers.intro")}</p>
      <ErrorNote error={loaded.error} />
      {loaded.data && (
        <DefaultModel
          providers={loaded.data.providers}
          settings={loaded.data.settings}
          onSaved={(settings) => loaded.setData({ ...loaded.data!, settings })}
        />
      )}
      {!loaded.data && loaded.loading && <Loading />}
      {loaded.data && (
        <ListTable testId="provider-list">
          <thead>
            <tr>
              <th scope="col">{t("providers.name")}</th>
              <th scope="col" className="wide-only">
                {t("providers.baseUrl")}
              </th>
              <th scope="col">{t("providers.models")}</th>
              <th scope="col" className="wide-only">
                {t("providers.key")}
              </th>
              <th scope="col">
                <span className="visually-hidden">{t("agents.columns.actions")}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {loaded.data.providers.map((provider) => (
              <tr key={provider.id} data-testid={`provider-row-${provider.name}`}>
                <td>
                  <strong>{provider.name}</strong>{" "}
                  {provider.source !== "database" && (
                    <span className="badge muted" data-testid="provider-source">
                      {t(`providers.source.${provider.source}`)}
                    </span>
                  )}
                  {provider.problem && (
                    <p className="warning small" role="note">
                      {provider.problem}
                    </p>
                  )}
                </td>
                <td className="wide-only">
                  <code>{provider.base_url ?? "—"}</code>
                </td>
                <td>
                  {provider.models.length === 0
                    ? t("providers.noModels")
                    : provider.models.slice(0, 3).join(", ") +
                      (provider.models.length > 3 ? ` +${provider.models.length - 3}` : "")}
                </td>
                <td className="wide-only">
                  {provider.api_key_set ? t("providers.keySet") : t("providers.keyNone")}
                </td>
                <td>
                  <div className="row-actions">
                    {!provider.read_only && (
                      <>
                        <Link
                          className="button"
                          to={`/providers/${encodeURIComponent(provider.id)}`}
                          data-testid={`provider-edit-${provider.name}`}
                        >
                          {t("common.edit")}
                        </Link>
                        <button
                          type="button"
                          className="danger"
                          data-testid={`provider-delete-${provider.name}`}
                          onClick={() => setDeleting(provider)}
                        >
                          {t("common.delete")}
                        </button>
                      </>
                    )}
                  </div>
                </td>
              </tr>
            ))}
          </tbody>
        </ListTable>
      )}
      {deleting && (
        <ConfirmDeleteDialog
          title={t("providers.deleteTitle", { name: deleting.name })}
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await deleteProvider(deleting.id);
            setDeleting(null);
            loaded.reload();
          }}
        >
          <p>
            {deleting.agents_using > 0
              ? t("providers.deleteUsed", { count: deleting.agents_using })
              : t("providers.deleteBody")}
          </p>
        </ConfirmDeleteDialog>
      )}
    </main>
  );
}

function DefaultModel({
  providers,
  settings,
  onSaved,
}: {
  providers: ProviderView[];
  settings: ModelSettings;
  onSaved: (settings: ModelSettings) => void;
}) {
  const { t } = useTranslation();
  const [error, setError] = useState<string | null>(null);
  const options = providers.flatMap((p) => p.models.map((m) => `${p.name}/${m}`));
  const current = settings.source === "database" ? (settings.default_model ?? "") : "";
  if (current && !options.includes(current)) options.unshift(current);
  async function change(value: string) {
    setError(null);
    try {
      onSaved(await setDefaultModel(value || null));
    } catch (failure) {
      setError(errorMessage(failure));
    }
  }
  return (
    <section className="form-section" aria-labelledby="default-model-title">
      <h2 id="default-model-title">{t("providers.defaultModel")}</h2>
      <p className="hint">{t("providers.defaultModelHint")}</p>
      <select
        data-testid="default-model"
        aria-labelledby="default-model-title"
        value={current}
        onChange={(e) => void change(e.target.value)}
      >
        <option value="">
          {settings.config_default_model
            ? t("providers.defaultFromConfig", { model: settings.config_default_model })
            : t("providers.defaultNone")}
        </option>
        {options.map((value) => (
          <option key={value} value={value}>
            {value}
          </option>
        ))}
      </select>
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
