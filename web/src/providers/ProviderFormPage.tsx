import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { useLocation, useNavigate, useParams, useSearchParams } from "react-router-dom";
import { api, errorMessage, unwrap } from "../api";
import { listChatAgents } from "../api/agents";
import {
  createProvider,
  getModelSettings,
  getProvider,
  listModelsUnsaved,
  patchProvider,
  refreshModels,
  setDefaultModel,
  testProvider,
  testUnsaved,
  updateProvider,
  type ProbeError,
  type ProviderView,
  type ProviderWrite,
  type TestResult,
} from "../api/providers";
import { FieldError } from "../components/FieldError";
import { Icon } from "../components/Icon";
import { LoadedPage } from "../components/LoadState";
import { useAsync } from "../lib/useAsync";
import { parseModels, PRESETS, suggestName } from "./presets";
import { checkPrices, priceBoxes, pricesWrite, type PriceBoxes, type PriceProblem } from "./prices";
import { fillModels, probeRequest, probeSentence, testFailure } from "./probe";

async function load(id: string | undefined) {
  const [provider, settings] = await Promise.all([
    id ? getProvider(id) : Promise.resolve(null),
    getModelSettings(),
  ]);
  return { provider, hasDefault: settings.default_model != null };
}

/** A connection test's answer with the base URL it asked (which an unreachable provider is told by). */
interface Tested {
  result: TestResult;
  url: string;
}

/**
 * What a first-run save hands the form of the provider it saved when the provider did not pass
 * its test (or a later step failed): why, shown as soon as the form is there.
 */
interface SetupFailure {
  test?: Tested;
  error?: string;
}

function setupFailureOf(state: unknown): SetupFailure | null {
  if (typeof state !== "object" || state === null) return null;
  const { test, error } = state as SetupFailure;
  return test || error ? { test, error } : null;
}

/** `/providers/new` (`?setup=1` from the chat's first-run card) and `/providers/<id>`. */
export function ProviderFormPage() {
  const { id } = useParams();
  const location = useLocation();
  const { t } = useTranslation();
  // Each visit loads afresh, a new one to the same address included (a first-run save that
  // failed its test comes back to its provider's form that way).
  const visit = `${id ?? "new"}:${location.key}`;
  const loaded = useAsync(() => load(id), visit);
  // The form takes its fields from the data it mounts with: never the last address's data
  // while this one loads (it would leave an "Edit …" form with empty fields).
  const state = loaded.loading ? { data: undefined, error: loaded.error } : loaded;
  return (
    <LoadedPage state={state} back={{ to: "/providers", label: t("providers.back") }}>
      {(data) => (
        <ProviderForm
          key={visit}
          original={data.provider}
          hasDefault={data.hasDefault}
          setupFailure={setupFailureOf(location.state)}
        />
      )}
    </LoadedPage>
  );
}

interface HeaderRow {
  name: string;
  value: string;
}

interface ProviderFormProps {
  original: ProviderView | null;
  hasDefault: boolean;
  setupFailure: SetupFailure | null;
}

function ProviderForm({ original, hasDefault, setupFailure }: ProviderFormProps) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const setup = useSearchParams()[0].get("setup") === "1";
  const [preset, setPreset] = useState("");
  const [name, setName] = useState(original?.name ?? "");
  const [baseUrl, setBaseUrl] = useState(original?.base_url ?? "");
  const [apiKey, setApiKey] = useState("");
  const [removeKey, setRemoveKey] = useState(false);
  const [headers, setHeaders] = useState<HeaderRow[]>([]);
  const [removedHeaders, setRemovedHeaders] = useState<string[]>([]);
  const [models, setModels] = useState((original?.models ?? []).join("\n"));
  const [prices, setPrices] = useState<PriceBoxes>(() => priceBoxes(original));
  // The prices' problems show once a save was tried, and from then on as they are corrected.
  const [checkingPrices, setCheckingPrices] = useState(false);
  const [makeDefault, setMakeDefault] = useState(setup || !hasDefault);
  const [defaultChoice, setDefaultChoice] = useState("");
  const [testing, setTesting] = useState(false);
  const [fetching, setFetching] = useState(false);
  const [test, setTest] = useState<Tested | null>(setupFailure?.test ?? null);
  const [fetchFailure, setFetchFailure] = useState<{ error: ProbeError; url: string } | null>(null);
  const [saving, setSaving] = useState(false);
  const [error, setError] = useState<string | null>(setupFailure?.error ?? null);
  // Back on a provider saved by "Save and start chatting" that failed its test: say it is saved.
  const [savedUntested, setSavedUntested] = useState(setupFailure?.test != null);

  const modelList = parseModels(models);
  const chosenModel = defaultChoice && modelList.includes(defaultChoice) ? defaultChoice : modelList[0];

  function applyPreset(presetId: string) {
    setPreset(presetId);
    const chosen = PRESETS.find((p) => p.id === presetId);
    if (!chosen) return;
    setBaseUrl(chosen.baseUrl);
    if (!original && (!name || PRESETS.some((p) => p.name === name))) setName(chosen.name);
    if (!models.trim() && chosen.models.length) setModels(chosen.models.join("\n"));
  }

  function extraHeaders(): Record<string, string | null> | undefined {
    const out: Record<string, string | null> = {};
    for (const row of headers) if (row.name.trim()) out[row.name.trim()] = row.value;
    for (const removed of removedHeaders) out[removed] = null;
    return Object.keys(out).length ? out : undefined;
  }

  function body(): ProviderWrite {
    const write: ProviderWrite = { name: name.trim(), base_url: baseUrl.trim(), models: modelList };
    if (apiKey.trim()) write.api_key = apiKey.trim();
    else if (removeKey) write.api_key = null;
    const extra = extraHeaders();
    if (extra) write.extra_headers = extra;
    return { ...write, ...pricesWrite(prices, original) };
  }

  const priceCheck = checkPrices(prices);
  const priceMessage = (problem: PriceProblem | undefined) =>
    checkingPrices && problem
      ? problem === "both"
        ? t("providers.pricesBoth")
        : t("providers.priceInvalid")
      : undefined;
  const priceErrors = { input: priceMessage(priceCheck.input), output: priceMessage(priceCheck.output) };

  /** Tests what is on screen; with no model typed, the server tests the first one the provider lists. */
  async function runTest() {
    setTesting(true);
    setTest(null);
    setError(null);
    const url = baseUrl.trim();
    try {
      const write = body();
      const request: Parameters<typeof testUnsaved>[0] = {
        ...probeRequest(write, original?.id),
        models: write.models,
      };
      if (chosenModel) request.model = chosenModel;
      const result = await testUnsaved(request);
      setTest({ result, url });
      setModels((box) => fillModels(box, result.models));
    } catch (failure) {
      setError(errorMessage(failure));
    } finally {
      setTesting(false);
    }
  }

  /** First run: an "Assistant" everyone can chat with, on the default model. */
  async function ensureAssistant() {
    const agents = await listChatAgents();
    if (agents.length > 0) return;
    await unwrap(
      api.POST("/api/agent", {
        body: {
          slug: "assistant",
          name: t("setup.assistantName"),
          description: t("setup.assistantDescription"),
          backend_id: "DefaultBackend",
          config_json: { context: {} },
          share_config: { visibility: "public" },
          is_default: true,
        },
      }),
    );
  }

  async function submit(event: FormEvent) {
    event.preventDefault();
    if (priceCheck.input || priceCheck.output) {
      setCheckingPrices(true);
      document.getElementById(priceCheck.input ? "provider-price-input" : "provider-price-output")?.focus();
      return;
    }
    setSaving(true);
    setError(null);
    setSavedUntested(false);
    let saved: ProviderView | null = null;
    try {
      saved = original ? await updateProvider(original.id, body()) : await createProvider(body());
      if (setup) {
        await startChatting(saved);
        return;
      }
      if (saved.models.length === 0) {
        const refreshed = await refreshModels(saved.id).catch(() => null);
        if (refreshed?.provider) saved = refreshed.provider;
      }
      const model = chosenModel ?? saved.models[0];
      if (makeDefault && model) await setDefaultModel(`${saved.name}/${model}`);
      navigate("/providers");
    } catch (failure) {
      // Once saved, a first run goes on from the saved provider's form, never this unsaved one
      // (saving it again would create it twice).
      if (setup && saved) stayOnSaved(saved, { error: errorMessage(failure) });
      else setError(errorMessage(failure));
    } finally {
      setSaving(false);
    }
  }

  /**
   * "Save and start chatting": the chat opens only once the saved provider answers a test (of
   * the model chosen, or with none typed, of the first one it lists, which then become its
   * models); otherwise the form stays on what was saved, saying why.
   */
  async function startChatting(saved: ProviderView) {
    const url = saved.base_url ?? baseUrl.trim();
    const result = await testProvider(saved.id, chosenModel);
    if (!result.ok) {
      stayOnSaved(saved, { test: { result, url } });
      return;
    }
    if (saved.models.length === 0 && result.models?.length) {
      saved = await patchProvider(saved.id, { models: result.models });
    }
    if (makeDefault) await setDefaultModel(`${saved.name}/${result.model}`);
    await ensureAssistant();
    navigate("/chat");
  }

  /** The saved provider's own form, loaded from the server, told why the chat did not open. */
  function stayOnSaved(saved: ProviderView, failure: SetupFailure) {
    navigate(`/providers/${encodeURIComponent(saved.id)}?setup=1`, { replace: true, state: failure });
  }

  /** Lists the provider's models with what is on screen; nothing is stored until the user saves. */
  async function fetchModels() {
    setError(null);
    setFetchFailure(null);
    setFetching(true);
    const url = baseUrl.trim();
    try {
      const answer = await listModelsUnsaved(probeRequest(body(), original?.id));
      if (answer.ok && answer.models?.length) setModels(answer.models.join("\n"));
      else setFetchFailure({ error: answer.error ?? { kind: "no_models", message: "" }, url });
    } catch (failure) {
      setError(errorMessage(failure));
    } finally {
      setFetching(false);
    }
  }

  const title = original ? t("providers.editTitle", { name: original.name }) : t("providers.newTitle");
  return (
    <main className="page">
      <h1>{title}</h1>
      {setup && <p className="notice-box">{t("setup.formIntro")}</p>}
      <form className="agent-form" onSubmit={submit} aria-label={title}>
        <section className="form-section">
          {!original && (
            <div className="field">
              <label htmlFor="provider-preset">{t("providers.preset")}</label>
              <select
                id="provider-preset"
                data-testid="provider-preset"
                value={preset}
                onChange={(e) => applyPreset(e.target.value)}
              >
                <option value="">{t("providers.presetCustom")}</option>
                {PRESETS.map((p) => (
                  <option key={p.id} value={p.id}>
                    {p.label}
                  </option>
                ))}
              </select>
              <p className="hint">{t("providers.presetHint")}</p>
            </div>
          )}
          <div className="field">
            <label htmlFor="provider-name">{t("providers.name")}</label>
            <input
              id="provider-name"
              data-testid="provider-name"
              required
              value={name}
              onChange={(e) => setName(e.target.value)}
              onBlur={() => setName(suggestName(name))}
            />
            <p className="hint">{t("providers.nameHint")}</p>
          </div>
          <div className="field">
            <label htmlFor="provider-url">{t("providers.baseUrl")}</label>
            <input
              id="provider-url"
              data-testid="provider-url"
              required
              inputMode="url"
              placeholder="https://api.example.com/v1"
              value={baseUrl}
              onChange={(e) => setBaseUrl(e.target.value)}
            />
          </div>
          <div className="field">
            <label htmlFor="provider-key">{t("providers.apiKey")}</label>
            <input
              id="provider-key"
              data-testid="provider-key"
              type="password"
              autoComplete="off"
              placeholder={original?.api_key_set ? t("providers.keyKeep") : ""}
              value={apiKey}
              onChange={(e) => setApiKey(e.target.value)}
            />
            <p className="hint">{original?.api_key_set ? t("providers.keyIsSet") : t("providers.keyHint")}</p>
            {original?.api_key_set && (
              <label className="check">
                <input type="checkbox" checked={removeKey} onChange={(e) => setRemoveKey(e.target.checked)} />
                {t("providers.removeKey")}
              </label>
            )}
          </div>
          <fieldset className="field">
            <legend>{t("providers.headers")}</legend>
            {(original?.extra_header_names ?? []).map((header) => (
              <label className="check" key={header}>
                <input
                  type="checkbox"
                  checked={removedHeaders.includes(header)}
                  onChange={(e) =>
                    setRemovedHeaders((old) =>
                      e.target.checked ? [...old, header] : old.filter((h) => h !== header),
                    )
                  }
                />
                {t("providers.removeHeader", { name: header })}
              </label>
            ))}
            {headers.map((row, i) => (
              <div className="header-row" key={i}>
                <input
                  aria-label={t("providers.headerName")}
                  placeholder={t("providers.headerName")}
                  value={row.name}
                  onChange={(e) =>
                    setHeaders(headers.map((h, j) => (j === i ? { ...h, name: e.target.value } : h)))
                  }
                />
                <input
                  aria-label={t("providers.headerValue")}
                  placeholder={t("providers.headerValue")}
                  type="password"
                  autoComplete="off"
                  value={row.value}
                  onChange={(e) =>
                    setHeaders(headers.map((h, j) => (j === i ? { ...h, value: e.target.value } : h)))
                  }
                />
              </div>
            ))}
            <button
              type="button"
              className="link"
              onClick={() => setHeaders([...headers, { name: "", value: "" }])}
            >
              {t("providers.addHeader")}
            </button>
          </fieldset>
          <div className="field">
            <label htmlFor="provider-models">{t("providers.models")}</label>
            <textarea
              id="provider-models"
              data-testid="provider-models"
              rows={4}
              value={models}
              onChange={(e) => setModels(e.target.value)}
            />
            <p className="hint">{t("providers.modelsHint")}</p>
            <button
              type="button"
              className="field-action"
              data-testid="provider-refresh"
              disabled={fetching || !baseUrl.trim()}
              onClick={() => void fetchModels()}
            >
              <Icon name="refresh" />
              {fetching ? t("providers.refreshing") : t("providers.refresh")}
            </button>
            {fetchFailure && (
              <p
                className="error"
                role="alert"
                data-testid="provider-fetch-error"
                data-kind={fetchFailure.error.kind}
              >
                {probeSentence(t, fetchFailure.error, { url: fetchFailure.url })}
              </p>
            )}
          </div>
          <fieldset className="field">
            <legend>{t("providers.prices")}</legend>
            <div className="price-row">
              {(["input", "output"] as const).map((side) => (
                <div className="field" key={side}>
                  <label htmlFor={`provider-price-${side}`}>
                    {t(side === "input" ? "providers.priceInput" : "providers.priceOutput")}
                  </label>
                  <input
                    id={`provider-price-${side}`}
                    data-testid={`provider-price-${side}`}
                    inputMode="decimal"
                    autoComplete="off"
                    value={prices[side]}
                    aria-invalid={Boolean(priceErrors[side])}
                    aria-describedby={priceErrors[side] ? `error-price-${side}` : "provider-prices-hint"}
                    onChange={(e) => setPrices((old) => ({ ...old, [side]: e.target.value }))}
                  />
                  <FieldError field={`price-${side}`} message={priceErrors[side]} />
                </div>
              ))}
            </div>
            <p className="hint" id="provider-prices-hint">
              {t("providers.pricesHint")}
            </p>
          </fieldset>
          <div className="field">
            <label className="check">
              <input
                type="checkbox"
                data-testid="provider-make-default"
                checked={makeDefault}
                onChange={(e) => setMakeDefault(e.target.checked)}
              />
              {t("providers.makeDefault")}
            </label>
            {makeDefault && modelList.length > 1 && (
              <select
                aria-label={t("providers.defaultModel")}
                data-testid="provider-default-choice"
                value={chosenModel ?? ""}
                onChange={(e) => setDefaultChoice(e.target.value)}
              >
                {modelList.map((m) => (
                  <option key={m} value={m}>
                    {m}
                  </option>
                ))}
              </select>
            )}
          </div>
        </section>
        <div className="test-connection">
          <button
            type="button"
            data-testid="provider-test"
            disabled={testing || !baseUrl.trim()}
            onClick={() => void runTest()}
          >
            {testing ? t("providers.testing") : t("providers.test")}
          </button>
          {test?.result.ok && (
            <p className="success" role="status" data-testid="provider-test-ok">
              {t(test.result.models?.length ? "providers.testOkListed" : "providers.testOk", {
                model: test.result.model,
                ms: test.result.latency_ms ?? 0,
              })}
            </p>
          )}
          {test && !test.result.ok && test.result.error && (
            <p
              className="error"
              role="alert"
              data-testid="provider-test-error"
              data-kind={test.result.error.kind}
            >
              {testFailure(t, test.result, test.url)}
            </p>
          )}
        </div>
        {savedUntested && (
          <p className="notice-box" role="status" data-testid="provider-saved-untested">
            {t("providers.setupTestFailed")}
          </p>
        )}
        {error && (
          <p className="error" role="alert" data-testid="provider-error">
            {error}
          </p>
        )}
        <div className="form-actions">
          <button type="submit" className="primary" data-testid="provider-save" disabled={saving}>
            {saving ? t("common.saving") : setup ? t("setup.saveAndChat") : t("common.save")}
          </button>
          <button type="button" onClick={() => navigate(setup ? "/chat" : "/providers")}>
            {t("common.cancel")}
          </button>
        </div>
      </form>
    </main>
  );
}
