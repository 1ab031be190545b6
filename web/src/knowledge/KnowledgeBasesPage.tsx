import { useState } from "react";
import { Trans, useTranslation } from "react-i18next";
import { Link } from "react-router-dom";
import { deleteKnowledgeBase, listKnowledgeBases, type KnowledgeBaseView } from "../api/knowledge";
import { ConfirmDeleteDialog } from "../components/ConfirmDeleteDialog";
import { ListTable } from "../components/ListTable";
import { ErrorNote, Loading } from "../components/LoadState";
import { formatBytes, formatNumber } from "../lib/format";
import { useAsync } from "../lib/useAsync";
import { KbStatusBadge, SearchModeBadge } from "./KbBadges";
import { knowledgeBaseUrl, sortKnowledgeBases } from "./kbModel";

/** `/knowledge`: every knowledge base the user can see. */
export function KnowledgeBasesPage() {
  const { t } = useTranslation();
  const bases = useAsync(listKnowledgeBases, "knowledge-bases");
  const [deleting, setDeleting] = useState<KnowledgeBaseView | null>(null);
  const shown = sortKnowledgeBases(bases.data ?? []);

  return (
    <main className="page">
      <div className="page-head">
        <h1>{t("knowledge.title")}</h1>
        <Link className="button primary" to="/knowledge/new" data-testid="kb-new">
          {t("knowledge.new")}
        </Link>
      </div>
      <p className="hint">{t("knowledge.intro")}</p>
      <ErrorNote error={bases.error} testId="kb-list-error" />
      {bases.loading && !bases.data ? (
        <Loading text={t("knowledge.loading")} />
      ) : bases.error != null && !bases.data ? null : shown.length === 0 ? (
        <p className="empty" data-testid="kb-empty">
          {t("knowledge.empty")}
        </p>
      ) : (
        <ListTable testId="kb-list">
          <thead>
            <tr>
              <th scope="col">{t("knowledge.columns.name")}</th>
              <th scope="col">{t("knowledge.columns.slug")}</th>
              <th scope="col">{t("knowledge.columns.documents")}</th>
              <th scope="col" className="wide-only">
                {t("knowledge.columns.chunks")}
              </th>
              <th scope="col">{t("knowledge.columns.status")}</th>
              <th scope="col" className="wide-only">
                {t("knowledge.columns.search")}
              </th>
              <th scope="col" className="wide-only">
                {t("knowledge.columns.sharing")}
              </th>
              <th scope="col">
                <span className="visually-hidden">{t("knowledge.columns.actions")}</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {shown.map((kb) => (
              <KbRow key={kb.id} kb={kb} onDelete={setDeleting} />
            ))}
          </tbody>
        </ListTable>
      )}
      {deleting && (
        <ConfirmDeleteDialog
          title={t("knowledge.deleteTitle", { name: deleting.name })}
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await deleteKnowledgeBase(deleting.id);
            setDeleting(null);
            bases.reload();
          }}
        >
          <p>
            <Trans
              i18nKey="knowledge.deleteBody"
              values={{ slug: deleting.slug }}
              components={{ code: <code /> }}
            />
          </p>
        </ConfirmDeleteDialog>
      )}
    </main>
  );
}

function KbRow({ kb, onDelete }: { kb: KnowledgeBaseView; onDelete: (kb: KnowledgeBaseView) => void }) {
  const { t } = useTranslation();
  const visibility = kb.share_config.visibility ?? "private";
  return (
    <tr data-testid={`kb-row-${kb.slug}`} data-kb-id={kb.id}>
      <td>
        <Link to={knowledgeBaseUrl(kb)} data-testid={`kb-open-${kb.slug}`}>
          {kb.name}
        </Link>
        {kb.description && <div className="muted description">{kb.description}</div>}
      </td>
      <td>
        <code>{kb.slug}</code>
      </td>
      <td data-testid="kb-documents">
        {t("knowledge.documentsValue", { count: kb.counts.documents, size: formatBytes(kb.counts.bytes) })}
      </td>
      <td className="wide-only">{formatNumber(kb.counts.chunks)}</td>
      <td>
        <KbStatusBadge status={kb.status} />
      </td>
      <td className="wide-only">
        <SearchModeBadge mode={kb.search} />
      </td>
      <td className="wide-only">{t(`agents.visibility.${visibility}`)}</td>
      <td>
        <div className="row-actions">
          {kb.can_manage && (
            <Link className="button" to={`${knowledgeBaseUrl(kb)}/edit`} data-testid={`kb-edit-${kb.slug}`}>
              {t("common.edit")}
            </Link>
          )}
          {kb.can_delete && (
            <button
              type="button"
              className="danger"
              data-testid={`kb-delete-${kb.slug}`}
              onClick={() => onDelete(kb)}
            >
              {t("common.delete")}
            </button>
          )}
        </div>
      </td>
    </tr>
  );
}
