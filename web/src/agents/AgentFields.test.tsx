import { fireEvent, render, screen } from "@testing-library/react";
import { useState } from "react";
import { afterEach, describe, expect, test } from "vitest";
import i18n from "../i18n";
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
  description:
    "Built-in subagent for general tasks: analysis, research, writing and file work, using the server's default runtime config.",
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
    fireEvent.click(screen.getByTestId("tools-mode-some"));
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
    fireEvent.click(screen.getByTestId("subagents-mode-some"));
    expect(screen.getByTestId("subagent-option-researcher")).toBeTruthy();
    expect(screen.getByTestId("field-default")).toBeTruthy();
    fireEvent.change(screen.getByTestId("field-backend"), { target: { value: "SubAgentBackend" } });
    expect(screen.queryByTestId("field-subagents")).toBeNull();
    expect(screen.queryByTestId("field-default")).toBeNull();
  });

  test("the subagents field offers All or Only these, and says what All resolves to", () => {
    render(<Harness />);
    expect((screen.getByTestId("subagents-mode-all") as HTMLInputElement).checked).toBe(true);
    expect(screen.queryByTestId("subagents-mode-inherit")).toBeNull();
    expect(screen.queryByTestId("subagents-mode-none")).toBeNull();
    expect(screen.getByTestId("subagents-resolved").textContent).toBe("Resolves to: researcher (1)");
    fireEvent.click(screen.getByTestId("subagents-mode-some"));
    expect(screen.getByTestId("subagents-resolved").textContent).toBe("Resolves to: nothing");
    fireEvent.click(screen.getByTestId("subagent-option-researcher"));
    expect(screen.getByTestId("subagents-resolved").textContent).toBe("Resolves to: researcher (1)");
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
    fireEvent.click(screen.getByTestId("skills-mode-some"));
    expect(screen.getByTestId("field-skills").textContent).toMatch(/No skills are installed yet/);
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
          inherited={{ base: { skills: ["*"] }, subagent: {} }}
        />
        <output data-testid="skills-value">{JSON.stringify(form.skills)}</output>
      </>
    );
  }
  const value = () => JSON.parse(screen.getByTestId("skills-value").textContent!) as unknown;

  test("offers inherit, all, none and only these (each skill name once), each stored as the server reads it", () => {
    render(
      <SkillsHarness
        skills={[
          skill("csv-data", "builtin", true),
          skill("csv-data", "shared"),
          skill("e2e-notes", "shared"),
        ]}
      />,
    );
    const resolved = () => screen.getByTestId("skills-resolved").textContent;
    expect(value()).toBeNull();
    expect((screen.getByTestId("skills-mode-inherit") as HTMLInputElement).checked).toBe(true);
    expect(screen.getByLabelText("Inherit the server default (csv-data, e2e-notes)")).toBeTruthy();
    expect(resolved()).toBe("Resolves to: csv-data, e2e-notes (2)");
    expect(screen.queryByTestId("skill-option-e2e-notes")).toBeNull();

    fireEvent.click(screen.getByTestId("skills-mode-some"));
    expect(value()).toEqual([]);
    const field = screen.getByTestId("field-skills");
    expect(field.querySelectorAll('[data-testid="skill-option-csv-data"]')).toHaveLength(1);
    expect(resolved()).toBe("Resolves to: nothing");
    fireEvent.click(screen.getByTestId("skill-option-e2e-notes"));
    expect(value()).toEqual(["e2e-notes"]);
    expect(resolved()).toBe("Resolves to: e2e-notes (1)");
    // Unticking the last one stays on "Only these".
    fireEvent.click(screen.getByTestId("skill-option-e2e-notes"));
    expect(value()).toEqual([]);
    expect((screen.getByTestId("skills-mode-some") as HTMLInputElement).checked).toBe(true);

    fireEvent.click(screen.getByTestId("skills-mode-all"));
    expect(value()).toEqual(["*"]);
    expect(screen.queryByTestId("skill-option-csv-data")).toBeNull();
    expect(resolved()).toBe("Resolves to: csv-data, e2e-notes (2)");

    fireEvent.click(screen.getByTestId("skills-mode-none"));
    expect(value()).toEqual([]);
    expect(resolved()).toBe("Resolves to: nothing");

    fireEvent.click(screen.getByTestId("skills-mode-inherit"));
    expect(value()).toBeNull();
  });

  test("says so when the skills could not be listed, and still offers All", () => {
    render(<SkillsHarness skills={null} />);
    expect(screen.getByTestId("skills-mode-all")).toBeTruthy();
    fireEvent.click(screen.getByTestId("skills-mode-some"));
    expect(screen.getByTestId("field-skills").textContent).toMatch(/Could not load/);
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

  test("offers each visible server and maps the choice to inherit, a list and none", () => {
    render(<McpHarness servers={[server("weather", "Weather"), server("everything", "Everything")]} />);
    const field = screen.getByTestId("field-mcp-servers");
    const resolved = () => screen.getByTestId("mcp-servers-resolved").textContent;
    expect(value()).toBeNull();
    // Not known here: the harness passes no inherited defaults.
    expect(resolved()).toMatch(/could not read/);
    expect(screen.queryByTestId("mcp-servers-mode-all")).toBeNull();

    fireEvent.click(screen.getByTestId("mcp-servers-mode-some"));
    expect(field.textContent).toContain("Everything (everything)");
    fireEvent.click(screen.getByTestId("mcp-server-option-everything"));
    expect(value()).toEqual(["everything"]);
    fireEvent.click(screen.getByTestId("mcp-server-option-weather"));
    expect(value()).toEqual(["everything", "weather"]);
    expect(resolved()).toBe("Resolves to: everything, weather (2)");

    fireEvent.click(screen.getByTestId("mcp-servers-mode-none"));
    expect(value()).toEqual([]);
    expect(resolved()).toBe("Resolves to: nothing");

    fireEvent.click(screen.getByTestId("mcp-servers-mode-inherit"));
    expect(value()).toBeNull();
  });

  test("keeps a stored slug the user cannot see, marked, and shows the server's error there", () => {
    render(<McpHarness servers={[server("everything", "Everything")]} stored={["gone"]} />);
    const option = screen.getByTestId("mcp-server-option-gone") as HTMLInputElement;
    expect(option.checked).toBe(true);
    expect(screen.getByTestId("field-mcp-servers").textContent).toMatch(/gone \(not visible to you\)/);
    expect(screen.getByTestId("error-mcp-servers").textContent).toMatch(/gone/);
  });

  test("says so when there are no servers, or they could not be listed", () => {
    const { unmount } = render(<McpHarness servers={[]} stored={[]} />);
    fireEvent.click(screen.getByTestId("mcp-servers-mode-some"));
    expect(screen.getByTestId("field-mcp-servers").textContent).toMatch(/No MCP servers yet/);
    unmount();
    render(<McpHarness servers={null} stored={[]} />);
    fireEvent.click(screen.getByTestId("mcp-servers-mode-some"));
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
          inherited={{ base: { knowledge_bases: [] }, subagent: {} }}
        />
        <output data-testid="kb-value">{JSON.stringify(form.knowledgeBases)}</output>
      </>
    );
  }
  const value = () => JSON.parse(screen.getByTestId("kb-value").textContent!) as unknown;

  test("offers each visible knowledge base and maps the choice to inherit, a list and none", () => {
    render(<KbHarness bases={[kb("handbook", "Handbook"), kb("shou-ce", "手册")]} />);
    const field = screen.getByTestId("field-knowledge-bases");
    const resolved = () => screen.getByTestId("knowledge-bases-resolved").textContent;
    expect(value()).toBeNull();
    expect(screen.getByLabelText("Inherit the server default (nothing)")).toBeTruthy();
    expect(resolved()).toBe("Resolves to: nothing");

    fireEvent.click(screen.getByTestId("knowledge-bases-mode-some"));
    expect(field.textContent).toContain("手册 (shou-ce)");
    expect(field.textContent).toContain("2 documents");
    fireEvent.click(screen.getByTestId("knowledge-base-option-handbook"));
    expect(value()).toEqual(["handbook"]);
    expect(resolved()).toBe("Resolves to: handbook (1)");
    fireEvent.click(screen.getByTestId("knowledge-bases-mode-none"));
    expect(value()).toEqual([]);
    fireEvent.click(screen.getByTestId("knowledge-bases-mode-inherit"));
    expect(value()).toBeNull();
  });

  test("keeps a stored slug the user cannot see, marked, with the server's error there", () => {
    render(<KbHarness bases={[kb("handbook", "Handbook")]} stored={["gone"]} />);
    expect((screen.getByTestId("knowledge-base-option-gone") as HTMLInputElement).checked).toBe(true);
    expect(screen.getByTestId("field-knowledge-bases").textContent).toMatch(/gone \(not visible to you\)/);
    expect(screen.getByTestId("error-knowledge-bases").textContent).toMatch(/gone/);
  });

  test("says so when there are none, or they could not be listed", () => {
    const { unmount } = render(<KbHarness bases={[]} stored={[]} />);
    fireEvent.click(screen.getByTestId("knowledge-bases-mode-some"));
    expect(screen.getByTestId("field-knowledge-bases").textContent).toMatch(/No knowledge bases yet/);
    unmount();
    render(<KbHarness bases={null} stored={[]} />);
    fireEvent.click(screen.getByTestId("knowledge-bases-mode-some"));
    expect(screen.getByTestId("field-knowledge-bases").textContent).toMatch(/Could not load/);
  });
});

describe("agent form tools: inherit, none or only these, and what it resolves to", () => {
  const TOOLS = ["ls", "read_file", "write_file", "edit_file", "glob", "grep", "execute"];
  const catalogTools = [...TOOLS, "ask_user"].map((name) => ({ name, description: "", parameters: {} }));

  function ToolsHarness({ stored = null }: { stored?: string[] | null }) {
    const [form, setForm] = useState<AgentFormState>({ ...emptyForm(), tools: stored });
    return (
      <>
        <AgentFields
          form={form}
          onChange={(patch) => setForm((f) => ({ ...f, ...patch }))}
          errors={{}}
          catalog={{
            models,
            tools: catalogTools,
            agents: [],
            skills: [],
            mcpServers: [],
            knowledgeBases: [],
          }}
          original={null}
          isAdmin
          inherited={{ base: { tools: TOOLS }, subagent: { tools: ["ls"] } }}
        />
        <output data-testid="tools-value">{JSON.stringify(form.tools)}</output>
      </>
    );
  }
  const value = () => JSON.parse(screen.getByTestId("tools-value").textContent!) as unknown;
  const resolved = () => screen.getByTestId("tools-resolved").textContent;
  const checked = (id: string) => (screen.getByTestId(id) as HTMLInputElement).checked;

  test("not set is Inherit, showing the default; the resolved result follows each choice", () => {
    render(<ToolsHarness />);
    expect(screen.getByRole("group", { name: "Tools" })).toBeTruthy();
    expect(checked("tools-mode-inherit")).toBe(true);
    expect(
      screen.getByLabelText("Inherit the server default (ls, read_file, write_file, … (7 in all))"),
    ).toBeTruthy();
    expect(resolved()).toBe("Resolves to: ls, read_file, write_file, edit_file, glob, grep, execute (7)");
    expect(screen.queryByTestId("tools-mode-all")).toBeNull();
    expect(screen.queryByTestId("tool-ls")).toBeNull();

    fireEvent.click(screen.getByTestId("tools-mode-none"));
    expect(value()).toEqual([]);
    expect(resolved()).toBe("Resolves to: nothing");

    fireEvent.click(screen.getByTestId("tools-mode-some"));
    expect(value()).toEqual([]);
    expect(checked("tools-mode-some")).toBe(true);
    fireEvent.click(screen.getByTestId("tool-ask_user"));
    fireEvent.click(screen.getByTestId("tool-read_file"));
    expect(value()).toEqual(["ask_user", "read_file"]);
    expect(resolved()).toBe("Resolves to: ask_user, read_file (2)");

    fireEvent.click(screen.getByTestId("tools-mode-inherit"));
    expect(value()).toBeNull();
  });

  test("a stored empty list is None and a stored list is Only these", () => {
    const { unmount } = render(<ToolsHarness stored={[]} />);
    expect(checked("tools-mode-none")).toBe(true);
    unmount();
    render(<ToolsHarness stored={["ls"]} />);
    expect(checked("tools-mode-some")).toBe(true);
    expect(checked("tool-ls")).toBe(true);
    expect(checked("tool-execute")).toBe(false);
  });

  test("a subagent inherits the subagent defaults", () => {
    render(<ToolsHarness />);
    fireEvent.change(screen.getByTestId("field-backend"), { target: { value: "SubAgentBackend" } });
    expect(resolved()).toBe("Resolves to: ls (1)");
  });
});

describe("built-in content in 简体中文 in the agent form", () => {
  const LS =
    "List a directory. Paths are relative to the workdir or absolute under /home/gem/user-data or /home/gem/skills.";

  function ZhHarness() {
    const [form, setForm] = useState<AgentFormState>(emptyForm());
    return (
      <AgentFields
        form={form}
        onChange={(patch) => setForm((f) => ({ ...f, ...patch }))}
        errors={{}}
        catalog={{
          models,
          tools: [
            { name: "ls", description: LS, parameters: {} },
            { name: "execute", description: "Changed by a fork.", parameters: {} },
          ],
          agents: [generalPurpose, { ...subagent, description: "Reads things." } as Agent],
          skills: [],
          mcpServers: [],
          knowledgeBases: [],
        }}
        original={null}
        isAdmin
      />
    );
  }

  afterEach(async () => {
    await i18n.changeLanguage("en");
  });

  test("translates the built-in tool and subagent, and keeps other text as it is", async () => {
    await i18n.changeLanguage("zh-CN");
    render(<ZhHarness />);
    fireEvent.click(screen.getByTestId("tools-mode-some"));
    expect(screen.getByTestId("tool-ls-description").textContent).toMatch(/^列出目录/);
    expect(screen.getByTestId("tool-execute-description").textContent).toBe("Changed by a fork.");
    fireEvent.click(screen.getByTestId("subagents-mode-some"));
    const field = screen.getByTestId("field-subagents");
    expect(field.textContent).toContain("通用 (general-purpose)");
    expect(screen.getByTestId("subagent-option-general-purpose-description").textContent).toBe(
      "内置的通用子智能体：分析、调研、写作和文件处理，使用服务器的默认运行配置。",
    );
    // Not the built-in: its name and description are the user's.
    expect(field.textContent).toContain("Researcher (researcher)");
    expect(screen.getByTestId("subagent-option-researcher-description").textContent).toBe("Reads things.");
    expect(screen.getByLabelText("我能看到的全部子智能体，包括以后添加的")).toBeTruthy();
  });
});
