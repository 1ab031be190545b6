import { beforeEach, describe, expect, test } from "vitest";
import { ApiError } from "./errors";
import { Session } from "./session";
import { xhrUpload, type UploadProgress } from "./xhrUpload";

/** Just enough of an `XMLHttpRequest` to play one answer. */
class FakeXhr {
  method = "";
  url = "";
  headers: Record<string, string> = {};
  body: unknown = null;
  status = 0;
  responseText = "";
  aborted = false;
  upload: { onprogress: ((event: ProgressEvent) => void) | null } = { onprogress: null };
  onload: (() => void) | null = null;
  onerror: (() => void) | null = null;
  onabort: (() => void) | null = null;

  open(method: string, url: string) {
    this.method = method;
    this.url = url;
  }
  setRequestHeader(name: string, value: string) {
    this.headers[name] = value;
  }
  send(body: unknown) {
    this.body = body;
  }
  abort() {
    this.aborted = true;
    this.onabort?.();
  }
  progress(loaded: number, total: number | null) {
    this.upload.onprogress?.({
      loaded,
      total: total ?? 0,
      lengthComputable: total !== null,
    } as ProgressEvent);
  }
  answer(status: number, body: string) {
    this.status = status;
    this.responseText = body;
    this.onload?.();
  }
}

function start(options: { signal?: AbortSignal } = {}) {
  const session = new Session(window.localStorage);
  session.start("tok-1");
  const xhr = new FakeXhr();
  const progress: UploadProgress[] = [];
  const done = xhrUpload<{ documents: string[] }>({
    session,
    method: "POST",
    path: "/api/knowledge-bases/kb1/documents",
    body: "the body",
    onProgress: (p) => progress.push(p),
    xhr: () => xhr as unknown as XMLHttpRequest,
    ...options,
  });
  return { session, xhr, progress, done };
}

beforeEach(() => window.localStorage.clear());

describe("an upload with progress", () => {
  test("sends the bearer token, reports progress and answers the JSON", async () => {
    const { xhr, progress, done } = start();
    expect([xhr.method, xhr.url, xhr.headers.Authorization]).toEqual([
      "POST",
      "/api/knowledge-bases/kb1/documents",
      "Bearer tok-1",
    ]);
    xhr.progress(10, 100);
    xhr.progress(60, null);
    xhr.answer(201, JSON.stringify({ documents: ["d1"] }));
    await expect(done).resolves.toEqual({ documents: ["d1"] });
    expect(progress).toEqual([
      { loaded: 10, total: 100 },
      { loaded: 60, total: null },
    ]);
  });

  test("a refusal is an ApiError naming the limit or the field", async () => {
    const tooLarge = start();
    tooLarge.xhr.answer(
      413,
      JSON.stringify({ error: { code: "payload_too_large", message: "a document may be at most 20 MiB" } }),
    );
    await expect(tooLarge.done).rejects.toMatchObject({
      status: 413,
      message: "a document may be at most 20 MiB",
    });
    const format = start();
    format.xhr.answer(
      422,
      JSON.stringify({
        error: { code: "validation_failed", message: "unsupported format", field: "files[0]" },
      }),
    );
    await expect(format.done).rejects.toMatchObject({ status: 422, field: "files[0]" });
    const proxy = start();
    proxy.xhr.answer(502, "<html>bad gateway</html>");
    await expect(proxy.done).rejects.toBeInstanceOf(ApiError);
  });

  test("a 401 ends the session; a network failure is unreachable", async () => {
    const refused = start();
    let expired = false;
    refused.session.onExpire(() => (expired = true));
    refused.xhr.answer(401, JSON.stringify({ error: { code: "unauthorized", message: "expired" } }));
    await expect(refused.done).rejects.toMatchObject({ status: 401 });
    expect(expired).toBe(true);
    const down = start();
    down.xhr.onerror?.();
    await expect(down.done).rejects.toMatchObject({ status: 0, code: "unreachable" });
  });

  test("aborting stops the request", async () => {
    const controller = new AbortController();
    const { xhr, done } = start({ signal: controller.signal });
    controller.abort();
    await expect(done).rejects.toMatchObject({ name: "AbortError" });
    expect(xhr.aborted).toBe(true);
  });
});
