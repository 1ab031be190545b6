import { useEffect, useRef, useState } from "react";
import { Trans, useTranslation } from "react-i18next";
import { Link, useNavigate, useParams } from "react-router-dom";
import {
  deleteKnowledgeBase,
  getKnowledgeBase,
  patchKnowledgeBase,
  type KnowledgeBaseView,
} from "../api/knowledge";
import { ConfirmDeleteDialog } from "../components/ConfirmDeleteDialog";
import { ErrorNote, Loading, LoadedPage } from "../components/LoadState";
import { SharingSection } from "../components/SharingSection";
import { formatBytes, formatNumber } from "../lib/format";
import { useAsync } from "../lib/useAsync";
import { DocumentTable } from "./DocumentTable";
import { DocumentUpload } from "./DocumentUpload";
import { documentTotals } from "./documentsModel";
import { KbStatusBadge, SearchModeBadge } from "./KbBadges";
import { KbSearchPanel } from "./KbSearchPanel";
import { knowledgeBaseUrl } from "./kbModel";
import { useKbDocuments } from "./useKbDocuments";

/** How long after a document settles the knowledge base's counts are read again. */
const COUNTS_SETTLE_MS = 300;

/** `/knowledge/<id>`: one knowledge base's documents, uploads, search, sharing and deletion. */
export function KnowledgeBaseDetailPage() {
  const { id = "" } = useParams();
  const loaded = useAsync(() => getKnowledgeBase(id), id);
  const { t } = useTranslation();

  return (
    <LoadedPage
      state={loaded}
      back={{ to: "/knowledge", label: t("knowledge.backToList") }}
      errorTestId="kb-error"
      keepDataOnError
    >
      {(kb) => <KnowledgeBaseDetail key={id} kb={kb} onChanged={loaded.setData} reload={loaded.reload} />}
    </LoadedPage>
  );
}

function KnowledgeBaseDetail({
  kb,
  onChanged,
  reload,
}: {
  kb: KnowledgeBaseView;
  onChanged: (kb: KnowledgeBaseView) => void;
  reload: () => void;
}) {
  const { t } = useTranslation();
  const navigate = useNavigate();
  const [deleting, setDeleting] = useState(false);

  // A burst of settled documents reads the knowledge base (its status and counts) once.
  const timer = useRef<ReturnType<typeof setTimeout> | undefined>(undefined);
  useEffect(() => () => clearTimeout(timer.current), []);
  const docs = useKbDocuments(kb.id, () => {
    clearTimeout(timer.current);
    timer.current = setTimeout(reload, COUNTS_SETTLE_MS);
  });

  return (
    <main className="page kb-detail" data-testid="kb-detail" data-kb-id={kb.id}>
      <p>
        <Link to="/knowledge" data-testid="kb-back">
          {t("knowledge.back")}
        </Link>
      </p>
      <div className="page-head">
        <h1>{kb.name}</h1>
        <KbStatusBadge status={kb.status} />
        <SearchModeBadge mode={kb.search} />
        <div className="row-actions">
          {kb.can_manage && (
            <Link className="button" to={`${knowledgeBaseUrl(kb)}/edit`} data-testid="kb-edit">
              {t("common.edit")}
            </Link>
          )}
          {kb.can_delete && (
            <button
              type="button"
              className="danger"
              data-testid="kb-delete"
              onClick={() => setDeleting(true)}
            >
              {t("common.delete")}
            </button>
          )}
        </div>
      </div>
      {kb.description && <p className="description">{kb.description}</p>}
      {!kb.can_manage && (
        <p className="hint" data-testid="kb-read-only">
          {t("knowledge.detail.readOnly")}
        </p>
      )}
      <Settings kb={kb} />

      {kb.can_manage && (
        <DocumentUpload kbId={kb.id} documents={docs.documents ?? []} onUploaded={docs.upsert} />
      )}

      <section aria-labelledby="kb-documents-title">
        <h2 id="kb-documents-title">{t("knowledge.documents.title")}</h2>
        <ErrorNote error={docs.error} testId="doc-list-error" />
        {docs.documents === null ? (
          docs.error == null && <Loading text={t("knowledge.documents.loading")} />
        ) : docs.documents.length === 0 ? (
          <p className="empty" data-testid="doc-empty">
            {kb.can_manage ? t("knowledge.documents.empty") : t("knowledge.documents.emptyReadOnly")}
          </p>
        ) : (
          <>
            <DocumentSummary documents={docs.documents} />
            <DocumentTable
              kbId={kb.id}
              documents={docs.documents}
              canManage={kb.can_manage}
              onChanged={docs.upsert}
              onRemoved={docs.remove}
            />
          </>
        )}
      </section>

      <KbSearchPanel kbId={kb.id} />

      {kb.can_manage && (
        <SharingSection
          prefix="kb"
          texts="knowledge.detail"
          shareConfig={kb.share_config}
          save={async (shareConfig) =>
            onChanged(await patchKnowledgeBase(kb.id, { share_config: shareConfig }))
          }
        />
      )}

      {deleting && (
        <ConfirmDeleteDialog
          title={t("knowledge.deleteTitle", { name: kb.name })}
          onClose={() => setDeleting(false)}
          onConfirm={async () => {
            await deleteKnowledgeBase(kb.id);
            navigate("/knowledge");
          }}
        >
          <p>
            <Trans
              i18nKey="knowledge.deleteBody"
              values={{ slug: kb.slug }}
              components={{ code: <code /> }}
            />
          </p>
        </ConfirmDeleteDialog>
      )}
    </main>
  );
}

/** The documents' totals as the page counts them, with what is still being read or failed. */
function DocumentSummary({ documents }: { documents: Parameters<typeof documentTotals>[0] }) {
  const { t } = useTranslation();
  const totals = documentTotals(documents);
  return (
    <p className="hint" data-testid="doc-summary">
      {t("knowledge.detail.totals", {
        count: totals.documents,
        size: formatBytes(totals.bytes),
        chunks: formatNumber(totals.chunks),
      })}
      {totals.busy > 0 && <> {t("knowledge.detail.busy", { count: totals.busy })}</>}
      {totals.failed > 0 && (
        <>
          {" "}
          <span className="warning">{t("knowledge.detail.failed", { count: totals.failed })}</span>
        </>
      )}
    </p>
  );
}

function Settings({ kb }: { kb: KnowledgeBaseView }) {
  const { t } = useTranslation();
  const embedding = kb.settings.embedding;
  return (
    <section aria-labelledby="kb-settings-title">
      <h2 id="kb-settings-title">{t("knowledge.detail.settings")}</h2>
      <table className="frontmatter" data-testid="kb-settings">
        <tbody>
          <tr>
            <th scope="row">{t("knowledge.detail.slug")}</th>
            <td>
              <code>{kb.slug}</code>
            </td>
          </tr>
          <tr>
            <th scope="row">{t("knowledge.detail.chunking")}</th>
            <td>
              {t("knowledge.detail.chunkingValue", {
                size: formatNumber(kb.settings.chunk_size),
                overlap: formatNumber(kb.settings.chunk_overlap),
              })}
            </td>
          </tr>
          <tr>
            <th scope="row">{t("knowledge.detail.embedding")}</th>
            <td data-testid="kb-embedding">
              {embedding ? (
                <code>
                  {embedding.provider}/{embedding.model}
                </code>
              ) : (
                t("knowledge.detail.embeddingNone")
              )}
            </td>
          </tr>
          <tr>
            <th scope="row">{t("knowledge.detail.contents")}</th>
            <td data-testid="kb-counts">
              {t("knowledge.detail.totals", {
                count: kb.counts.documents,
                size: formatBytes(kb.counts.bytes),
                chunks: formatNumber(kb.counts.chunks),
              })}
            </td>
          </tr>
        </tbody>
      </table>
    </section>
  );
}
