import { useEffect, useRef } from "react";
import { useTranslation } from "react-i18next";
import { Link } from "react-router-dom";
import { ApiError, errorMessage } from "../api";
import { readCitation, type KbCitationView } from "../api/knowledge";
import { Dialog } from "../components/Dialog";
import { Loading } from "../components/LoadState";
import { knowledgeBaseUrl } from "../knowledge/kbModel";
import { useAsync } from "../lib/useAsync";
import { parseCitation } from "./citations";

/** The passage a citation names, between its neighbours, with where it comes from. */
export function CitationDialog({ citation, onClose }: { citation: string; onClose: () => void }) {
  const { t } = useTranslation();
  const loaded = useAsync(() => readCitation(citation), citation);
  const parsed = parseCitation(citation);
  return (
    <Dialog
      title={t("citation.title")}
      onClose={onClose}
      testId="citation-dialog"
      wide
      actions={
        <button type="button" onClick={onClose}>
          {t("common.close")}
        </button>
      }
    >
      <p className="hint">
        <code data-testid="citation-ref">{citation}</code>
      </p>
      {loaded.error != null ? (
        <p className="error" role="alert" data-testid="citation-error">
          {loaded.error instanceof ApiError && loaded.error.status === 404
            ? t("citation.notFound", {
                document: parsed?.document ?? citation,
                knowledgeBase: parsed?.knowledgeBase ?? "",
              })
            : errorMessage(loaded.error)}
        </p>
      ) : !loaded.data ? (
        <Loading />
      ) : (
        <CitedPassage view={loaded.data} onNavigate={onClose} />
      )}
    </Dialog>
  );
}

function CitedPassage({ view, onNavigate }: { view: KbCitationView; onNavigate: () => void }) {
  const { t } = useTranslation();
  const cited = useRef<HTMLLIElement>(null);
  useEffect(() => {
    cited.current?.scrollIntoView?.({ block: "nearest" });
  }, []);
  const chunk = view.chunks.find((c) => c.ordinal === view.ordinal);
  return (
    <div className="cited-passage">
      <dl className="facts">
        <div>
          <dt>{t("citation.knowledgeBase")}</dt>
          <dd>
            <Link
              to={knowledgeBaseUrl(view.knowledge_base)}
              onClick={onNavigate}
              data-testid="citation-knowledge-base"
            >
              {view.knowledge_base.name}
            </Link>{" "}
            <code>{view.knowledge_base.slug}</code>
          </dd>
        </div>
        <div>
          <dt>{t("citation.document")}</dt>
          <dd data-testid="citation-document">{view.document.name}</dd>
        </div>
        {chunk && chunk.heading_path.length > 0 && (
          <div>
            <dt>{t("citation.headingPath")}</dt>
            <dd data-testid="citation-heading-path">{chunk.heading_path.join(" › ")}</dd>
          </div>
        )}
        <div>
          <dt>{t("citation.chunk")}</dt>
          <dd>{t("citation.chunkValue", { ordinal: view.ordinal })}</dd>
        </div>
      </dl>
      {view.chunks.length === 0 ? (
        <p className="empty">{t("citation.noText")}</p>
      ) : (
        <ol className="cited-chunks" data-testid="citation-chunks">
          {view.chunks.map((c) => {
            const isCited = c.ordinal === view.ordinal;
            return (
              <li
                key={c.ordinal}
                ref={isCited ? cited : undefined}
                className={isCited ? "cited" : "neighbour"}
                data-testid={isCited ? "citation-chunk" : "citation-neighbour"}
                data-ordinal={c.ordinal}
                aria-current={isCited ? "true" : undefined}
              >
                {isCited && <span className="badge accent">{t("citation.cited")}</span>}
                <p className="pre">{c.text}</p>
              </li>
            );
          })}
        </ol>
      )}
    </div>
  );
}
