/**
 * Knowledge bases (`/api/knowledge-bases`): listing, writing, sharing and deleting them; their
 * documents (uploads with progress, one request per file; retry, download, chunks); searching
 * one; and reading a cited passage (`/api/knowledge-citations`). JSON calls are typed
 * `openapi-fetch` calls; an upload goes through `XMLHttpRequest` to report its progress, a
 * download through `rawFetch` (same session, same `ApiError` for both).
 */

import { api, rawFetch, session, unwrap } from ".";
import type {
  KbChunksView,
  KbCitationView,
  KbDocumentView,
  KbSearchView,
  KbUploadView,
  KnowledgeBasePatch,
  KnowledgeBaseView,
  KnowledgeBaseWrite,
} from "./types";
import { xhrUpload, type UploadProgress } from "./xhrUpload";

export type {
  KbChunksView,
  KbChunkView,
  KbCitationView,
  KbCounts,
  KbDocumentStatus,
  KbDocumentView,
  KbEmbedding,
  KbHitView,
  KbSearchMode,
  KbSearchView,
  KbSettings,
  KbStatus,
  KbUploadView,
  KnowledgeBasePatch,
  KnowledgeBaseView,
  KnowledgeBaseWrite,
} from "./types";
export type { UploadProgress } from "./xhrUpload";

const kbPath = (id: string) => `/api/knowledge-bases/${encodeURIComponent(id)}`;
const byId = (id: string) => ({ params: { path: { id } } });
const byDoc = (id: string, doc: string) => ({ params: { path: { id, doc } } });

/** Every knowledge base the caller can see (admins: all). */
export function listKnowledgeBases(): Promise<KnowledgeBaseView[]> {
  return unwrap(api.GET("/api/knowledge-bases"));
}

export function getKnowledgeBase(id: string): Promise<KnowledgeBaseView> {
  return unwrap(api.GET("/api/knowledge-bases/{id}", byId(id)));
}

export function createKnowledgeBase(body: KnowledgeBaseWrite): Promise<KnowledgeBaseView> {
  return unwrap(api.POST("/api/knowledge-bases", { body }));
}

/** Replaces a knowledge base's fields (its slug never changes); new settings ingest every document again. */
export function updateKnowledgeBase(id: string, body: KnowledgeBaseWrite): Promise<KnowledgeBaseView> {
  return unwrap(api.PUT("/api/knowledge-bases/{id}", { ...byId(id), body }));
}

/** Changes some fields (sharing); absent ones keep their value. */
export function patchKnowledgeBase(id: string, body: KnowledgeBasePatch): Promise<KnowledgeBaseView> {
  return unwrap(api.PATCH("/api/knowledge-bases/{id}", { ...byId(id), body }));
}

export async function deleteKnowledgeBase(id: string): Promise<void> {
  await unwrap(api.DELETE("/api/knowledge-bases/{id}", byId(id)));
}

/** The documents of a knowledge base, by name, each with its ingestion status. */
export function listDocuments(kbId: string): Promise<KbDocumentView[]> {
  return unwrap(api.GET("/api/knowledge-bases/{id}/documents", byId(kbId)));
}

export function getDocument(kbId: string, docId: string): Promise<KbDocumentView> {
  return unwrap(api.GET("/api/knowledge-bases/{id}/documents/{doc}", byDoc(kbId, docId)));
}

export async function deleteDocument(kbId: string, docId: string): Promise<void> {
  await unwrap(api.DELETE("/api/knowledge-bases/{id}/documents/{doc}", byDoc(kbId, docId)));
}

/** Ingests a failed document again. */
export function retryDocument(kbId: string, docId: string): Promise<KbDocumentView> {
  return unwrap(api.POST("/api/knowledge-bases/{id}/documents/{doc}/retry", byDoc(kbId, docId)));
}

/** The document as it was uploaded. */
export async function downloadDocument(kbId: string, docId: string): Promise<Blob> {
  const response = await rawFetch(`${kbPath(kbId)}/documents/${encodeURIComponent(docId)}/content`);
  return response.blob();
}

/** Chunks `from` to `to` of a document (the server's default stretch when not given). */
export function documentChunks(
  kbId: string,
  docId: string,
  from?: number,
  to?: number,
): Promise<KbChunksView> {
  return unwrap(
    api.GET("/api/knowledge-bases/{id}/documents/{doc}/chunks", {
      params: { path: { id: kbId, doc: docId }, query: { from, to } },
    }),
  );
}

export function searchKnowledgeBase(kbId: string, query: string, topK?: number): Promise<KbSearchView> {
  return unwrap(
    api.POST("/api/knowledge-bases/{id}/search", { ...byId(kbId), body: { query, top_k: topK ?? null } }),
  );
}

/** Adds a document from typed text (`name` with its extension, e.g. `notes.md`). */
export function addTextDocument(kbId: string, name: string, text: string): Promise<KbUploadView> {
  return unwrap(api.POST("/api/knowledge-bases/{id}/documents", { ...byId(kbId), body: { name, text } }));
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
  return unwrap(api.GET("/api/knowledge-citations", { params: { query: { ref: citation } } }));
}
