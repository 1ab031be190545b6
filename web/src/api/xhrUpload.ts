/**
 * An upload that reports its progress: `fetch` cannot tell how much of a request body is sent,
 * `XMLHttpRequest` can. Made the way the other requests are: the session's bearer token, a
 * `401` ends the session, and any failure is thrown as an {@link ApiError}.
 */

import { ApiError, decodeError } from "./errors";
import type { Session } from "./session";

export interface UploadProgress {
  /** Bytes of the request body sent so far. */
  loaded: number;
  /** The body's size, when the browser knows it. */
  total: number | null;
}

export interface XhrUploadOptions {
  session: Session;
  method: "POST" | "PUT";
  /** The `/api/...` path. */
  path: string;
  body: XMLHttpRequestBodyInit;
  /** Request headers of the call's own (`Content-Type`, `If-None-Match`, …). */
  headers?: Record<string, string>;
  onProgress?: (progress: UploadProgress) => void;
  signal?: AbortSignal;
  /** Makes the request object; a fake in tests. */
  xhr?: () => XMLHttpRequest;
}

function parse(text: string): unknown {
  try {
    return text ? JSON.parse(text) : null;
  } catch {
    // Not JSON: a proxy's page or plain text, decoded as such.
    return text;
  }
}

/** Sends `body` and answers the parsed JSON of a successful answer. */
export function xhrUpload<T>({
  session,
  method,
  path,
  body,
  headers,
  onProgress,
  signal,
  xhr,
}: XhrUploadOptions) {
  return new Promise<T>((resolve, reject) => {
    if (signal?.aborted) {
      reject(new DOMException("The upload was aborted.", "AbortError"));
      return;
    }
    const request = xhr ? xhr() : new XMLHttpRequest();
    request.open(method, path);
    const token = session.token();
    if (token) request.setRequestHeader("Authorization", `Bearer ${token}`);
    request.setRequestHeader("Accept", "application/json");
    for (const [name, value] of Object.entries(headers ?? {})) request.setRequestHeader(name, value);
    request.upload.onprogress = (event) => {
      onProgress?.({ loaded: event.loaded, total: event.lengthComputable ? event.total : null });
    };
    const abort = () => request.abort();
    signal?.addEventListener("abort", abort, { once: true });
    const settle = () => signal?.removeEventListener("abort", abort);
    request.onload = () => {
      settle();
      const body = parse(request.responseText);
      if (request.status >= 200 && request.status < 300) {
        resolve(body as T);
        return;
      }
      if (request.status === 401 && token) session.expire();
      reject(decodeError(request.status, body));
    };
    request.onerror = () => {
      settle();
      reject(new ApiError(0, "unreachable", "The server could not be reached."));
    };
    request.onabort = () => {
      settle();
      reject(new DOMException("The upload was aborted.", "AbortError"));
    };
    request.send(body);
  });
}
