import { act, fireEvent, render, screen } from "@testing-library/react";
import { MemoryRouter, Route, Routes } from "react-router-dom";
import { describe, expect, test, vi } from "vitest";
import i18n from "../i18n";
import { AppShell } from "./AppShell";

vi.mock("../auth/AuthContext", () => ({
  useUser: () => ({ id: "u1", username: "ada", role: "user" }),
  useAuth: () => ({ logout: async () => undefined }),
}));
vi.mock("../api/agents", () => ({ listChatAgents: async () => [] }));

function shell() {
  return render(
    <MemoryRouter initialEntries={["/agents"]}>
      <Routes>
        <Route element={<AppShell />}>
          <Route
            path="*"
            element={
              <main>
                <input data-testid="page-field" aria-label="Name" />
                <textarea data-testid="page-text" aria-label="Text" />
                <button type="button" data-testid="page-button">
                  A button
                </button>
              </main>
            }
          />
        </Route>
      </Routes>
    </MemoryRouter>,
  );
}

const dialog = () => screen.queryByTestId("shortcuts-dialog");
/** Each row of the list as "keys: what they do". */
const rows = () =>
  screen
    .getAllByTestId("shortcut-row")
    .map((row) => `${row.querySelector("dt")?.textContent}: ${row.querySelector("dd")?.textContent}`);

describe("the list of keyboard shortcuts", () => {
  test("? opens it outside a text field; Escape closes it and gives the focus back", () => {
    shell();
    const button = screen.getByTestId("page-button");
    button.focus();
    fireEvent.keyDown(button, { key: "?", shiftKey: true });
    expect(screen.getByRole("dialog", { name: "Keyboard shortcuts" })).toBeTruthy();
    fireEvent.keyDown(document.activeElement!, { key: "Escape" });
    expect(dialog()).toBeNull();
    expect(document.activeElement).toBe(button);
  });

  test("? typed into a text field is only text", () => {
    shell();
    for (const id of ["page-field", "page-text"]) {
      fireEvent.keyDown(screen.getByTestId(id), { key: "?", shiftKey: true });
      expect(dialog()).toBeNull();
    }
  });

  test("names every shortcut, ⌘K on a Mac and Ctrl+K elsewhere", () => {
    const platform = vi.spyOn(navigator, "platform", "get").mockReturnValue("Linux x86_64");
    shell();
    fireEvent.keyDown(document.body, { key: "?" });
    expect(rows()).toEqual([
      "Ctrl+K: Open the command palette: pages, agents, New thread",
      "?: Show this list (outside a text field)",
      "Esc: Close a dialog, a menu or a drawer",
      "Tab: First Tab on a page: skip to its content",
      "Enter: Send the message",
      "Shift+Enter: New line in the message",
      "Esc: Clear the conversation search; cancel editing a message or a title",
      "↑ ↓: Move through the list",
      "Enter: Open the chosen entry",
    ]);
    fireEvent.click(screen.getByRole("button", { name: "Close" }));
    expect(dialog()).toBeNull();

    platform.mockReturnValue("MacIntel");
    fireEvent.keyDown(document.body, { key: "?" });
    expect(rows()[0]).toBe("⌘K: Open the command palette: pages, agents, New thread");
  });

  test("the user menu opens it, and closing it gives the focus to the menu's button", () => {
    shell();
    const menu = screen.getByTestId("user-menu");
    fireEvent.click(menu);
    fireEvent.click(screen.getByTestId("open-shortcuts"));
    expect(screen.queryByRole("menu")).toBeNull();
    expect(dialog()).toBeTruthy();
    fireEvent.keyDown(document.activeElement!, { key: "Escape" });
    expect(dialog()).toBeNull();
    expect(document.activeElement).toBe(menu);
  });

  test("reads in Chinese", async () => {
    await act(() => i18n.changeLanguage("zh-CN"));
    shell();
    fireEvent.keyDown(document.body, { key: "?" });
    expect(screen.getByRole("dialog", { name: "键盘快捷键" })).toBeTruthy();
    expect(rows()).toContain("Shift+Enter: 在消息中换行");
  });
});

describe("the navigation menu (narrow screens)", () => {
  test("its button says whether it is open; Escape closes it and gives the focus back", () => {
    shell();
    const button = screen.getByTestId("nav-menu-toggle");
    expect(button.getAttribute("aria-expanded")).toBe("false");
    expect(button.getAttribute("aria-controls")).toBe("main-nav");
    fireEvent.click(button);
    expect(button.getAttribute("aria-expanded")).toBe("true");
    expect(document.getElementById("main-nav")?.className).toContain("open");
    // The focus goes to the menu's first link.
    expect(document.activeElement).toBe(screen.getByTestId("nav-chat"));
    fireEvent.keyDown(document.activeElement!, { key: "Escape" });
    expect(button.getAttribute("aria-expanded")).toBe("false");
    expect(document.activeElement).toBe(button);
  });

  test("choosing a page closes it", () => {
    shell();
    const button = screen.getByTestId("nav-menu-toggle");
    fireEvent.click(button);
    fireEvent.click(screen.getByTestId("nav-skills"));
    expect(button.getAttribute("aria-expanded")).toBe("false");
    expect(screen.getByTestId("nav-skills").className).toContain("active");
  });

  test("a click elsewhere closes it", () => {
    shell();
    const button = screen.getByTestId("nav-menu-toggle");
    fireEvent.click(button);
    fireEvent.mouseDown(screen.getByTestId("page-button"));
    expect(button.getAttribute("aria-expanded")).toBe("false");
  });
});
