/**
 * Knowledge bases (`/api/knowledge-bases`): listing, writing, sharing and deleting them; their
 * documents (uploads with progress, one request per file; retry, download, chunks); searching
 * one; and reading a cited passage (`/api/knowledge-citations`).
 *
 * The wire types are typed by hand after the API's contract until the generated `schema.d.ts`
 * describes these routes; the calls go through `rawFetch` (same session, same `ApiError`).
 */

import { rawFetch, session } from ".";
import type { ShareConfig } from "./types";
import { xhrUpload, type UploadProgress } from "./xhrUpload";

export type { UploadProgress } from "./xhrUpload";

/** How a knowledge base is searched: keywords only, or keywords and embeddings fused. */
export type KbSearchMode = "bm25" | "hybrid";

export interface KbEmbedding {
  provider: string;
  model: string;
}

export interface KbSettings {
  chunk_size: number;
  chunk_overlap: number;
  embedding: KbEmbedding | null;
}

export interface KbCounts {
  documents: number;
  chunks: number;
  bytes: number;
  pending: number;
  processing: number;
  failed: number;
}

export type KbStatus = "empty" | "ingesting" | "ready" | "error";

export interface KnowledgeBaseView {
  id: string;
  slug: string;
  name: string;
  description: string;
  settings: KbSettings;
  search: KbSearchMode;
  counts: KbCounts;
  status: KbStatus;
  share_config: ShareConfig;
  owner_id: string | null;
  can_manage: boolean;
  can_delete: boolean;
  created_at: string;
  updated_at: string;
}

export interface KnowledgeBaseWrite {
  slug: string;
  name: string;
  description?: string;
  settings?: { chunk_size?: number; chunk_overlap?: number; embedding?: KbEmbedding | null };
  share_config?: ShareConfig;
}

export type KnowledgeBasePatch = Partial<KnowledgeBaseWrite>;

export type KbDocumentStatus = "pending" | "processing" | "ready" | "error";

export interface KbDocumentView {
  id: string;
  knowledge_base_id: string;
  name: string;
  format: string;
  size_bytes: number;
  version: number;
  status: KbDocumentStatus;
  /** How far ingestion has come, 0 to 1. */
  progress: number;
  error: string | null;
  chunk_count: number;
  uploaded_by: string | null;
  created_at: string;
  updated_at: string;
}

export interface KbChunkView {
  ordinal: number;
  citation: string;
  heading_path: string[];
  start: number;
  end: number;
  text: string;
}

export interface KbChunksView {
  document: KbDocumentView;
  chunks: KbChunkView[];
  total: number;
}

export interface KbHitView {
  citation: string;
  chunk_id: string;
  document_id: string;
  document_name: string;
  ordinal: number;
  heading_path: string[];
  start: number;
  end: number;
  score: number;
  /** HTML-escaped text with the matched words in `<b>…</b>` (and no other markup). */
  snippet: string;
  text: string;
}

export interface KbSearchView {
  search: KbSearchMode;
  hits: KbHitView[];
}

export interface KbUploadView {
  documents: KbDocumentView[];
}

export interface KbCitationView {
  knowledge_base: { id: string; slug: string; name: string };
  document: KbDocumentView;
  ordinal: number;
  /** The cited chunk and its neighbours, in document order. */
  chunks: KbChunkView[];
}

const kbPath = (id: string) => `/api/knowledge-bases/${encodeURIComponent(id)}`;
const docPath = (kbId: string, docId: string) => `${kbPath(kbId)}/documents/${encodeURIComponent(docId)}`;

/** A JSON request; answers the parsed body (nothing for a `204`). */
async function json<T>(path: string, method = "GET", body?: unknown): Promise<T> {
  const headers: Record<string, string> = { Accept: "application/json" };
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const response = await rawFetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

/** Every knowledge base the caller can see (admins: all). */
export function listKnowledgeBases(): Promise<KnowledgeBaseView[]> {
  return json("/api/knowledge-bases");
}

export function getKnowledgeBase(id: string): Promise<KnowledgeBaseView> {
  return json(kbPath(id));
}

export function createKnowledgeBase(body: KnowledgeBaseWrite): Promise<KnowledgeBaseView> {
  return json("/api/knowledge-bases", "POST", body);
}

/** Replaces a knowledge base's fields (its slug never changes). */
export function updateKnowledgeBase(id: string, body: KnowledgeBaseWrite): Promise<KnowledgeBaseView> {
  return json(kbPath(id), "PUT", body);
}

/** Changes some fields (sharing); absent ones keep their value. */
export function patchKnowledgeBase(id: string, body: KnowledgeBasePatch): Promise<KnowledgeBaseView> {
  return json(kbPath(id), "PATCH", body);
}

export async function deleteKnowledgeBase(id: string): Promise<void> {
  await json(kbPath(id), "DELETE");
}

export function listDocuments(kbId: string): Promise<KbDocumentView[]> {
  return json(`${kbPath(kbId)}/documents`);
}

export function getDocument(kbId: string, docId: string): Promise<KbDocumentView> {
  return json(docPath(kbId, docId));
}

export async function deleteDocument(kbId: string, docId: string): Promise<void> {
  await json(docPath(kbId, docId), "DELETE");
}

/** Ingests a failed document again. */
export function retryDocument(kbId: string, docId: string): Promise<KbDocumentView> {
  return json(`${docPath(kbId, docId)}/retry`, "POST");
}

/** The document as it was uploaded. */
export async function downloadDocument(kbId: string, docId: string): Promise<Blob> {
  const response = await rawFetch(`${docPath(kbId, docId)}/content`);
  return response.blob();
}

/** Chunks `from` to `to` of a document (the server's default stretch when not given). */
export function documentChunks(
  kbId: string,
  docId: string,
  from?: number,
  to?: number,
): Promise<KbChunksView> {
  const query = new URLSearchParams();
  if (from !== undefined) query.set("from", String(from));
  if (to !== undefined) query.set("to", String(to));
  const suffix = query.size > 0 ? `?${query}` : "";
  return json(`${docPath(kbId, docId)}/chunks${suffix}`);
}

export function searchKnowledgeBase(kbId: string, query: string, topK?: number): Promise<KbSearchView> {
  return json(`${kbPath(kbId)}/search`, "POST", topK === undefined ? { query } : { query, top_k: topK });
}

/** Adds a document from typed text (`name` with its extension, e.g. `notes.md`). */
export function addTextDocument(kbId: string, name: string, text: string): Promise<KbUploadView> {
  return json(`${kbPath(kbId)}/documents`, "POST", { name, text });
}

export interface UploadOptions {
  onProgress?: (progress: UploadProgress) => void;
  signal?: AbortSignal;
}

/**
 * Uploads one file as a document (a file of the same name is replaced by a new version): one
 * request per file, so each reports its own progress and its own refusal.
 */
export async function uploadDocument(
  kbId: string,
  file: File,
  { onProgress, signal }: UploadOptions = {},
): Promise<KbDocumentView[]> {
  const form = new FormData();
  form.append("files", file, file.name);
  const answer = await xhrUpload<KbUploadView>({
    session,
    method: "POST",
    path: `${kbPath(kbId)}/documents`,
    body: form,
    onProgress,
    signal,
  });
  return answer.documents;
}

/** The URL path of a knowledge base's event stream (documents added, changed, removed). */
export function knowledgeEventsPath(kbId: string): string {
  return `${kbPath(kbId)}/events`;
}

/** A cited passage with its neighbours; a `404` when the caller cannot see it. */
export function readCitation(citation: string): Promise<KbCitationView> {
  return json(`/api/knowledge-citations?${new URLSearchParams({ ref: citation })}`);
}
