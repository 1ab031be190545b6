/**
 * The MCP server pages' rules, apart from React: what a server's transport looks like in a
 * list, what a stored server looks like in the form, the `McpServerWrite` a filled form sends
 * (environment and header values merge on the server, so only changed values are sent and a
 * secret the form never had is never resent), where a server error about a payload path is
 * shown, and the tool choices of a connection check.
 */

import { ApiError, errorMessage } from "../api/errors";
import type {
  McpServerView,
  McpServerWrite,
  McpTransportView,
  McpTransportWrite,
  McpValueView,
} from "../api/types";
import i18n from "../i18n";
import { isPublic, withPublic } from "../lib/sharing";

export type TransportType = McpTransportView["type"];

/** Servers by slug, the order agents' forms and the list show them in. */
export function sortServers(servers: readonly McpServerView[]): McpServerView[] {
  return [...servers].sort((a, b) => a.slug.localeCompare(b.slug));
}

/** The URL of a server's detail page (its edit form is `<url>/edit`). */
export function mcpServerUrl(server: Pick<McpServerView, "id">): string {
  return `/mcp-servers/${encodeURIComponent(server.id)}`;
}

/** A command-line argument as a shell would need it written: plain, or single-quoted. */
export function quoteArg(arg: string): string {
  if (/^[\w@%+=:,./-]+$/.test(arg)) return arg;
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

/** What a server runs or reaches: the command line of a `stdio` server, the URL of an HTTP one. */
export function transportTarget(transport: McpTransportView): string {
  if (transport.type === "streamable_http") return transport.url;
  return [transport.command, ...transport.args].map(quoteArg).join(" ");
}

/** Header names whose value the server always keeps secret, whatever the form says. */
const SECRET_HEADERS = ["authorization", "proxy-authorization", "cookie", "x-api-key", "api-key"];

export function alwaysSecretHeader(name: string): boolean {
  return SECRET_HEADERS.includes(name.trim().toLowerCase());
}

/** An environment variable or header in the form. */
export interface ValueRow {
  /** Identifies the row on screen and in errors (`row-<key>`). */
  key: string;
  /** A stored row's name does not change (remove it and add another instead). */
  name: string;
  /** The value to set; for a stored secret, empty keeps the stored one. */
  value: string;
  secret: boolean;
  /** What the server holds under this name; `null` for a row added in the form. */
  stored: { secret: boolean; value: string | null } | null;
}

let rowCount = 0;

/** A fresh, empty row. */
export function newRow(): ValueRow {
  rowCount += 1;
  return { key: `new-${rowCount}`, name: "", value: "", secret: false, stored: null };
}

function storedRow(view: McpValueView): ValueRow {
  return {
    key: `stored-${view.name}`,
    name: view.name,
    value: view.secret ? "" : (view.value ?? ""),
    secret: view.secret,
    stored: { secret: view.secret, value: view.secret ? null : (view.value ?? "") },
  };
}

export interface McpFormState {
  name: string;
  slug: string;
  description: string;
  transport: TransportType;
  command: string;
  /** One argument per line. */
  args: string;
  /** Empty: the conversation's workdir. */
  cwd: string;
  network: boolean;
  env: ValueRow[];
  url: string;
  headers: ValueRow[];
  /** Every tool the server lists (`enabled_tools: null`), or only those in `tools`. */
  allTools: boolean;
  /** One tool name per line. */
  tools: string;
  /** Public to every user (`share_config.visibility`). */
  shared: boolean;
}

export function emptyMcpForm(): McpFormState {
  return {
    name: "",
    slug: "",
    description: "",
    transport: "streamable_http",
    command: "",
    args: "",
    cwd: "",
    network: false,
    env: [],
    url: "",
    headers: [],
    allTools: true,
    tools: "",
    shared: false,
  };
}

export function formFromServer(server: McpServerView): McpFormState {
  const form: McpFormState = {
    ...emptyMcpForm(),
    name: server.name,
    slug: server.slug,
    description: server.description,
    transport: server.transport.type,
    allTools: server.enabled_tools == null,
    tools: (server.enabled_tools ?? []).join("\n"),
    shared: isPublic(server.share_config),
  };
  const t = server.transport;
  if (t.type === "stdio") {
    return {
      ...form,
      command: t.command,
      args: t.args.join("\n"),
      cwd: t.cwd ?? "",
      network: t.network,
      env: t.env.map(storedRow),
    };
  }
  return { ...form, url: t.url, headers: t.headers.map(storedRow) };
}

/** The non-blank lines of `text`, trimmed. */
export function lines(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter(Boolean);
}

/** The fields errors are shown at, as their `error-<name>` test ids are; `row-<key>` for a value row. */
export type McpFormField =
  | "name"
  | "slug"
  | "description"
  | "transport"
  | "command"
  | "args"
  | "cwd"
  | "network"
  | "env"
  | "url"
  | "headers"
  | "enabled-tools"
  | "share"
  | `row-${string}`;

export type McpFieldErrors = Partial<Record<McpFormField, string>>;

export const rowField = (row: Pick<ValueRow, "key">): McpFormField => `row-${row.key}`;

type ValueChange = string | { secret: string } | null;

/**
 * The value changes `rows` make over what the server holds (`stored`, the server's rows of
 * the same transport type): changed and new values, `null` for a stored name no row keeps.
 * Unchanged values are left out, so the server keeps them (secrets included).
 */
export function valueChanges(
  rows: readonly ValueRow[],
  stored: readonly McpValueView[],
  kind: "env" | "headers",
): { changes: Record<string, ValueChange>; errors: McpFieldErrors } {
  const same = (a: string, b: string) => (kind === "headers" ? a.toLowerCase() === b.toLowerCase() : a === b);
  const changes: Record<string, ValueChange> = {};
  const errors: McpFieldErrors = {};
  const seen: string[] = [];
  for (const row of rows) {
    const name = row.name.trim();
    if (!row.stored && !name && !row.value) continue;
    if (!name) {
      errors[rowField(row)] = i18n.t("mcp.form.rowNeedsName");
      continue;
    }
    if (seen.some((other) => same(other, name))) {
      errors[rowField(row)] = i18n.t("mcp.form.rowTwice", { name });
      continue;
    }
    seen.push(name);
    const secret = row.secret || (kind === "headers" && alwaysSecretHeader(name));
    const value: ValueChange = secret ? { secret: row.value } : row.value;
    if (!row.stored) {
      changes[name] = value;
    } else if (row.stored.secret) {
      if (row.value) changes[name] = value;
      else if (!secret) errors[rowField(row)] = i18n.t("mcp.form.plainNeedsValue");
    } else if (secret || row.value !== row.stored.value) {
      changes[name] = value;
    }
  }
  for (const view of stored) {
    if (!seen.some((name) => same(name, view.name))) changes[view.name] = null;
  }
  return { changes, errors };
}

export type BuildResult = { ok: true; write: McpServerWrite } | { ok: false; errors: McpFieldErrors };

/** The request body for `form`; `original` is the stored server when editing. */
export function buildMcpWrite(form: McpFormState, original: McpServerView | null): BuildResult {
  const stored = original?.transport;
  let transport: McpTransportWrite;
  let errors: McpFieldErrors;
  if (form.transport === "stdio") {
    const before = stored?.type === "stdio" ? stored.env : [];
    const env = valueChanges(form.env, before, "env");
    errors = env.errors;
    transport = {
      type: "stdio",
      command: form.command.trim(),
      args: lines(form.args),
      cwd: form.cwd.trim() || null,
      network: form.network,
    };
    if (Object.keys(env.changes).length > 0) transport.env = env.changes;
  } else {
    const before = stored?.type === "streamable_http" ? stored.headers : [];
    const headers = valueChanges(form.headers, before, "headers");
    errors = headers.errors;
    transport = { type: "streamable_http", url: form.url.trim() };
    if (Object.keys(headers.changes).length > 0) transport.headers = headers.changes;
  }
  if (Object.keys(errors).length > 0) return { ok: false, errors };
  return {
    ok: true,
    write: {
      slug: form.slug.trim(),
      name: form.name.trim(),
      description: form.description.trim(),
      transport,
      enabled_tools: form.allTools ? null : lines(form.tools),
      share_config: withPublic(form.shared, original?.share_config),
    },
  };
}

const TOP_FIELDS: ReadonlyArray<readonly [string, McpFormField]> = [
  ["slug", "slug"],
  ["name", "name"],
  ["description", "description"],
  ["enabled_tools", "enabled-tools"],
  ["share_config", "share"],
  ["transport.type", "transport"],
  ["transport.command", "command"],
  ["transport.args", "args"],
  ["transport.cwd", "cwd"],
  ["transport.network", "network"],
  ["transport.url", "url"],
];

const within = (path: string, prefix: string) =>
  path === prefix || path.startsWith(`${prefix}.`) || path.startsWith(`${prefix}[`);

/** The form field a server error's payload path (`field`) is about: a value row by its name. */
export function fieldForPath(path: string, form: McpFormState): McpFormField | null {
  for (const kind of ["env", "headers"] as const) {
    const prefix = `transport.${kind}`;
    if (path === prefix) return kind;
    if (path.startsWith(`${prefix}.`)) {
      const name = path.slice(prefix.length + 1);
      const rows = form[kind];
      const row =
        rows.find((r) => r.name.trim() === name) ??
        (kind === "headers"
          ? rows.find((r) => r.name.trim().toLowerCase() === name.toLowerCase())
          : undefined);
      return row ? rowField(row) : kind;
    }
  }
  const top = TOP_FIELDS.find(([prefix]) => within(path, prefix));
  if (top) return top[1];
  return path === "transport" || path.startsWith("transport.") ? "transport" : null;
}

/** A failed save as the form shows it: at its field when it names one, and as a summary. */
export function errorsFromFailure(
  failure: unknown,
  form: McpFormState,
): { fields: McpFieldErrors; form: string } {
  if (!(failure instanceof ApiError)) {
    return { fields: {}, form: failure instanceof Error ? failure.message : String(failure) };
  }
  const field = failure.field ? fieldForPath(failure.field, form) : null;
  const message = errorMessage(failure);
  return {
    fields: field ? { [field]: message } : {},
    form: field ? i18n.t("mcp.form.saveFailedAt", { message }) : i18n.t("mcp.form.saveFailed", { message }),
  };
}

/** `errors` without those of the fields `patch` changes (rows by their own key). */
export function clearEdited(
  errors: McpFieldErrors,
  patch: Partial<McpFormState>,
  before: McpFormState,
): McpFieldErrors {
  const next = { ...errors };
  const drop = (field: McpFormField) => delete next[field];
  const simple: Partial<Record<keyof McpFormState, McpFormField>> = {
    name: "name",
    slug: "slug",
    description: "description",
    transport: "transport",
    command: "command",
    args: "args",
    cwd: "cwd",
    network: "network",
    url: "url",
    allTools: "enabled-tools",
    tools: "enabled-tools",
    shared: "share",
  };
  for (const key of Object.keys(patch) as Array<keyof McpFormState>) {
    const field = simple[key];
    if (field) drop(field);
  }
  for (const kind of ["env", "headers"] as const) {
    const rows = patch[kind];
    if (!rows) continue;
    drop(kind);
    const old = new Map(before[kind].map((r) => [r.key, r]));
    for (const row of before[kind]) if (!rows.some((r) => r.key === row.key)) drop(rowField(row));
    for (const row of rows) if (old.get(row.key) !== row) drop(rowField(row));
  }
  return next;
}

/** The kinds of failed check the UI explains in its own words (anything else is `other`). */
export const CHECK_ERROR_KINDS = [
  "start",
  "unreachable",
  "refused_address",
  "unauthorized",
  "http_status",
  "handshake",
  "timeout",
  "closed",
  "protocol",
  "cancelled",
  "limit",
  "config",
] as const;

export type CheckErrorKind = (typeof CHECK_ERROR_KINDS)[number] | "other";

export function checkErrorKind(kind: string): CheckErrorKind {
  return (CHECK_ERROR_KINDS as readonly string[]).includes(kind) ? (kind as CheckErrorKind) : "other";
}

/** Whether agents are offered tool `name` under the allow-list `enabled` (`null`: all). */
export function isToolEnabled(enabled: readonly string[] | null | undefined, name: string): boolean {
  return enabled == null || enabled.includes(name);
}

/**
 * The allow-list after switching tool `name` on or off, given the tools the server lists:
 * `null` (every tool, also ones it adds later) once every listed tool is on. Names the list
 * holds that the server no longer lists are kept.
 */
export function toggleTool(
  enabled: readonly string[] | null | undefined,
  listed: readonly string[],
  name: string,
  on: boolean,
): string[] | null {
  const current = enabled == null ? [...listed] : enabled.filter((n) => n !== name);
  const next = on ? [...current.filter((n) => n !== name), name] : current.filter((n) => n !== name);
  return listed.every((n) => next.includes(n)) ? null : next;
}
