/** The app's one session and API client. */

import { createApi, createRawFetch } from "./client";
import { Session } from "./session";

export const session = new Session(window.localStorage);
export const api = createApi({ session });
/** Requests with raw bodies or raw answers (uploads, file downloads), same session. */
export const rawFetch = createRawFetch({ session });
export { unwrap } from "./client";
export { ApiError, errorMessage } from "./errors";
