import { fireEvent, render, screen } from "@testing-library/react";
import { MemoryRouter } from "react-router-dom";
import { beforeEach, describe, expect, test, vi } from "vitest";
import i18n from "../i18n";
import { THEME_KEY } from "../lib/theme";
import { UserMenu } from "./UserMenu";

vi.mock("../auth/AuthContext", () => ({
  useUser: () => ({ id: "u1", username: "ada", role: "user" }),
  useAuth: () => ({ logout: async () => undefined }),
}));

function openMenu() {
  render(
    <MemoryRouter>
      <UserMenu />
    </MemoryRouter>,
  );
  fireEvent.click(screen.getByTestId("user-menu"));
  return screen.getByTestId("theme-switch") as HTMLSelectElement;
}

beforeEach(() => {
  delete document.documentElement.dataset.theme;
});

describe("the user menu's theme", () => {
  test("follows the system by default and offers Light and Dark", () => {
    const select = openMenu();
    expect(screen.getByLabelText("Theme")).toBe(select);
    expect(select.value).toBe("system");
    expect([...select.options].map((o) => o.text)).toEqual(["System", "Light", "Dark"]);
  });

  test("a choice applies at once, is remembered, and is shown when the menu opens again", () => {
    let select = openMenu();
    fireEvent.change(select, { target: { value: "dark" } });
    expect(document.documentElement.dataset.theme).toBe("dark");
    expect(window.localStorage.getItem(THEME_KEY)).toBe("dark");

    fireEvent.click(screen.getByTestId("user-menu"));
    fireEvent.click(screen.getByTestId("user-menu"));
    select = screen.getByTestId("theme-switch") as HTMLSelectElement;
    expect(select.value).toBe("dark");

    fireEvent.change(select, { target: { value: "system" } });
    expect(document.documentElement.dataset.theme).toBeUndefined();
    expect(window.localStorage.getItem(THEME_KEY)).toBeNull();
  });

  test("in Chinese", async () => {
    await i18n.changeLanguage("zh-CN");
    const select = openMenu();
    expect(screen.getByLabelText("主题")).toBe(select);
    expect([...select.options].map((o) => o.text)).toEqual(["跟随系统", "浅色", "深色"]);
  });
});
