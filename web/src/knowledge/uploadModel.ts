/**
 * The upload area's list of files, apart from React: each file waits, is sent (with the share
 * of its bytes sent so far), and ends uploaded (naming the document it became) or refused with
 * the reason. A file the server would not read is refused before it is sent.
 */

import i18n from "../i18n";
import { isAcceptedFile } from "./kbModel";

export type UploadState = "queued" | "uploading" | "done" | "failed";

export interface UploadEntry {
  /** Identifies the entry on screen and in the upload queue. */
  key: string;
  name: string;
  size: number;
  state: UploadState;
  /** Bytes sent so far (of `size`, or of the request's own total once known). */
  loaded: number;
  total: number;
  error: string | null;
  /** The document the file became, once uploaded. */
  documentId: string | null;
}

let uploads = 0;

/** A fresh key for an upload entry. */
export function uploadKey(): string {
  uploads += 1;
  return `upload-${uploads}`;
}

/**
 * `entries` with `files` added: queued, or failed at once when their format is not one the
 * server reads. Answers the new list and the keys of the entries to send, in order.
 */
export function addUploads(
  entries: readonly UploadEntry[],
  files: ReadonlyArray<{ key: string; name: string; size: number }>,
): { entries: UploadEntry[]; queued: string[] } {
  const added: UploadEntry[] = files.map(({ key, name, size }) => {
    const accepted = isAcceptedFile(name);
    return {
      key,
      name,
      size,
      state: accepted ? "queued" : "failed",
      loaded: 0,
      total: size,
      error: accepted ? null : i18n.t("knowledge.upload.unsupported"),
      documentId: null,
    };
  });
  return {
    entries: [...entries, ...added],
    queued: added.filter((e) => e.state === "queued").map((e) => e.key),
  };
}

function update(entries: readonly UploadEntry[], key: string, patch: Partial<UploadEntry>): UploadEntry[] {
  return entries.map((e) => (e.key === key ? { ...e, ...patch } : e));
}

export function uploadStarted(entries: readonly UploadEntry[], key: string): UploadEntry[] {
  return update(entries, key, { state: "uploading", loaded: 0, error: null });
}

/** The share of an upload's bytes sent so far; `total` is `null` when the browser cannot tell. */
export function uploadProgressed(
  entries: readonly UploadEntry[],
  key: string,
  loaded: number,
  total: number | null,
): UploadEntry[] {
  const entry = entries.find((e) => e.key === key);
  if (!entry || entry.state !== "uploading") return [...entries];
  const size = total ?? entry.total;
  return update(entries, key, { loaded: Math.min(loaded, size), total: size });
}

export function uploadDone(
  entries: readonly UploadEntry[],
  key: string,
  documentId: string | null,
): UploadEntry[] {
  return entries.map((e) =>
    e.key === key ? { ...e, state: "done", loaded: e.total, documentId, error: null } : e,
  );
}

export function uploadFailed(entries: readonly UploadEntry[], key: string, error: string): UploadEntry[] {
  return update(entries, key, { state: "failed", error });
}

/** The entries still waiting or being sent. */
export function clearFinished(entries: readonly UploadEntry[]): UploadEntry[] {
  return entries.filter((e) => e.state === "queued" || e.state === "uploading");
}

export function dismissUpload(entries: readonly UploadEntry[], key: string): UploadEntry[] {
  return entries.filter((e) => e.key !== key);
}

/** How much of an upload is sent, 0 to 1. */
export function uploadFraction(entry: UploadEntry): number {
  if (entry.state === "done") return 1;
  if (entry.total <= 0) return 0;
  return Math.max(0, Math.min(1, entry.loaded / entry.total));
}
