import { beforeEach, describe, expect, test, vi } from "vitest";
import { createApi, createRawFetch, unwrap } from "./client";
import { ApiError } from "./errors";
import { Session } from "./session";

function json(status: number, body: unknown): Response {
  return new Response(JSON.stringify(body), {
    status,
    headers: { "Content-Type": "application/json" },
  });
}

function setup(answer: Response) {
  const fetch = vi.fn<(request: Request) => Promise<Response>>(async () => answer);
  const session = new Session(window.localStorage);
  const api = createApi({ session, baseUrl: "http://ars.test", fetch: fetch as typeof globalThis.fetch });
  return { fetch, session, api };
}

beforeEach(() => window.localStorage.clear());

describe("API client", () => {
  test("sends the session token as a Bearer Authorization header", async () => {
    const { fetch, session, api } = setup(json(200, { id: "u1", username: "ada" }));
    session.start("tok-123");
    await unwrap(api.GET("/api/me"));
    const request = fetch.mock.calls[0]![0];
    expect(request.headers.get("Authorization")).toBe("Bearer tok-123");
    expect(new URL(request.url).pathname).toBe("/api/me");
  });

  test("sends no Authorization header without a session", async () => {
    const { fetch, api } = setup(json(200, { token: "t" }));
    await unwrap(api.POST("/api/auth/login", { body: { username: "a", password: "b" } }));
    expect(fetch.mock.calls[0]![0].headers.has("Authorization")).toBe(false);
  });

  test("decodes a 422 into an ApiError naming the field at fault", async () => {
    const { api, session } = setup(
      json(422, {
        error: { code: "validation_failed", message: "must be 1-64 characters", field: "slug" },
      }),
    );
    session.start("tok");
    const failure = await unwrap(api.GET("/api/me")).catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(ApiError);
    expect(failure).toMatchObject({
      status: 422,
      code: "validation_failed",
      field: "slug",
      message: "must be 1-64 characters",
    });
  });

  test("decodes a busy 409 with the active run id", async () => {
    const { api } = setup(json(409, { error: { code: "busy", message: "busy", active_run_id: "run-1" } }));
    const failure = await unwrap(
      api.POST("/api/threads/{id}/runs", { params: { path: { id: "t1" } }, body: { input: "hi" } }),
    ).catch((e: unknown) => e);
    expect(failure).toMatchObject({ status: 409, code: "busy", activeRunId: "run-1" });
  });

  test("decodes a body that is not an error body into a generic ApiError", async () => {
    const { api } = setup(new Response("Bad Gateway", { status: 502 }));
    const failure = await unwrap(api.GET("/api/me")).catch((e: unknown) => e);
    expect(failure).toMatchObject({ status: 502, code: "http_error", message: "Bad Gateway" });
  });

  test("a 401 on an authenticated request ends the session and tells listeners", async () => {
    const { api, session } = setup(json(401, { error: { code: "unauthorized", message: "expired" } }));
    session.start("stale");
    const expired = vi.fn();
    session.onExpire(expired);
    await expect(unwrap(api.GET("/api/me"))).rejects.toMatchObject({ status: 401 });
    expect(expired).toHaveBeenCalledOnce();
    expect(session.token()).toBeNull();
  });

  test("a refused login (401 without a token) does not expire the session", async () => {
    const { api, session } = setup(
      json(401, { error: { code: "unauthorized", message: "invalid username or password" } }),
    );
    const expired = vi.fn();
    session.onExpire(expired);
    await expect(
      unwrap(api.POST("/api/auth/login", { body: { username: "a", password: "b" } })),
    ).rejects.toMatchObject({ message: "invalid username or password" });
    expect(expired).not.toHaveBeenCalled();
  });

  test("a network failure becomes an ApiError with status 0", async () => {
    const session = new Session(window.localStorage);
    const api = createApi({
      session,
      baseUrl: "http://ars.test",
      fetch: (() => Promise.reject(new TypeError("fetch failed"))) as typeof fetch,
    });
    await expect(unwrap(api.GET("/api/me"))).rejects.toMatchObject({ status: 0, code: "unreachable" });
  });
});

describe("raw requests", () => {
  function raw(answer: Response) {
    const fetch = vi.fn<(url: string, init: RequestInit) => Promise<Response>>(async () => answer);
    const session = new Session(window.localStorage);
    const rawFetch = createRawFetch({
      session,
      baseUrl: "http://ars.test",
      fetch: fetch as unknown as typeof globalThis.fetch,
    });
    return { fetch, session, rawFetch };
  }

  test("send the bearer token and keep the caller's headers and body", async () => {
    const { fetch, session, rawFetch } = raw(new Response("ok"));
    session.start("tok-9");
    const response = await rawFetch("/api/skills?target=shared", {
      method: "POST",
      headers: { "Content-Type": "application/zip" },
      body: "PK",
    });
    expect(await response.text()).toBe("ok");
    const [url, init] = fetch.mock.calls[0]!;
    expect(url).toBe("http://ars.test/api/skills?target=shared");
    const headers = new Headers(init.headers);
    expect(headers.get("Authorization")).toBe("Bearer tok-9");
    expect(headers.get("Content-Type")).toBe("application/zip");
    expect(init.body).toBe("PK");
  });

  test("decode an error body into the same ApiError", async () => {
    const { rawFetch } = raw(
      json(422, {
        error: { code: "validation_failed", message: "name must match the folder", field: "name" },
      }),
    );
    await expect(rawFetch("/api/skills", { method: "POST" })).rejects.toMatchObject({
      status: 422,
      message: "name must match the folder",
      field: "name",
    });
  });

  test("end the session on a 401", async () => {
    const { rawFetch, session } = raw(json(401, { error: { code: "unauthorized", message: "expired" } }));
    session.start("stale");
    await expect(rawFetch("/api/skills/x/download")).rejects.toBeInstanceOf(ApiError);
    expect(session.token()).toBeNull();
  });
});
