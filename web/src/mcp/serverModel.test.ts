import { describe, expect, test } from "vitest";
import { ApiError } from "../api/errors";
import type { McpServerView } from "../api/types";
import {
  alwaysSecretHeader,
  buildMcpWrite,
  checkErrorKind,
  clearEdited,
  emptyMcpForm,
  errorsFromFailure,
  fieldForPath,
  formFromServer,
  isToolEnabled,
  lines,
  mcpServerUrl,
  newRow,
  rowField,
  sortServers,
  toggleTool,
  transportTarget,
  valueChanges,
  type McpFormState,
  type ValueRow,
} from "./serverModel";

function view(patch: Partial<McpServerView>): McpServerView {
  return {
    id: "s1",
    slug: "everything",
    name: "Everything",
    description: "",
    transport: {
      type: "streamable_http",
      url: "http://127.0.0.1:3001/mcp",
      headers: [
        { name: "authorization", secret: true },
        { name: "x-team", secret: false, value: "blue" },
      ],
    },
    enabled_tools: null,
    share_config: { visibility: "private", user_ids: [], manager_ids: [] },
    owner_id: "u1",
    can_manage: true,
    can_delete: true,
    created_at: "2026-01-01T00:00:00Z",
    updated_at: "2026-01-01T00:00:00Z",
    ...patch,
  };
}

const stdio = view({
  slug: "files",
  transport: {
    type: "stdio",
    command: "npx",
    args: ["-y", "@modelcontextprotocol/server-filesystem", "/home/gem/user-data"],
    env: [
      { name: "TOKEN", secret: true },
      { name: "MODE", secret: false, value: "fast" },
    ],
    cwd: null,
    network: true,
  },
});

function form(patch: Partial<McpFormState>): McpFormState {
  return {
    ...emptyMcpForm(),
    name: "Everything",
    slug: "everything",
    url: "http://127.0.0.1:3001/mcp",
    ...patch,
  };
}

function row(patch: Partial<ValueRow>): ValueRow {
  return { ...newRow(), ...patch };
}

function write(state: McpFormState, original: McpServerView | null = null) {
  const built = buildMcpWrite(state, original);
  if (!built.ok) throw new Error(`unexpected errors ${JSON.stringify(built.errors)}`);
  return built.write;
}

describe("MCP servers in the list", () => {
  test("a stdio server shows its command line, an HTTP server its URL", () => {
    expect(transportTarget(stdio.transport)).toBe(
      "npx -y @modelcontextprotocol/server-filesystem /home/gem/user-data",
    );
    expect(transportTarget(view({}).transport)).toBe("http://127.0.0.1:3001/mcp");
    expect(
      transportTarget({ type: "stdio", command: "node", args: ["a b", "it's"], env: [], network: false }),
    ).toBe(`node 'a b' 'it'\\''s'`);
  });

  test("a server's page is found by its id", () => {
    expect(mcpServerUrl({ id: "0190-ab" })).toBe("/mcp-servers/0190-ab");
  });

  test("servers are listed by slug", () => {
    expect(sortServers([view({ slug: "b" }), view({ slug: "a" })]).map((s) => s.slug)).toEqual(["a", "b"]);
  });

  test("lines drop blanks and trim", () => {
    expect(lines(" -y \n\n  pkg  \n")).toEqual(["-y", "pkg"]);
  });
});

describe("the MCP server form", () => {
  test("a new server starts as Streamable HTTP with every tool, private", () => {
    const body = write(form({}));
    expect(body).toEqual({
      slug: "everything",
      name: "Everything",
      description: "",
      transport: { type: "streamable_http", url: "http://127.0.0.1:3001/mcp" },
      enabled_tools: null,
      share_config: { visibility: "private" },
    });
  });

  test("a stdio server sends its command, one argument per line, cwd, network and new variables", () => {
    const body = write(
      form({
        transport: "stdio",
        command: " npx ",
        args: "-y\n@modelcontextprotocol/server-everything\n",
        cwd: "",
        network: true,
        env: [row({ name: "API_KEY", value: "k-1", secret: true }), row({ name: "MODE", value: "slow" })],
      }),
    );
    expect(body.transport).toEqual({
      type: "stdio",
      command: "npx",
      args: ["-y", "@modelcontextprotocol/server-everything"],
      cwd: null,
      network: true,
      env: { API_KEY: { secret: "k-1" }, MODE: "slow" },
    });
  });

  test("a stored server loads into the form with its secrets only as set", () => {
    const state = formFromServer(
      view({ enabled_tools: ["echo", "add"], share_config: { visibility: "public" } }),
    );
    expect(state.url).toBe("http://127.0.0.1:3001/mcp");
    expect(state.headers.map((r) => [r.name, r.value, r.secret])).toEqual([
      ["authorization", "", true],
      ["x-team", "blue", false],
    ]);
    expect(state.allTools).toBe(false);
    expect(state.tools).toBe("echo\nadd");
    expect(state.shared).toBe(true);
    const files = formFromServer(stdio);
    expect(files.args).toBe("-y\n@modelcontextprotocol/server-filesystem\n/home/gem/user-data");
    expect(files.env.map((r) => r.name)).toEqual(["TOKEN", "MODE"]);
  });

  test("an unchanged edit resends no value: the server keeps its secrets", () => {
    const original = view({});
    const body = write(formFromServer(original), original);
    expect(body.transport).toEqual({ type: "streamable_http", url: "http://127.0.0.1:3001/mcp" });
    expect(body.enabled_tools).toBeNull();
    const files = write(formFromServer(stdio), stdio);
    expect(files.transport).not.toHaveProperty("env");
  });

  test("removing a stored value sends null; a changed or replaced value is sent", () => {
    const original = view({});
    const state = formFromServer(original);
    const [auth, team] = state.headers as [ValueRow, ValueRow];
    const body = write(
      { ...state, headers: [{ ...team, value: "red" }, row({ name: "X-Extra", value: "1" })] },
      original,
    );
    expect(body.transport).toEqual({
      type: "streamable_http",
      url: "http://127.0.0.1:3001/mcp",
      headers: { "x-team": "red", "X-Extra": "1", authorization: null },
    });
    const replaced = write({ ...state, headers: [{ ...auth, value: "Bearer new" }, team] }, original);
    expect(replaced.transport).toEqual({
      type: "streamable_http",
      url: "http://127.0.0.1:3001/mcp",
      headers: { authorization: { secret: "Bearer new" } },
    });
  });

  test("a plain value turned secret is sent as a secret; a secret turns plain only with a value", () => {
    const { changes, errors } = valueChanges(
      formFromServer(stdio).env.map((r) => (r.name === "MODE" ? { ...r, secret: true } : r)),
      stdio.transport.type === "stdio" ? stdio.transport.env : [],
      "env",
    );
    expect(changes).toEqual({ MODE: { secret: "fast" } });
    expect(errors).toEqual({});

    const plain = formFromServer(stdio).env.map((r) => (r.name === "TOKEN" ? { ...r, secret: false } : r));
    const built = buildMcpWrite({ ...formFromServer(stdio), env: plain }, stdio);
    expect(built.ok).toBe(false);
    if (!built.ok) expect(built.errors[rowField(plain[0]!)]).toMatch(/Type its value/);
  });

  test("a header the server always keeps secret is sent as a secret", () => {
    expect(alwaysSecretHeader(" Authorization ")).toBe(true);
    expect(alwaysSecretHeader("X-Api-Key")).toBe(true);
    expect(alwaysSecretHeader("X-Team")).toBe(false);
    const body = write(form({ headers: [row({ name: "Authorization", value: "Bearer t" })] }));
    expect(body.transport).toMatchObject({ headers: { Authorization: { secret: "Bearer t" } } });
  });

  test("a new row replacing a removed stored one of the same name is one change, not two", () => {
    const original = view({});
    const state = formFromServer(original);
    const body = write(
      { ...state, headers: [state.headers[1]!, row({ name: "Authorization", value: "Bearer x" })] },
      original,
    );
    expect(body.transport).toMatchObject({ headers: { Authorization: { secret: "Bearer x" } } });
    expect(body.transport).not.toMatchObject({ headers: { authorization: null } });
  });

  test("a row without a name, or a name twice, is an error at that row before any request", () => {
    const nameless = row({ value: "v" });
    const twice = row({ name: "x-team", value: "2" });
    const built = buildMcpWrite(
      form({ headers: [row({ name: "X-Team", value: "1" }), twice, nameless, row({})] }),
      null,
    );
    expect(built.ok).toBe(false);
    if (!built.ok) {
      expect(Object.keys(built.errors).sort()).toEqual([rowField(nameless), rowField(twice)].sort());
      expect(built.errors[rowField(twice)]).toMatch(/twice/);
    }
  });

  test("switching the transport of a stored server sends the new one without the old values", () => {
    const original = view({});
    const body = write(
      { ...formFromServer(original), transport: "stdio", command: "uvx", args: "mcp-server-time" },
      original,
    );
    expect(body.transport).toEqual({
      type: "stdio",
      command: "uvx",
      args: ["mcp-server-time"],
      cwd: null,
      network: false,
    });
  });

  test("only the listed tools are sent when not all are offered; sharing keeps the stored lists", () => {
    const original = view({ share_config: { visibility: "users", user_ids: ["u2"], manager_ids: [] } });
    const body = write({ ...formFromServer(original), allTools: false, tools: "echo\n add \n" }, original);
    expect(body.enabled_tools).toEqual(["echo", "add"]);
    expect(body.share_config).toEqual({ visibility: "users", user_ids: ["u2"], manager_ids: [] });
    expect(write({ ...formFromServer(original), shared: true }, original).share_config?.visibility).toBe(
      "public",
    );
  });
});

describe("server errors in the MCP server form", () => {
  const state = form({
    transport: "stdio",
    env: [row({ key: "a", name: "API_KEY" })],
    headers: [row({ key: "h", name: "X-Team" })],
  });

  test("each payload path is shown at its field, a value at its row", () => {
    expect(fieldForPath("slug", state)).toBe("slug");
    expect(fieldForPath("enabled_tools[3]", state)).toBe("enabled-tools");
    expect(fieldForPath("transport.type", state)).toBe("transport");
    expect(fieldForPath("transport.command", state)).toBe("command");
    expect(fieldForPath("transport.args[1]", state)).toBe("args");
    expect(fieldForPath("transport.cwd", state)).toBe("cwd");
    expect(fieldForPath("transport.url", state)).toBe("url");
    expect(fieldForPath("transport.env", state)).toBe("env");
    expect(fieldForPath("transport.env.API_KEY", state)).toBe("row-a");
    expect(fieldForPath("transport.env.OTHER", state)).toBe("env");
    expect(fieldForPath("transport.headers.x-team", state)).toBe("row-h");
    expect(fieldForPath("share_config.user_ids[0]", state)).toBe("share");
    expect(fieldForPath("transport", state)).toBe("transport");
    expect(fieldForPath("something_else", state)).toBeNull();
  });

  test("a 422 is shown at its field and summed up; a 403 on stdio at the transport", () => {
    const failure = new ApiError(422, "validation_failed", "must start with http://", "transport.url");
    const shown = errorsFromFailure(failure, state);
    expect(shown.fields).toEqual({ url: "must start with http://" });
    expect(shown.form).toMatch(/check the marked field/);
    const forbidden = new ApiError(403, "forbidden", "only admins add stdio servers", "transport.type");
    expect(Object.keys(errorsFromFailure(forbidden, state).fields)).toEqual(["transport"]);
    expect(errorsFromFailure(new Error("boom"), state)).toEqual({ fields: {}, form: "boom" });
  });

  test("editing a field or a row clears its error", () => {
    const before = state;
    const errors = { url: "bad", "row-a": "bad value", env: "too many", slug: "taken" };
    expect(clearEdited(errors, { url: "http://x" }, before)).toEqual({
      "row-a": "bad value",
      env: "too many",
      slug: "taken",
    });
    const env = [{ ...before.env[0]!, value: "new" }];
    expect(clearEdited(errors, { env }, before)).toEqual({ url: "bad", slug: "taken" });
    expect(clearEdited(errors, { env: [] }, before)).toEqual({ url: "bad", slug: "taken" });
  });
});

describe("a connection check", () => {
  test("known failure kinds are worded by the UI, others are generic", () => {
    expect(checkErrorKind("unreachable")).toBe("unreachable");
    expect(checkErrorKind("config")).toBe("config");
    expect(checkErrorKind("refused_address")).toBe("refused_address");
    expect(checkErrorKind("http_status")).toBe("http_status");
    expect(checkErrorKind("something-new")).toBe("other");
  });

  test("null offers every tool; a list only those", () => {
    expect(isToolEnabled(null, "echo")).toBe(true);
    expect(isToolEnabled(undefined, "echo")).toBe(true);
    expect(isToolEnabled(["add"], "echo")).toBe(false);
  });

  test("switching tools off makes a list, switching the last one on again means all", () => {
    const listed = ["echo", "add", "sleep"];
    const off = toggleTool(null, listed, "sleep", false);
    expect(off).toEqual(["echo", "add"]);
    expect(toggleTool(off, listed, "add", false)).toEqual(["echo"]);
    expect(toggleTool(["echo"], listed, "sleep", true)).toEqual(["echo", "sleep"]);
    expect(toggleTool(["echo", "add"], listed, "sleep", true)).toBeNull();
    expect(toggleTool(["echo"], listed, "echo", false)).toEqual([]);
  });

  test("names the server no longer lists stay in the list", () => {
    expect(toggleTool(["gone", "echo"], ["echo", "add"], "echo", false)).toEqual(["gone"]);
  });
});
