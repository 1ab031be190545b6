import { fireEvent, render, screen } from "@testing-library/react";
import { MemoryRouter, Route, Routes } from "react-router-dom";
import { describe, expect, test, vi } from "vitest";
import { AppRoutes } from "../App";
import i18n from "../i18n";
import { NotFoundPage } from "./NotFoundPage";

vi.mock("../auth/AuthContext", () => {
  const user = { id: "u1", username: "ada", role: "user" };
  return { useUser: () => user, useAuth: () => ({ user, logout: async () => undefined }) };
});

function at(path: string) {
  return render(
    <MemoryRouter initialEntries={[path]}>
      <Routes>
        <Route path="/chat" element={<p data-testid="chat">chat</p>} />
        <Route path="*" element={<NotFoundPage />} />
      </Routes>
    </MemoryRouter>,
  );
}

describe("an address the app has no page for", () => {
  test("says so, names the address, and leads back to the chat", async () => {
    at("/agents/x/nothing-here");
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe("Page not found");
    expect(screen.getByTestId("not-found").querySelector("code")?.textContent).toBe("/agents/x/nothing-here");
    const back = screen.getByRole("link", { name: "Back to the chat" });
    expect(back.getAttribute("href")).toBe("/chat");
    fireEvent.click(back);
    expect(await screen.findByTestId("chat")).toBeTruthy();
  });

  test("in Chinese", async () => {
    await i18n.changeLanguage("zh-CN");
    at("/nope");
    expect(screen.getByRole("heading", { level: 1 }).textContent).toBe("页面不存在");
    expect(screen.getByRole("link", { name: "返回聊天" })).toBeTruthy();
  });

  test("the app shows it, inside the shell, for any address it has no route for", () => {
    render(
      <MemoryRouter initialEntries={["/settings/theme"]}>
        <AppRoutes />
      </MemoryRouter>,
    );
    expect(screen.getByTestId("not-found")).toBeTruthy();
    expect(screen.getByTestId("nav-chat")).toBeTruthy();
  });
});
