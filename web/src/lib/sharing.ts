/**
 * The one sharing choice the UI offers for agents and skills alike: public to every user, or
 * not. Unsharing keeps a per-user list the UI does not edit; otherwise the item goes private.
 */

import type { ShareConfig } from "../api/types";

export function isPublic(config: ShareConfig | null | undefined): boolean {
  return config?.visibility === "public";
}

/** `stored` with its visibility set for `shared`, its user and manager lists kept. */
export function withPublic(shared: boolean, stored: ShareConfig | null | undefined): ShareConfig {
  const visibility = shared ? "public" : stored?.visibility === "users" ? "users" : "private";
  return { ...stored, visibility };
}
