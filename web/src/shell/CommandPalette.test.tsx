import { act, fireEvent, render, screen, waitFor } from "@testing-library/react";
import { MemoryRouter, Route, Routes, useLocation } from "react-router-dom";
import { describe, expect, test, vi } from "vitest";
import type { Agent } from "../api/types";
import i18n from "../i18n";
import { AppShell } from "./AppShell";

const user = vi.hoisted(() => ({ id: "u1", username: "ada", role: "user" }));
vi.mock("../auth/AuthContext", () => ({
  useUser: () => user,
  useAuth: () => ({ logout: async () => undefined }),
}));
const agents = vi.hoisted(() => [
  { id: "a1", slug: "echo", name: "Echo", is_subagent: false, is_default: true },
  { id: "a2", slug: "writer", name: "Writer", is_subagent: false, is_default: false },
  { id: "a3", slug: "helper", name: "Helper", is_subagent: true, is_default: false },
]);
vi.mock("../api/agents", () => ({ listChatAgents: async () => agents as Agent[] }));
vi.mock("../api", () => ({
  api: { GET: async () => ({ data: { id: "t1", agent_id: "a2" } }) },
  unwrap: async (request: Promise<{ data: unknown }>) => (await request).data,
}));

/** Where the router is: the pages are stand-ins that say their address. */
function Where() {
  const location = useLocation();
  return (
    <main>
      <p data-testid="where">{location.pathname + location.search}</p>
      <input data-testid="page-field" aria-label="A field of the page" />
      {location.pathname === "/confirm" && <div role="dialog" aria-label="Sure?" />}
    </main>
  );
}

function shell(path = "/agents") {
  return render(
    <MemoryRouter initialEntries={[path]}>
      <Routes>
        <Route element={<AppShell />}>
          <Route path="*" element={<Where />} />
        </Route>
      </Routes>
    </MemoryRouter>,
  );
}

const where = () => screen.getByTestId("where").textContent;
const press = (key: string, fields: Partial<KeyboardEventInit> = {}, target: Element = document.body) =>
  fireEvent.keyDown(target, { key, ...fields });
const options = () => screen.queryAllByTestId("palette-item");
const labels = () => options().map((option) => option.querySelector(".palette-label")?.textContent);
const selected = () =>
  options()
    .find((option) => option.getAttribute("aria-selected") === "true")
    ?.querySelector(".palette-label")?.textContent;

async function openPalette(fields: Partial<KeyboardEventInit> = { ctrlKey: true }) {
  press("k", fields);
  const search = await screen.findByTestId("palette-search");
  // The agents are listed once they are loaded.
  await waitFor(() => expect(labels()).toContain("Chat with Writer"));
  return search as HTMLInputElement;
}

describe("the command palette", () => {
  test("Ctrl+K and ⌘K open it with the focus in its search box; Escape closes it and gives the focus back", async () => {
    shell();
    const field = screen.getByTestId("page-field");
    field.focus();
    // Typed in a text field too: Ctrl+K is no character.
    press("k", { ctrlKey: true }, field);
    const search = await screen.findByTestId("palette-search");
    expect(screen.getByRole("dialog", { name: "Command palette" })).toBeTruthy();
    expect(document.activeElement).toBe(search);
    expect(search.getAttribute("role")).toBe("combobox");
    press("Escape", {}, search);
    expect(screen.queryByTestId("command-palette")).toBeNull();
    expect(document.activeElement).toBe(field);

    await openPalette({ metaKey: true });
    // The same key closes it again.
    press("k", { ctrlKey: true });
    expect(screen.queryByTestId("command-palette")).toBeNull();
  });

  test("lists New thread, the pages the user may see, every normal agent's chat and the shortcuts", async () => {
    shell();
    await openPalette();
    expect(labels()).toEqual([
      "New thread",
      "Chat",
      "Agents",
      "Skills",
      "MCP servers",
      "Knowledge",
      "Usage",
      "My account",
      "Chat with Echo",
      "Chat with Writer",
      "Keyboard shortcuts",
    ]);
    // Not an admin: no Providers, no Users; a subagent has no chat of its own.
    expect(labels()).not.toContain("Providers");
    expect(labels()).not.toContain("Chat with Helper");
  });

  test("typing filters the list; the arrow keys move the choice and Enter goes there", async () => {
    shell();
    const search = await openPalette();
    fireEvent.change(search, { target: { value: "wri" } });
    expect(labels()).toEqual(["Chat with Writer"]);
    expect(selected()).toBe("Chat with Writer");
    expect(search.getAttribute("aria-activedescendant")).toBe(options()[0]!.id);
    press("Enter", {}, search);
    expect(screen.queryByTestId("command-palette")).toBeNull();
    expect(where()).toBe("/chat/new?agent=writer");

    const again = await openPalette();
    fireEvent.change(again, { target: { value: "s" } });
    expect(labels()).toEqual(["Agents", "Skills", "MCP servers", "Usage", "Keyboard shortcuts"]);
    expect(selected()).toBe("Agents");
    press("ArrowDown", {}, again);
    expect(selected()).toBe("Skills");
    press("ArrowUp", {}, again);
    press("ArrowUp", {}, again);
    // Up from the first wraps round to the last.
    expect(selected()).toBe("Keyboard shortcuts");
    press("ArrowDown", {}, again);
    expect(selected()).toBe("Agents");
    press("End", {}, again);
    press("ArrowUp", {}, again);
    press("ArrowUp", {}, again);
    press("ArrowUp", {}, again);
    expect(selected()).toBe("Skills");
    press("Enter", {}, again);
    expect(where()).toBe("/skills");
  });

  test("nothing matching says so, and Enter then does nothing", async () => {
    shell();
    const search = await openPalette();
    fireEvent.change(search, { target: { value: "no such thing" } });
    expect(options()).toHaveLength(0);
    expect(screen.getByTestId("palette-empty").textContent).toBe("Nothing matches.");
    press("Enter", {}, search);
    expect(where()).toBe("/agents");
    expect(screen.getByTestId("command-palette")).toBeTruthy();
  });

  test("New thread keeps the open thread's agent, and a click chooses as Enter does", async () => {
    shell("/chat/t1");
    await openPalette();
    await waitFor(() => expect(options()[0]!.querySelector(".palette-hint")?.textContent).toBe("Writer"));
    fireEvent.click(options()[0]!);
    expect(where()).toBe("/chat/new?agent=writer");
  });

  test("Keyboard shortcuts in the palette opens the list of shortcuts", async () => {
    shell();
    const search = await openPalette();
    fireEvent.change(search, { target: { value: "keyboard" } });
    press("Enter", {}, search);
    expect(screen.queryByTestId("command-palette")).toBeNull();
    expect(screen.getByTestId("shortcuts-dialog")).toBeTruthy();
  });

  test("does not open over a dialog of the page's own", () => {
    shell("/confirm");
    press("k", { ctrlKey: true });
    expect(screen.queryByTestId("command-palette")).toBeNull();
  });

  test("speaks Chinese when the UI does", async () => {
    await act(() => i18n.changeLanguage("zh-CN"));
    shell();
    const search = await openPaletteZh();
    expect(screen.getByRole("dialog", { name: "命令面板" })).toBeTruthy();
    fireEvent.change(search, { target: { value: "技能" } });
    expect(labels()).toEqual(["技能"]);
    fireEvent.change(search, { target: { value: "writer" } });
    expect(labels()).toEqual(["与 Writer 聊天"]);
    expect(labels()).not.toContain("Chat with Writer");
  });
});

async function openPaletteZh() {
  press("k", { ctrlKey: true });
  const search = await screen.findByTestId("palette-search");
  await waitFor(() => expect(labels()).toContain("与 Writer 聊天"));
  return search as HTMLInputElement;
}
