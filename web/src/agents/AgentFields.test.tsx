import { fireEvent, render, screen } from "@testing-library/react";
import { useState } from "react";
import { describe, expect, test } from "vitest";
import type { SkillView } from "../api/skills";
import type { Agent, ModelCatalog } from "../api/types";
import { AgentFields } from "./AgentFields";
import { emptyForm, type AgentFormState, type FieldErrors } from "./formModel";

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

function Harness({ errors = {} }: { errors?: FieldErrors }) {
  const [form, setForm] = useState<AgentFormState>(emptyForm());
  return (
    <AgentFields
      form={form}
      onChange={(patch) => setForm((f) => ({ ...f, ...patch }))}
      errors={errors}
      catalog={{
        models,
        tools: [{ name: "ls", description: "", parameters: {} }],
        agents: [subagent],
        skills: [],
      }}
      original={null}
      isAdmin
    />
  );
}

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
          catalog={{ models, tools: [], agents: [], skills }}
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
