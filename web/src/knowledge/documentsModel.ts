/**
 * A knowledge base's documents as the page keeps them, apart from React: fed by the listing,
 * by upload answers and by the event stream, in whatever order they arrive. A stale view of a
 * document never replaces a newer one, and a listing that was on its way while the stream said
 * more does not undo what it said.
 */

import type { KbDocumentStatus, KbDocumentView } from "../api/knowledge";

/** Within one version and instant, how far along a status is. */
const STATUS_RANK: Record<KbDocumentStatus, number> = { pending: 0, processing: 1, ready: 2, error: 2 };

/** Whether `incoming` says no less than `current` about the same document. */
export function isNewer(incoming: KbDocumentView, current: KbDocumentView): boolean {
  if (incoming.version !== current.version) return incoming.version > current.version;
  const at = Date.parse(incoming.updated_at) - Date.parse(current.updated_at);
  if (at !== 0 && !Number.isNaN(at)) return at > 0;
  if (STATUS_RANK[incoming.status] !== STATUS_RANK[current.status]) {
    return STATUS_RANK[incoming.status] > STATUS_RANK[current.status];
  }
  // The same instant and stage (ingestion's progress): the later word wins.
  return incoming.status !== "processing" || incoming.progress >= current.progress;
}

/** Documents by name, the order the page lists them in. */
export function sortDocuments(documents: readonly KbDocumentView[]): KbDocumentView[] {
  return [...documents].sort((a, b) => a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
}

/** `documents` with `doc` added, or replacing the view of it when `doc` is newer. */
export function upsertDocument(documents: readonly KbDocumentView[], doc: KbDocumentView): KbDocumentView[] {
  const at = documents.findIndex((d) => d.id === doc.id);
  if (at === -1) return sortDocuments([...documents, doc]);
  if (!isNewer(doc, documents[at]!)) return [...documents];
  return documents.map((d, i) => (i === at ? doc : d));
}

export function removeDocument(documents: readonly KbDocumentView[], id: string): KbDocumentView[] {
  return documents.filter((d) => d.id !== id);
}

/**
 * The documents after a listing answered: the listing's, except for the documents `touched`
 * (added, changed or removed by the stream or an upload) since the listing was asked for,
 * whose current state is newer than what the listing says.
 */
export function mergeListing(
  current: readonly KbDocumentView[],
  listing: readonly KbDocumentView[],
  touched: ReadonlySet<string>,
): KbDocumentView[] {
  const merged = new Map<string, KbDocumentView>();
  for (const doc of listing) if (!touched.has(doc.id)) merged.set(doc.id, doc);
  for (const doc of current) {
    if (!touched.has(doc.id)) continue;
    const listed = listing.find((d) => d.id === doc.id);
    merged.set(doc.id, listed && isNewer(listed, doc) ? listed : doc);
  }
  return sortDocuments([...merged.values()]);
}

/** What the page shows of a knowledge base's documents, counted from them. */
export interface DocumentTotals {
  documents: number;
  bytes: number;
  chunks: number;
  /** Waiting or being ingested. */
  busy: number;
  failed: number;
}

export function documentTotals(documents: readonly KbDocumentView[]): DocumentTotals {
  const totals: DocumentTotals = { documents: 0, bytes: 0, chunks: 0, busy: 0, failed: 0 };
  for (const doc of documents) {
    totals.documents += 1;
    totals.bytes += doc.size_bytes;
    totals.chunks += doc.chunk_count;
    if (doc.status === "pending" || doc.status === "processing") totals.busy += 1;
    if (doc.status === "error") totals.failed += 1;
  }
  return totals;
}

/** A document whose ingestion ended (for better or worse): the knowledge base's counts moved. */
export function isSettled(doc: KbDocumentView): boolean {
  return doc.status === "ready" || doc.status === "error";
}
