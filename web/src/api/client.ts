/**
 * The typed API client: `openapi-fetch` over the generated `paths`, with the session's bearer
 * token on every request and a `401` on an authenticated request ending the session.
 */

import createClient, { type Middleware } from "openapi-fetch";
import { ApiError, decodeError } from "./errors";
import type { paths } from "./schema";
import { Session } from "./session";

export type ApiClient = ReturnType<typeof createClient<paths>>;

export interface ApiOptions {
  session: Session;
  /** Absolute origin the `/api/...` paths hang off; the page's own by default. */
  baseUrl?: string;
  fetch?: typeof fetch;
}

export function createApi({ session, baseUrl, fetch }: ApiOptions): ApiClient {
  const client = createClient<paths>({
    baseUrl: baseUrl ?? window.location.origin,
    ...(fetch ? { fetch } : {}),
  });
  const auth: Middleware = {
    onRequest({ request }) {
      const token = session.token();
      if (token) request.headers.set("Authorization", `Bearer ${token}`);
      return request;
    },
    onResponse({ request, response }) {
      // A refused login is a wrong password, not an expired session.
      if (response.status === 401 && request.headers.has("Authorization")) session.expire();
      return response;
    },
  };
  client.use(auth);
  return client;
}

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The data of a successful answer; any failure is thrown as an {@link ApiError}. */
export async function unwrap<T>(pending: Promise<Answer<T>>): Promise<T> {
  let answer: Answer<T>;
  try {
    answer = await pending;
  } catch (cause) {
    if (cause instanceof DOMException && cause.name === "AbortError") throw cause;
    throw new ApiError(0, "unreachable", "The server could not be reached.");
  }
  if (answer.response.ok) return answer.data as T;
  throw decodeError(answer.response.status, answer.error);
}

export interface RawOptions {
  session: Session;
  baseUrl?: string;
  fetch?: typeof fetch;
}

/**
 * A request `openapi-fetch` does not fit (a raw-bytes body, a file answer), made the way the
 * typed client makes them: the session's bearer token, a `401` ends the session, and any
 * failure is thrown as an {@link ApiError}. Answers the successful `Response`.
 */
export function createRawFetch({ session, baseUrl, fetch: fetchImpl }: RawOptions) {
  return async function rawFetch(path: string, init: RequestInit = {}): Promise<Response> {
    const headers = new Headers(init.headers);
    const token = session.token();
    if (token) headers.set("Authorization", `Bearer ${token}`);
    const url = `${baseUrl ?? window.location.origin}${path}`;
    let response: Response;
    try {
      response = await (fetchImpl ?? globalThis.fetch.bind(globalThis))(url, { ...init, headers });
    } catch (cause) {
      if (cause instanceof DOMException && cause.name === "AbortError") throw cause;
      throw new ApiError(0, "unreachable", "The server could not be reached.");
    }
    if (response.ok) return response;
    if (response.status === 401 && token) session.expire();
    const text = await response.text().catch(() => "");
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : null;
    } catch {
      // Not JSON: a proxy's page or plain text, decoded as such.
    }
    throw decodeError(response.status, body);
  };
}
