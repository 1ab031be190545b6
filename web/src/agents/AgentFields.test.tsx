import { fireEvent, render, screen } from "@testing-library/react";
import { useState } from "react";
import { describe, expect, test } from "vitest";
import type { Agent, ModelCatalog } from "../api/types";
import { AgentFields } from "./AgentFields";
import { emptyForm, type AgentFormState, type FieldErrors } from "./formModel";

const models: ModelCatalog = {
  providers: [{ name: "scripted", kind: "scripted", models: ["scripted"] }],
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
      catalog={{ models, tools: [{ name: "ls", description: "", parameters: {} }], agents: [subagent] }}
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
