/**
 * A thread's workdir (`/api/threads/{id}/files…`): the listing and deletion are typed calls;
 * contents go through `rawFetch` (raw bytes both ways, same session and errors).
 */

import { api, rawFetch, session, unwrap } from ".";
import { ApiError } from "./errors";
import type { Schemas } from "./types";
import { xhrUpload, type UploadProgress } from "./xhrUpload";

export type FileEntry = Schemas["FileEntry"];
export type FileListing = Schemas["FileListing"];

const byThread = (threadId: string) => ({ path: { id: threadId } });

/** Everything in the workdir, folders first, depth first (bounded by the server). */
export function listFiles(threadId: string): Promise<FileListing> {
  return unwrap(
    api.GET("/api/threads/{id}/files", {
      params: { ...byThread(threadId), query: { path: "", recursive: "true", max_depth: 8 } },
    }),
  );
}

const contentPath = (threadId: string, path: string, extra: Record<string, string> = {}) =>
  `/api/threads/${encodeURIComponent(threadId)}/files/content?${new URLSearchParams({ path, ...extra })}`;

/** A file's bytes and type. */
export async function readFile(threadId: string, path: string): Promise<{ blob: Blob; contentType: string }> {
  const response = await rawFetch(contentPath(threadId, path));
  return { blob: await response.blob(), contentType: response.headers.get("Content-Type") ?? "" };
}

/** Puts `body` at `path` (folders are created), replacing a file already there. */
export async function uploadFile(threadId: string, path: string, body: Blob): Promise<FileEntry> {
  const response = await rawFetch(contentPath(threadId, path), {
    method: "PUT",
    headers: { "Content-Type": "application/octet-stream", Accept: "application/json" },
    body,
  });
  return (await response.json()) as FileEntry;
}

/**
 * The names in one folder of the workdir (not below it); none when the folder does not exist
 * yet.
 */
export async function listFolder(threadId: string, path: string): Promise<string[]> {
  try {
    const listing = await unwrap(
      api.GET("/api/threads/{id}/files", { params: { ...byThread(threadId), query: { path } } }),
    );
    return listing.entries.map((entry) => entry.name);
  } catch (failure) {
    if (failure instanceof ApiError && failure.status === 404) return [];
    throw failure;
  }
}

export interface PutFileOptions {
  onProgress?: (progress: UploadProgress) => void;
  signal?: AbortSignal;
  /** Refuse to replace a file already at `path` (the server answers `412`). */
  createOnly?: boolean;
  /** Makes the request object; a fake in tests. */
  xhr?: () => XMLHttpRequest;
}

/** {@link uploadFile} with its progress reported, and optionally never replacing a file. */
export function putFile(
  threadId: string,
  path: string,
  body: Blob,
  { onProgress, signal, createOnly, xhr }: PutFileOptions = {},
): Promise<FileEntry> {
  const headers: Record<string, string> = { "Content-Type": "application/octet-stream" };
  if (createOnly) headers["If-None-Match"] = "*";
  return xhrUpload<FileEntry>({
    session,
    method: "PUT",
    path: contentPath(threadId, path),
    body,
    headers,
    onProgress,
    signal,
    xhr,
  });
}

export async function deleteFile(threadId: string, path: string, recursive: boolean): Promise<void> {
  await unwrap(
    api.DELETE("/api/threads/{id}/files", {
      params: { ...byThread(threadId), query: { path, recursive: recursive ? "true" : "false" } },
    }),
  );
}

/**
 * The workdir-relative path a tool call's `path` argument names, or `null` when it is outside
 * the workdir: tools take paths relative to it or absolute under `workdir`.
 */
export function workdirPath(argument: string, workdir: string): string | null {
  const trimmed = argument.trim();
  if (!trimmed) return null;
  let rest: string;
  if (trimmed.startsWith("/")) {
    const root = workdir.replace(/\/+$/, "");
    if (trimmed !== root && !trimmed.startsWith(`${root}/`)) return null;
    rest = trimmed.slice(root.length);
  } else {
    rest = trimmed;
  }
  const parts: string[] = [];
  for (const part of rest.split("/")) {
    if (!part || part === ".") continue;
    if (part === "..") {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(part);
  }
  return parts.length ? parts.join("/") : null;
}
