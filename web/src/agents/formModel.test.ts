import { describe, expect, test } from "vitest";
import { ApiError } from "../api/errors";
import type { Agent, ModelCatalog } from "../api/types";
import {
  buildWrite,
  clearEdited,
  emptyForm,
  errorsFromFailure,
  fieldForPath,
  formFromAgent,
  showsScript,
  visibleFields,
  type AgentFormState,
} from "./formModel";

const catalog: ModelCatalog = {
  providers: [
    { name: "scripted", kind: "scripted", source: "builtin", models: ["scripted"] },
    {
      name: "openai",
      kind: "openai-compatible",
      source: "config",
      models: ["gpt-4o-mini"],
    },
  ],
  default_model: null,
};

function form(patch: Partial<AgentFormState>): AgentFormState {
  return { ...emptyForm(), name: "Writer", slug: "writer", ...patch };
}

function stored(patch: Partial<Agent>): Agent {
  return {
    id: "a1",
    slug: "writer",
    name: "Writer",
    description: "",
    backend_id: "DefaultBackend",
    is_subagent: false,
    config_json: { context: {} },
    share_config: { visibility: "private", user_ids: [], manager_ids: [] },
    owner_id: "u1",
    is_default: false,
    is_builtin: false,
    created_at: "2026-01-01T00:00:00Z",
    updated_at: "2026-01-01T00:00:00Z",
    ...patch,
  } as Agent;
}

function write(state: AgentFormState, original: Agent | null = null) {
  const built = buildWrite(state, original, catalog);
  if (!built.ok) throw new Error(`unexpected errors ${JSON.stringify(built.errors)}`);
  return built.write;
}

describe("agent form backend type", () => {
  test("SubAgentBackend hides the subagents allow-list and the default switch", () => {
    expect(visibleFields("SubAgentBackend")).toEqual({ subagents: false, isDefault: false });
    expect(visibleFields("normal")).toEqual({ subagents: true, isDefault: true });
  });

  test("a subagent is sent without an allow-list and never as the default", () => {
    const body = write(form({ backend: "SubAgentBackend", subagents: ["general-purpose"], isDefault: true }));
    expect(body.backend_id).toBe("SubAgentBackend");
    expect(body.config_json?.context?.subagents).toBeUndefined();
    expect(body.is_default).toBe(false);
  });

  test("turning the default agent into a subagent sends is_default false explicitly", () => {
    const original = stored({ is_default: true });
    const body = write({ ...formFromAgent(original), backend: "SubAgentBackend" }, original);
    expect(body.is_default).toBe(false);
  });

  test("a normal agent's default flag is sent only when it changes", () => {
    const original = stored({ is_default: true });
    expect(write(formFromAgent(original), original).is_default).toBeUndefined();
    expect(write({ ...formFromAgent(original), isDefault: false }, original).is_default).toBe(false);
    expect(write(form({ isDefault: true })).is_default).toBe(true);
  });

  test("normal maps to DefaultBackend and a stored subagent loads as SubAgentBackend", () => {
    expect(write(form({})).backend_id).toBe("DefaultBackend");
    expect(formFromAgent(stored({ backend_id: "SubAgentBackend", is_subagent: true })).backend).toBe(
      "SubAgentBackend",
    );
  });
});

describe("agent form subagent allow-list", () => {
  test("All (no list) is sent as no list; a stored missing or empty list loads as All", () => {
    expect(emptyForm().subagents).toBeNull();
    expect(write(form({ subagents: null })).config_json?.context).not.toHaveProperty("subagents");
    expect(formFromAgent(stored({})).subagents).toBeNull();
    expect(formFromAgent(stored({ config_json: { context: { subagents: [] } } })).subagents).toBeNull();
    const original = stored({ config_json: { context: { subagents: ["researcher"] } } });
    expect(formFromAgent(original).subagents).toEqual(["researcher"]);
    expect(
      write({ ...formFromAgent(original), subagents: null }, original).config_json?.context,
    ).not.toHaveProperty("subagents");
  });

  test("Only these is sent as chosen", () => {
    expect(write(form({ subagents: ["researcher"] })).config_json?.context?.subagents).toEqual([
      "researcher",
    ]);
  });

  test("Only these with none ticked is refused at the field, not saved as All", () => {
    const built = buildWrite(form({ subagents: [] }), null, catalog);
    expect(built.ok).toBe(false);
    if (!built.ok) expect(built.errors.subagents).toMatch(/at least one subagent/);
    // A subagent has no allow-list: nothing to refuse.
    expect(buildWrite(form({ backend: "SubAgentBackend", subagents: [] }), null, catalog).ok).toBe(true);
  });
});

describe("agent form runtime fields", () => {
  test("the script field shows only for a scripted provider's model", () => {
    expect(showsScript(catalog, "scripted/scripted")).toBe(true);
    expect(showsScript(catalog, "openai/gpt-4o-mini")).toBe(false);
    expect(showsScript(catalog, "")).toBe(false);
  });

  test("the script is sent as parsed JSON on the model", () => {
    const body = write(form({ model: "scripted/scripted", script: '[{"text":"hi"}]' }));
    expect(body.config_json?.context?.model).toEqual({
      provider: "scripted",
      name: "scripted",
      script: [{ text: "hi" }],
    });
  });

  test("a script that is not JSON is an error at the script field, before any request", () => {
    const built = buildWrite(form({ model: "scripted/scripted", script: "[{" }), null, catalog);
    expect(built.ok).toBe(false);
    if (!built.ok) expect(built.errors.script).toMatch(/not valid JSON/);
  });

  test("a model for another provider drops the script", () => {
    const original = stored({
      config_json: { context: { model: { provider: "scripted", name: "scripted", script: [] as never } } },
    });
    const body = write({ ...formFromAgent(original), model: "openai/gpt-4o-mini" }, original);
    expect(body.config_json?.context?.model).toEqual({ provider: "openai", name: "gpt-4o-mini" });
  });

  test("unset lists and limits inherit; an explicit empty tool list is kept", () => {
    const inherited = write(form({})).config_json?.context ?? {};
    expect(inherited.tools).toBeUndefined();
    expect(inherited.limits).toBeUndefined();
    expect(write(form({ tools: [] })).config_json?.context?.tools).toEqual([]);
  });

  test("limits must be whole numbers above zero", () => {
    const built = buildWrite(form({ maxSteps: "0", timeout: "ten" }), null, catalog);
    expect(built.ok ? {} : built.errors).toMatchObject({
      "max-steps": expect.any(String),
      timeout: expect.any(String),
    });
    expect(write(form({ maxSteps: "12", timeout: "60" })).config_json?.context?.limits).toEqual({
      max_steps: 12,
      timeout_s: 60,
    });
  });

  test("fields the form does not show are kept from the stored agent", () => {
    const original = stored({
      config_json: {
        context: { network: true, model: { provider: "openai", name: "gpt-4o-mini", temperature: 0.2 } },
      },
      share_config: { visibility: "users", user_ids: ["u2"], manager_ids: ["u3"] },
    });
    const body = write(formFromAgent(original), original);
    expect(body.config_json?.context).toMatchObject({ network: true, model: { temperature: 0.2 } });
    expect(body.share_config).toEqual({ visibility: "users", user_ids: ["u2"], manager_ids: ["u3"] });
  });

  test("the share checkbox makes an agent public or private", () => {
    expect(write(form({ shared: true })).share_config?.visibility).toBe("public");
    expect(write(form({ shared: false })).share_config?.visibility).toBe("private");
  });
});

describe("agent form server errors", () => {
  test.each([
    ["slug", "slug"],
    ["name", "name"],
    ["backend_id", "backend"],
    ["is_subagent", "backend"],
    ["is_default", "default"],
    ["share_config.user_ids", "share-config"],
    ["config_json.context.system_prompt", "system-prompt"],
    ["config_json.context.model.provider", "model"],
    ["config_json.context.model.script", "script"],
    ["config_json.context.tools", "tools"],
    ["config_json.context.subagents", "subagents"],
    ["config_json.context.knowledge_bases[1]", "knowledge-bases"],
    ["config_json.context.limits.max_steps", "max-steps"],
    ["config_json.context.limits.timeout_s", "timeout"],
  ])("a 422 naming %s is shown at field %s", (path, field) => {
    expect(fieldForPath(path)).toBe(field);
  });

  test("a path the form does not show has no field", () => {
    expect(fieldForPath("config_json.context.network")).toBeNull();
    expect(fieldForPath("slugs")).toBeNull();
  });

  test("a failure maps to its field and a general message", () => {
    const shown = errorsFromFailure(new ApiError(422, "validation_failed", "must not be empty", "name"));
    expect(shown.fields).toEqual({ name: "must not be empty" });
    expect(shown.form).toContain("must not be empty");
  });

  test("the summary names the field as the form labels it, never the API path", () => {
    const shown = errorsFromFailure(
      new ApiError(
        422,
        "validation_failed",
        "turn 1: unknown field `txt`",
        "config_json.context.model.script",
      ),
    );
    expect(shown.fields).toEqual({ script: "turn 1: unknown field `txt`" });
    expect(shown.form).toBe("Could not save: check Script. turn 1: unknown field `txt`");
    expect(shown.form).not.toContain("config_json");
  });

  test("a failure without a field is only a general message", () => {
    const shown = errorsFromFailure(
      new ApiError(403, "forbidden", "you can use this agent but not manage it"),
    );
    expect(shown.fields).toEqual({});
    expect(shown.form).toContain("not manage it");
  });
});

test("editing a field clears its error and keeps the others", () => {
  expect(clearEdited({ slug: "taken", name: "blank" }, { slug: "writer-2" })).toEqual({ name: "blank" });
  expect(clearEdited({ "max-steps": "bad" }, { maxSteps: "3" })).toEqual({});
});

describe("agent form skills", () => {
  test("a stored skills list loads as it is: not set, all, none or names", () => {
    expect(formFromAgent(stored({})).skills).toBeNull();
    expect(formFromAgent(stored({ config_json: { context: { skills: ["*"] } } })).skills).toEqual(["*"]);
    expect(formFromAgent(stored({ config_json: { context: { skills: [] } } })).skills).toEqual([]);
    expect(formFromAgent(stored({ config_json: { context: { skills: ["csv-data"] } } })).skills).toEqual([
      "csv-data",
    ]);
  });

  test("not set is sent without the key, so the agent inherits the server default", () => {
    const original = stored({ config_json: { context: { skills: ["csv-data"] } } });
    const body = write({ ...formFromAgent(original), skills: null }, original);
    expect(body.config_json?.context).not.toHaveProperty("skills");
  });

  test("['*'], [] and a list of names are sent as they are", () => {
    expect(write(form({ skills: ["*"] })).config_json?.context?.skills).toEqual(["*"]);
    expect(write(form({ skills: [] })).config_json?.context?.skills).toEqual([]);
    expect(write(form({ skills: ["e2e-notes"] })).config_json?.context?.skills).toEqual(["e2e-notes"]);
  });

  test("a server error about a skill is shown at the skills field", () => {
    expect(fieldForPath("config_json.context.skills[0]")).toBe("skills");
  });
});

describe("agent form knowledge bases", () => {
  test("not set, none and a list of slugs load and save as they are", () => {
    expect(formFromAgent(stored({})).knowledgeBases).toBeNull();
    const original = stored({ config_json: { context: { knowledge_bases: ["handbook"] } } });
    expect(formFromAgent(original).knowledgeBases).toEqual(["handbook"]);
    expect(
      write({ ...formFromAgent(original), knowledgeBases: null }, original).config_json?.context,
    ).not.toHaveProperty("knowledge_bases");
    expect(write(form({ knowledgeBases: [] })).config_json?.context?.knowledge_bases).toEqual([]);
    expect(
      write(form({ knowledgeBases: ["handbook", "shou-ce"] })).config_json?.context?.knowledge_bases,
    ).toEqual(["handbook", "shou-ce"]);
  });

  test("the summary of a refused knowledge base names the field as the form labels it", () => {
    const shown = errorsFromFailure(
      new ApiError(
        422,
        "validation_failed",
        "no knowledge base `secret` that you can see",
        "config_json.context.knowledge_bases[0]",
      ),
    );
    expect(shown.fields).toEqual({ "knowledge-bases": "no knowledge base `secret` that you can see" });
    expect(shown.form).toBe(
      "Could not save: check Knowledge bases. no knowledge base `secret` that you can see",
    );
  });
});
