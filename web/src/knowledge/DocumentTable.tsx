import { useState } from "react";
import { useTranslation } from "react-i18next";
import { errorMessage } from "../api";
import { deleteDocument, downloadDocument, retryDocument, type KbDocumentView } from "../api/knowledge";
import { ConfirmDeleteDialog } from "../components/ConfirmDeleteDialog";
import { ListTable } from "../components/ListTable";
import { saveBlob } from "../lib/download";
import { formatBytes, formatDateTime, formatNumber, formatPercent } from "../lib/format";

/**
 * Where a document is in ingestion: waiting, being read (with how far), ready, or failed with
 * the server's reason and, for those who manage the knowledge base, Retry.
 */
export function DocumentStatus({
  doc,
  onRetry,
}: {
  doc: KbDocumentView;
  onRetry?: (doc: KbDocumentView) => void;
}) {
  const { t } = useTranslation();
  switch (doc.status) {
    case "pending":
      return (
        <span className="status pending" data-testid="doc-status" data-status="pending">
          {t("knowledge.documents.status.pending")}
        </span>
      );
    case "processing": {
      const percent = formatPercent(doc.progress);
      return (
        <span className="doc-progress" data-testid="doc-status" data-status="processing">
          <span className="status pending">{t("knowledge.documents.status.processing", { percent })}</span>
          <progress
            max={1}
            value={Math.max(0, Math.min(1, doc.progress))}
            aria-label={t("knowledge.documents.progressOf", { name: doc.name })}
          />
        </span>
      );
    }
    case "ready":
      return (
        <span className="status success" data-testid="doc-status" data-status="ready">
          {t("knowledge.documents.status.ready")}
        </span>
      );
    case "error":
      return (
        <span className="doc-failure" data-testid="doc-status" data-status="error">
          <span className="status error">{t("knowledge.documents.status.error")}</span>{" "}
          {doc.error && (
            <span className="entry-error" data-testid="doc-error">
              {doc.error}
            </span>
          )}{" "}
          {onRetry && (
            <button type="button" className="link" data-testid="doc-retry" onClick={() => onRetry(doc)}>
              {t("common.retry")}
            </button>
          )}
        </span>
      );
  }
}

interface DocumentTableProps {
  kbId: string;
  documents: KbDocumentView[];
  canManage: boolean;
  onChanged: (doc: KbDocumentView) => void;
  onRemoved: (id: string) => void;
}

/** A knowledge base's documents: name, format, size, status, chunks, download and delete. */
export function DocumentTable({ kbId, documents, canManage, onChanged, onRemoved }: DocumentTableProps) {
  const { t } = useTranslation();
  const [deleting, setDeleting] = useState<KbDocumentView | null>(null);
  const [error, setError] = useState<string | null>(null);

  async function retry(doc: KbDocumentView) {
    setError(null);
    try {
      onChanged(await retryDocument(kbId, doc.id));
    } catch (failure) {
      setError(t("knowledge.documents.actionFailed", { name: doc.name, message: errorMessage(failure) }));
    }
  }

  async function download(doc: KbDocumentView) {
    setError(null);
    try {
      saveBlob(await downloadDocument(kbId, doc.id), doc.name);
    } catch (failure) {
      setError(t("knowledge.documents.actionFailed", { name: doc.name, message: errorMessage(failure) }));
    }
  }

  return (
    <>
      {error && (
        <p className="error" role="alert" data-testid="doc-action-error">
          {error}
        </p>
      )}
      <ListTable testId="doc-list">
        <thead>
          <tr>
            <th scope="col">{t("knowledge.documents.columns.name")}</th>
            <th scope="col" className="wide-only">
              {t("knowledge.documents.columns.format")}
            </th>
            <th scope="col">{t("knowledge.documents.columns.size")}</th>
            <th scope="col">{t("knowledge.documents.columns.status")}</th>
            <th scope="col">{t("knowledge.documents.columns.chunks")}</th>
            <th scope="col">
              <span className="visually-hidden">{t("knowledge.documents.columns.actions")}</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {documents.map((doc) => (
            <tr
              key={doc.id}
              data-testid="doc-row"
              data-name={doc.name}
              data-doc-id={doc.id}
              data-status={doc.status}
            >
              <td>
                <span className="doc-name" data-testid="doc-name">
                  {doc.name}
                </span>{" "}
                {doc.version > 1 && (
                  <span className="badge muted" title={formatDateTime(doc.updated_at)}>
                    {t("knowledge.documents.version", { version: doc.version })}
                  </span>
                )}
              </td>
              <td className="wide-only">
                <code>{doc.format || "—"}</code>
              </td>
              <td>{formatBytes(doc.size_bytes)}</td>
              <td>
                <DocumentStatus doc={doc} onRetry={canManage ? (d) => void retry(d) : undefined} />
              </td>
              <td data-testid="doc-chunks">{formatNumber(doc.chunk_count)}</td>
              <td>
                <div className="row-actions">
                  <button
                    type="button"
                    data-testid="doc-download"
                    aria-label={t("knowledge.documents.downloadNamed", { name: doc.name })}
                    onClick={() => void download(doc)}
                  >
                    {t("knowledge.documents.download")}
                  </button>
                  {canManage && (
                    <button
                      type="button"
                      className="danger"
                      data-testid="doc-delete"
                      aria-label={t("knowledge.documents.deleteNamed", { name: doc.name })}
                      onClick={() => setDeleting(doc)}
                    >
                      {t("common.delete")}
                    </button>
                  )}
                </div>
              </td>
            </tr>
          ))}
        </tbody>
      </ListTable>
      {deleting && (
        <ConfirmDeleteDialog
          title={t("knowledge.documents.deleteTitle", { name: deleting.name })}
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await deleteDocument(kbId, deleting.id);
            onRemoved(deleting.id);
            setDeleting(null);
          }}
        >
          <p>{t("knowledge.documents.deleteBody")}</p>
        </ConfirmDeleteDialog>
      )}
    </>
  );
}
