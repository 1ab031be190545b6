import { useTranslation } from "react-i18next";
import type { KbSearchMode, KbStatus } from "../api/knowledge";

const TONE: Record<KbStatus, string> = { empty: "", ingesting: "pending", ready: "success", error: "error" };

/** A knowledge base's state: empty, ingesting, ready, or with documents that failed. */
export function KbStatusBadge({ status }: { status: KbStatus }) {
  const { t } = useTranslation();
  return (
    <span
      className={`status ${TONE[status]}`}
      data-testid="kb-status"
      data-status={status}
      title={t(`knowledge.statusHint.${status}`)}
    >
      {t(`knowledge.status.${status}`)}
    </span>
  );
}

/** How a knowledge base is searched: BM25 only, or hybrid. */
export function SearchModeBadge({ mode }: { mode: KbSearchMode }) {
  const { t } = useTranslation();
  return (
    <span className="badge muted" data-testid="kb-search-mode" data-mode={mode}>
      {t(`knowledge.searchMode.${mode}`)}
    </span>
  );
}
