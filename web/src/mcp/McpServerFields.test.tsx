import { fireEvent, render, screen } from "@testing-library/react";
import { useState } from "react";
import { describe, expect, test } from "vitest";
import type { McpServerView } from "../api/types";
import { McpServerFields } from "./McpServerFields";
import { emptyMcpForm, formFromServer, type McpFieldErrors, type McpFormState } from "./serverModel";

const stored = {
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
  share_config: { visibility: "private" },
  can_manage: true,
  can_delete: true,
  created_at: "2026-01-01T00:00:00Z",
  updated_at: "2026-01-01T00:00:00Z",
} as McpServerView;

function Harness({
  isAdmin = true,
  original = null,
  errors = {},
}: {
  isAdmin?: boolean;
  original?: McpServerView | null;
  errors?: McpFieldErrors;
}) {
  const [form, setForm] = useState<McpFormState>(() =>
    original ? formFromServer(original) : emptyMcpForm(),
  );
  return (
    <>
      <McpServerFields
        form={form}
        onChange={(patch) => setForm((f) => ({ ...f, ...patch }))}
        errors={errors}
        original={original}
        isAdmin={isAdmin}
      />
      <output data-testid="state">{JSON.stringify(form)}</output>
    </>
  );
}

const state = () => JSON.parse(screen.getByTestId("state").textContent!) as McpFormState;
const input = (testId: string) => screen.getByTestId(testId) as HTMLInputElement;

describe("the MCP server form's fields", () => {
  test("a non-admin gets Streamable HTTP only, and is told why", () => {
    render(<Harness isAdmin={false} />);
    expect(input("mcp-transport-streamable_http").checked).toBe(true);
    expect(input("mcp-transport-stdio").disabled).toBe(true);
    expect(screen.getByTestId("mcp-stdio-admin-only").textContent).toMatch(/Only admins/);
    expect(screen.getByTestId("mcp-field-url")).toBeTruthy();
    expect(screen.queryByTestId("mcp-field-command")).toBeNull();
  });

  test("an admin switches to a command server and gets its fields", () => {
    render(<Harness />);
    expect(screen.queryByTestId("mcp-stdio-admin-only")).toBeNull();
    fireEvent.click(input("mcp-transport-stdio"));
    expect(state().transport).toBe("stdio");
    for (const field of ["command", "args", "cwd", "network", "env"]) {
      expect(screen.getByTestId(`mcp-field-${field}`)).toBeTruthy();
    }
    expect(screen.queryByTestId("mcp-field-url")).toBeNull();
  });

  test("the slug follows a new server's name; a stored server's slug is read-only", () => {
    const { unmount } = render(<Harness />);
    fireEvent.change(input("mcp-field-name"), { target: { value: "My Everything" } });
    expect(input("mcp-field-slug").value).toBe("my-everything");
    unmount();
    render(<Harness original={stored} />);
    expect(input("mcp-field-slug").readOnly).toBe(true);
  });

  test("header rows: a stored secret shows as set, a new row gets a name, value and secret switch", () => {
    render(<Harness original={stored} />);
    expect(input("mcp-headers-name-0").value).toBe("authorization");
    expect(input("mcp-headers-name-0").readOnly).toBe(true);
    expect(input("mcp-headers-value-0").value).toBe("");
    expect(input("mcp-headers-value-0").placeholder).toMatch(/set/);
    expect(input("mcp-headers-value-0").type).toBe("password");
    // Authorization is always secret: the switch is on and locked.
    expect(input("mcp-headers-secret-0").checked).toBe(true);
    expect(input("mcp-headers-secret-0").disabled).toBe(true);
    expect(input("mcp-headers-value-1").value).toBe("blue");

    fireEvent.click(screen.getByTestId("mcp-headers-add"));
    fireEvent.change(input("mcp-headers-name-2"), { target: { value: "X-Token" } });
    fireEvent.change(input("mcp-headers-value-2"), { target: { value: "t-1" } });
    expect(input("mcp-headers-value-2").type).toBe("text");
    fireEvent.click(input("mcp-headers-secret-2"));
    expect(input("mcp-headers-value-2").type).toBe("password");
    expect(state().headers[2]).toMatchObject({ name: "X-Token", value: "t-1", secret: true, stored: null });

    fireEvent.click(screen.getByTestId("mcp-headers-remove-0"));
    expect(state().headers.map((r) => r.name)).toEqual(["x-team", "X-Token"]);
  });

  test("errors are shown at their field and row", () => {
    const original = stored;
    const key = formFromServer(original).headers[1]!.key;
    render(
      <Harness
        original={original}
        errors={{ url: "must start with http://", [`row-${key}`]: "bad value" }}
      />,
    );
    expect(screen.getByTestId("error-url").textContent).toBe("must start with http://");
    expect(input("mcp-field-url").getAttribute("aria-invalid")).toBe("true");
    expect(screen.getByTestId(`error-row-${key}`).textContent).toBe("bad value");
    expect(input("mcp-headers-name-1").getAttribute("aria-invalid")).toBe("true");
  });

  test("tools: every tool by default, or a list of names", () => {
    render(<Harness />);
    expect(input("mcp-tools-all-option").checked).toBe(true);
    expect(screen.queryByTestId("mcp-tools-list")).toBeNull();
    fireEvent.click(input("mcp-tools-some-option"));
    fireEvent.change(screen.getByTestId("mcp-tools-list"), { target: { value: "echo\nadd" } });
    expect(state()).toMatchObject({ allTools: false, tools: "echo\nadd" });
  });
});
