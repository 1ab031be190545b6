import { useState, type FormEvent } from "react";
import { useTranslation } from "react-i18next";
import { errorMessage } from "../api";
import { searchKnowledgeBase, type KbSearchView } from "../api/knowledge";
import { CopyButton } from "../components/CopyButton";
import { formatNumber } from "../lib/format";
import { snippetSegments } from "./snippet";

/** How many passages a search may answer, as the select offers them. */
const TOP_K = [5, 10, 20] as const;

/** A hit's snippet: its text as text, the matched words marked (never parsed as HTML). */
export function Snippet({ snippet }: { snippet: string }) {
  return (
    <p className="snippet" data-testid="kb-hit-snippet">
      {snippetSegments(snippet).map((segment, i) =>
        segment.hit ? <mark key={i}>{segment.text}</mark> : <span key={i}>{segment.text}</span>,
      )}
    </p>
  );
}

/** Try a query on a knowledge base: its ranked passages, as agents get them. */
export function KbSearchPanel({ kbId }: { kbId: string }) {
  const { t } = useTranslation();
  const [query, setQuery] = useState("");
  const [topK, setTopK] = useState<number>(TOP_K[0]);
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const [result, setResult] = useState<{ query: string; view: KbSearchView } | null>(null);

  async function search(event: FormEvent) {
    event.preventDefault();
    const asked = query.trim();
    if (!asked) return;
    setBusy(true);
    setError(null);
    try {
      setResult({ query: asked, view: await searchKnowledgeBase(kbId, asked, topK) });
    } catch (failure) {
      setError(errorMessage(failure));
    } finally {
      setBusy(false);
    }
  }

  return (
    <section className="kb-search" aria-labelledby="kb-search-title">
      <h2 id="kb-search-title">{t("knowledge.search.title")}</h2>
      <p className="hint">{t("knowledge.search.hint")}</p>
      <form className="inline-form" onSubmit={search} role="search">
        <input
          type="search"
          aria-label={t("knowledge.search.label")}
          placeholder={t("knowledge.search.placeholder")}
          data-testid="kb-search-input"
          value={query}
          onChange={(e) => setQuery(e.target.value)}
        />
        <label>
          {t("knowledge.search.topK")}{" "}
          <select
            data-testid="kb-search-top-k"
            value={topK}
            onChange={(e) => setTopK(Number(e.target.value))}
          >
            {TOP_K.map((k) => (
              <option key={k} value={k}>
                {k}
              </option>
            ))}
          </select>
        </label>
        <button
          type="submit"
          className="primary"
          data-testid="kb-search-submit"
          disabled={busy || !query.trim()}
        >
          {busy ? t("knowledge.search.searching") : t("knowledge.search.submit")}
        </button>
      </form>
      {error && (
        <p className="error" role="alert" data-testid="kb-search-error">
          {error}
        </p>
      )}
      {result &&
        (result.view.hits.length === 0 ? (
          <p className="empty" data-testid="kb-search-empty">
            {t("knowledge.search.noHits", { query: result.query })}
          </p>
        ) : (
          <>
            <p className="hint" data-testid="kb-search-summary">
              {t("knowledge.search.hits", {
                count: result.view.hits.length,
                mode: t(`knowledge.searchMode.${result.view.search}`),
              })}
            </p>
            <ol className="kb-hits" data-testid="kb-hits" data-query={result.query}>
              {result.view.hits.map((hit) => (
                <li key={hit.chunk_id} data-testid="kb-hit" data-citation={hit.citation}>
                  <div className="hit-head">
                    <span className="hit-document">{hit.document_name}</span>
                    {hit.heading_path.length > 0 && (
                      <span className="muted" data-testid="kb-hit-heading">
                        {" › "}
                        {hit.heading_path.join(" › ")}
                      </span>
                    )}
                    <span className="muted hit-score">
                      {t("knowledge.search.score", {
                        score: formatNumber(Math.round(hit.score * 1000) / 1000),
                      })}
                    </span>
                  </div>
                  <Snippet snippet={hit.snippet} />
                  <div className="hit-citation">
                    <code data-testid="kb-hit-citation">{hit.citation}</code>
                    <CopyButton
                      testId="kb-hit-copy"
                      label={t("knowledge.search.copyCitation")}
                      text={() => hit.citation}
                    />
                  </div>
                </li>
              ))}
            </ol>
          </>
        ))}
    </section>
  );
}
