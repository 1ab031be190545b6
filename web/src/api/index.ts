/** The app's one session and API client. */

import { createApi } from "./client";
import { Session } from "./session";

export const session = new Session(window.localStorage);
export const api = createApi({ session });
export { unwrap } from "./client";
export { ApiError, errorMessage } from "./errors";
