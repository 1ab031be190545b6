// The UI in 简体中文 and English: the browser's language on a first visit, a switch in the user
// menu, the choice remembered per user across reloads and logins.
import assert from "node:assert/strict";
import { signIn, useServer } from "./harness.mjs";

const flow = useServer();

flow(
  "a Chinese browser gets the Chinese UI from the login page on",
  async ({ page }) => {
    await page.goto("/login");
    await page.getByRole("button", { name: "登录" }).waitFor();
    assert.equal(await page.locator("html").getAttribute("lang"), "zh-CN");
    await signIn(page);
    await page.getByTestId("nav-agents").filter({ hasText: "智能体" }).waitFor();
    await page.getByTestId("chat-input").waitFor();
    assert.match(await page.getByTestId("chat-input").getAttribute("placeholder"), /给智能体发消息/);
  },
  { locale: "zh-CN" },
);

flow("the language switch changes the UI at once and is remembered per user", async ({ page, server }) => {
  await server.api("POST", "/api/users", { username: "li", password: "password-li-123", role: "user" });
  await signIn(page);
  await page.getByTestId("nav-agents").filter({ hasText: "Agents" }).waitFor();

  await page.getByTestId("user-menu").click();
  await page.getByTestId("language-switch").selectOption("zh-CN");
  await page.getByTestId("nav-agents").filter({ hasText: "智能体" }).waitFor();
  assert.equal(await page.locator("html").getAttribute("lang"), "zh-CN");

  await page.reload();
  await page.getByTestId("nav-chat").filter({ hasText: "聊天" }).waitFor();

  // Another user in the same browser gets the browser's language, not the admin's choice.
  await page.getByTestId("user-menu").click();
  await page.getByTestId("logout").click();
  await signIn(page, "li", "password-li-123");
  await page.getByTestId("nav-agents").filter({ hasText: "Agents" }).waitFor();

  await page.getByTestId("user-menu").click();
  await page.getByTestId("logout").click();
  await signIn(page);
  await page.getByTestId("nav-agents").filter({ hasText: "智能体" }).waitFor();
});
