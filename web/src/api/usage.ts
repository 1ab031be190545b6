/** Usage (`GET /api/usage`): tokens and cost of the caller's runs (every user's for an admin). */

import { api, unwrap } from ".";
import type { Schemas } from "./types";

export type UsageReport = Schemas["UsageReport"];
export type UsageLine = Schemas["UsageLine"];

export interface UsageQuery {
  /** First day, `YYYY-MM-DD` (UTC), included. */
  from: string;
  /** Last day, `YYYY-MM-DD` (UTC), included. */
  to: string;
  /** Every user's runs (admins only). */
  all?: boolean;
}

export const getUsage = ({ from, to, all }: UsageQuery) =>
  unwrap(api.GET("/api/usage", { params: { query: { from, to, ...(all ? { all: true } : {}) } } }));
