import { fireEvent, render, screen } from "@testing-library/react";
import { useState } from "react";
import { describe, expect, test } from "vitest";
import type { KnowledgeBaseView } from "../api/knowledge";
import type { SkillView } from "../api/skills";
import type { Agent, McpServerView, ModelCatalog } from "../api/types";
import { AgentFields } from "./AgentFields";
import { EXAMPLE_SCRIPT } from "./ScriptHelp";
import { emptyForm, formFromAgent, type AgentFormState, type FieldErrors } from "./formModel";

const models: ModelCatalog = {
  providers: [{ name: "scripted", kind: "scripted", source: "builtin", models: ["scripted"] }],
  default_model: null,
};
const subagent = {
  id: "s1",
  slug: "researcher",
  name: "Researcher",
  description: "",
  is_subagent: true,
} as Agent;

function Harness({
  errors = {},
  original = null,
  catalogModels = models,
}: {
  errors?: FieldErrors;
  original?: Agent | null;
  catalogModels?: ModelCatalog;
}) {
  const [form, setForm] = useState<AgentFormState>(() => (original ? formFromAgent(original) : emptyForm()));
  return (
    <AgentFields
      form={form}
      onChange={(patch) => setForm((f) => ({ ...f, ...patch }))}
      errors={errors}
      catalog={{
        models: catalogModels,
        tools: [
          { name: "ls", description: "", parameters: {} },
          { name: "execute", description: "Runs a shell command in the workdir.", parameters: {} },
        ],
        agents: [subagent],
        skills: [],
        mcpServers: [],
        knowledgeBases: [],
      }}
      original={original}
      isAdmin
    />
  );
}

const generalPurpose = {
  id: "gp",
  slug: "general-purpose",
  name: "General purpose",
  description: "Built in",
  backend_id: "SubAgentBackend",
  is_subagent: true,
  is_builtin: true,
  is_default: false,
  share_config: { visibility: "public" },
  config_json: { context: {} },
} as unknown as Agent;

describe("agent form rough edges", () => {
  test("each tool checkbox shows the tool's description", () => {
    render(<Harness />);
    expect(screen.getByTestId("tool-execute-description").textContent).toBe(
      "Runs a shell command in the workdir.",
    );
    expect(screen.queryByTestId("tool-ls-description")).toBeNull();
  });

  test("a built-in agent's slug, backend and sharing are locked, and the form says why", () => {
    render(<Harness original={generalPurpose} />);
    expect((screen.getByTestId("field-slug") as HTMLInputElement).readOnly).toBe(true);
    expect((screen.getByTestId("field-backend") as HTMLSelectElement).disabled).toBe(true);
    expect((screen.getByTestId("field-share-config") as HTMLInputElement).disabled).toBe(true);
    expect(document.body.textContent).toMatch(/the slug stays/);
    expect(document.body.textContent).toMatch(/it stays a subagent/);
  });

  test("an ordinary agent's slug and backend stay editable", () => {
    render(<Harness />);
    expect((screen.getByTestId("field-slug") as HTMLInputElement).readOnly).toBe(false);
    expect((screen.getByTestId("field-backend") as HTMLSelectElement).disabled).toBe(false);
  });

  test("no model with no server default shows a warning; a default model removes it", () => {
    const { unmount } = render(<Harness />);
    expect(screen.getByTestId("no-model-warning").textContent).toMatch(/cannot answer/);
    fireEvent.change(screen.getByTestId("field-model"), { target: { value: "scripted/scripted" } });
    expect(screen.queryByTestId("no-model-warning")).toBeNull();
    unmount();
    render(
      <Harness catalogModels={{ ...models, default_model: { provider: "scripted", name: "scripted" } }} />,
    );
    expect(screen.queryByTestId("no-model-warning")).toBeNull();
  });

  test("the script field documents the script format and fills in a working example", () => {
    render(<Harness />);
    fireEvent.change(screen.getByTestId("field-model"), { target: { value: "scripted/scripted" } });
    const help = screen.getByTestId("script-help");
    for (const word of ["tool_calls", "delay_ms", "{{input}}", "{{last_tool_result}}"]) {
      expect(help.textContent).toContain(word);
    }
    fireEvent.click(screen.getByTestId("script-use-example"));
    expect((screen.getByTestId("field-script") as HTMLTextAreaElement).value).toBe(EXAMPLE_SCRIPT);
    expect(() => JSON.parse(EXAMPLE_SCRIPT)).not.toThrow();
  });
});

describe("agent form fields", () => {
  test("choosing SubAgentBackend hides the subagents field and the default switch", () => {
    render(<Harness />);
    expect(screen.getByTestId("field-subagents")).toBeTruthy();
    expect(screen.getByTestId("subagent-option-researcher")).toBeTruthy();
    expect(screen.getByTestId("field-default")).toBeTruthy();
    fireEvent.change(screen.getByTestId("field-backend"), { target: { value: "SubAgentBackend" } });
    expect(screen.queryByTestId("field-subagents")).toBeNull();
    expect(screen.queryByTestId("field-default")).toBeNull();
  });

  test("the subagents field says that empty means all", () => {
    render(<Harness />);
    expect(screen.getByTestId("field-subagents").textContent).toMatch(/empty means all/);
  });

  test("the script field appears once a scripted model is chosen", () => {
    render(<Harness />);
    expect(screen.queryByTestId("field-script")).toBeNull();
    fireEvent.change(screen.getByTestId("field-model"), { target: { value: "scripted/scripted" } });
    expect(screen.getByTestId("field-script")).toBeTruthy();
  });

  test("server errors are rendered at the field they name", () => {
    render(<Harness errors={{ slug: "slug is already taken", tools: "unknown tool" }} />);
    expect(screen.getByTestId("error-slug").textContent).toBe("slug is already taken");
    expect(screen.getByTestId("field-slug").getAttribute("aria-invalid")).toBe("true");
    expect(screen.getByTestId("error-tools").textContent).toBe("unknown tool");
  });

  test("empty option lists show an empty-state hint", () => {
    render(<Harness />);
    expect(screen.getByTestId("field-skills").textContent).toMatch(/No skills/);
  });
});

describe("agent form skills field", () => {
  const skill = (name: string, source: "builtin" | "shared", shadowed = false) =>
    ({ id: `${source}:${name}`, name, description: `about ${name}`, source, shadowed }) as SkillView;

  function SkillsHarness({ skills }: { skills: SkillView[] | null }) {
    const [form, setForm] = useState<AgentFormState>(emptyForm());
    return (
      <>
        <AgentFields
          form={form}
          onChange={(patch) => setForm((f) => ({ ...f, ...patch }))}
          errors={{}}
          catalog={{ models, tools: [], agents: [], skills, mcpServers: [], knowledgeBases: [] }}
          original={null}
          isAdmin
        />
        <output data-testid="skills-value">{JSON.stringify(form.skills)}</output>
      </>
    );
  }
  const value = () => JSON.parse(screen.getByTestId("skills-value").textContent!) as unknown;

  test("offers each skill name once, plus All, and maps ticks to the stored value", () => {
    render(
      <SkillsHarness
        skills={[
          skill("csv-data", "builtin", true),
          skill("csv-data", "shared"),
          skill("e2e-notes", "shared"),
        ]}
      />,
    );
    const field = screen.getByTestId("field-skills");
    expect(field.querySelectorAll('[data-testid="skill-option-csv-data"]')).toHaveLength(1);
    expect(value()).toBeNull();
    expect(field.textContent).toMatch(/inherits the server default/);

    fireEvent.click(screen.getByTestId("skill-option-e2e-notes"));
    expect(value()).toEqual(["e2e-notes"]);
    fireEvent.click(screen.getByTestId("skill-option-e2e-notes"));
    expect(value()).toEqual([]);
    expect(field.textContent).toMatch(/no skills/);

    fireEvent.click(screen.getByTestId("skill-option-all"));
    expect(value()).toEqual(["*"]);
    expect((screen.getByTestId("skill-option-csv-data") as HTMLInputElement).checked).toBe(true);
    expect((screen.getByTestId("skill-option-csv-data") as HTMLInputElement).disabled).toBe(true);

    fireEvent.click(screen.getByText("Use the server default"));
    expect(value()).toBeNull();
  });

  test("says so when the skills could not be listed, and still offers All", () => {
    render(<SkillsHarness skills={null} />);
    expect(screen.getByTestId("field-skills").textContent).toMatch(/Could not load/);
    expect(screen.getByTestId("skill-option-all")).toBeTruthy();
  });
});

describe("agent form MCP servers field", () => {
  const server = (slug: string, name: string) =>
    ({
      id: `id-${slug}`,
      slug,
      name,
      description: `about ${slug}`,
      transport: { type: "streamable_http", url: "http://127.0.0.1:9/mcp", headers: [] },
    }) as unknown as McpServerView;

  function McpHarness({
    servers,
    stored = null,
  }: {
    servers: McpServerView[] | null;
    stored?: string[] | null;
  }) {
    const [form, setForm] = useState<AgentFormState>({ ...emptyForm(), mcpServers: stored });
    return (
      <>
        <AgentFields
          form={form}
          onChange={(patch) => setForm((f) => ({ ...f, ...patch }))}
          errors={{
            "mcp-servers": stored?.includes("gone") ? "no MCP server `gone` that you can use" : undefined,
          }}
          catalog={{ models, tools: [], agents: [], skills: [], mcpServers: servers, knowledgeBases: [] }}
          original={null}
          isAdmin
        />
        <output data-testid="mcp-value">{JSON.stringify(form.mcpServers)}</output>
      </>
    );
  }
  const value = () => JSON.parse(screen.getByTestId("mcp-value").textContent!) as unknown;

  test("offers each visible server and maps ticks to inherit, a list and none", () => {
    render(<McpHarness servers={[server("weather", "Weather"), server("everything", "Everything")]} />);
    const field = screen.getByTestId("field-mcp-servers");
    expect(field.textContent).toContain("Everything (everything)");
    expect(field.textContent).toMatch(/inherits the server default/);
    expect(value()).toBeNull();

    fireEvent.click(screen.getByTestId("mcp-server-option-everything"));
    expect(value()).toEqual(["everything"]);
    fireEvent.click(screen.getByTestId("mcp-server-option-weather"));
    expect(value()).toEqual(["everything", "weather"]);
    expect(field.textContent).toContain("Only: everything, weather.");

    fireEvent.click(screen.getByTestId("mcp-server-option-everything"));
    fireEvent.click(screen.getByTestId("mcp-server-option-weather"));
    expect(value()).toEqual([]);
    expect(field.textContent).toMatch(/no MCP tools/);

    fireEvent.click(screen.getByText("Use the server default"));
    expect(value()).toBeNull();
    fireEvent.click(screen.getByTestId("mcp-servers-none"));
    expect(value()).toEqual([]);
  });

  test("keeps a stored slug the user cannot see, marked, and shows the server's error there", () => {
    render(<McpHarness servers={[server("everything", "Everything")]} stored={["gone"]} />);
    const option = screen.getByTestId("mcp-server-option-gone") as HTMLInputElement;
    expect(option.checked).toBe(true);
    expect(screen.getByTestId("field-mcp-servers").textContent).toMatch(/gone \(not visible to you\)/);
    expect(screen.getByTestId("error-mcp-servers").textContent).toMatch(/gone/);
  });

  test("says so when there are no servers, or they could not be listed", () => {
    const { unmount } = render(<McpHarness servers={[]} />);
    expect(screen.getByTestId("field-mcp-servers").textContent).toMatch(/No MCP servers yet/);
    unmount();
    render(<McpHarness servers={null} />);
    expect(screen.getByTestId("field-mcp-servers").textContent).toMatch(/Could not load/);
  });
});

describe("agent form knowledge bases field", () => {
  const kb = (slug: string, name: string) =>
    ({
      id: `id-${slug}`,
      slug,
      name,
      description: `about ${slug}`,
      counts: { documents: 2 },
    }) as KnowledgeBaseView;

  function KbHarness({
    bases,
    stored = null,
  }: {
    bases: KnowledgeBaseView[] | null;
    stored?: string[] | null;
  }) {
    const [form, setForm] = useState<AgentFormState>({ ...emptyForm(), knowledgeBases: stored });
    return (
      <>
        <AgentFields
          form={form}
          onChange={(patch) => setForm((f) => ({ ...f, ...patch }))}
          errors={{
            "knowledge-bases": stored?.includes("gone")
              ? "no knowledge base `gone` that you can see"
              : undefined,
          }}
          catalog={{ models, tools: [], agents: [], skills: [], mcpServers: [], knowledgeBases: bases }}
          original={null}
          isAdmin
        />
        <output data-testid="kb-value">{JSON.stringify(form.knowledgeBases)}</output>
      </>
    );
  }
  const value = () => JSON.parse(screen.getByTestId("kb-value").textContent!) as unknown;

  test("offers each visible knowledge base and maps ticks to inherit, a list and none", () => {
    render(<KbHarness bases={[kb("handbook", "Handbook"), kb("shou-ce", "手册")]} />);
    const field = screen.getByTestId("field-knowledge-bases");
    expect(field.textContent).toContain("手册 (shou-ce)");
    expect(field.textContent).toContain("2 documents");
    expect(field.textContent).toMatch(/inherits the server default/);
    expect(value()).toBeNull();

    fireEvent.click(screen.getByTestId("knowledge-base-option-handbook"));
    expect(value()).toEqual(["handbook"]);
    expect(field.textContent).toContain("Only: handbook.");
    fireEvent.click(screen.getByTestId("knowledge-base-option-handbook"));
    expect(value()).toEqual([]);
    expect(field.textContent).toMatch(/searches no knowledge base/);
    fireEvent.click(screen.getByText("Use the server default"));
    expect(value()).toBeNull();
    fireEvent.click(screen.getByTestId("knowledge-bases-none"));
    expect(value()).toEqual([]);
  });

  test("keeps a stored slug the user cannot see, marked, with the server's error there", () => {
    render(<KbHarness bases={[kb("handbook", "Handbook")]} stored={["gone"]} />);
    expect((screen.getByTestId("knowledge-base-option-gone") as HTMLInputElement).checked).toBe(true);
    expect(screen.getByTestId("field-knowledge-bases").textContent).toMatch(/gone \(not visible to you\)/);
    expect(screen.getByTestId("error-knowledge-bases").textContent).toMatch(/gone/);
  });

  test("says so when there are none, or they could not be listed", () => {
    const { unmount } = render(<KbHarness bases={[]} />);
    expect(screen.getByTestId("field-knowledge-bases").textContent).toMatch(/No knowledge bases yet/);
    unmount();
    render(<KbHarness bases={null} />);
    expect(screen.getByTestId("field-knowledge-bases").textContent).toMatch(/Could not load/);
  });
});
