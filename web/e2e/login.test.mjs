// Signing in and out.

import assert from "node:assert/strict";
import { ADMIN_PASSWORD, signIn, useServer } from "./harness.mjs";

const flow = useServer();

flow("a wrong password shows login-error and keeps the login page", async ({ page }) => {
  await page.goto("/agents");
  // Signed out, any page leads to the login form.
  await page.getByTestId("login-username").fill("admin");
  await page.getByTestId("login-password").fill("not-the-password");
  await page.getByTestId("login-submit").click();
  await page.getByTestId("login-error").waitFor();
  assert.notEqual((await page.getByTestId("login-error").textContent()).trim(), "");
  assert.equal(await page.getByTestId("nav-chat").count(), 0);
});

flow("logging in opens the app as that user, and logging out returns to the login page", async ({ page }) => {
  await signIn(page, "admin", ADMIN_PASSWORD);
  assert.equal((await page.getByTestId("user-menu").textContent()).trim(), "admin");
  await page.getByTestId("nav-agents").click();
  await page.waitForURL("**/agents");
  await page.getByTestId("agent-row-general-purpose").waitFor();

  // The session survives a reload.
  await page.reload();
  await page.getByTestId("agent-row-general-purpose").waitFor();

  await page.getByTestId("user-menu").click();
  await page.getByTestId("logout").click();
  await page.getByTestId("login-username").waitFor();
  await page.goto("/chat");
  await page.getByTestId("login-username").waitFor();
});

flow("a page load asks for nothing the server does not have, and the page has an icon", async ({ page }) => {
  const missing = [];
  page.on("response", (response) => {
    if (response.status() === 404) missing.push(response.url());
  });
  await page.goto("/login");
  await page.getByTestId("login-username").waitFor();
  await page.waitForLoadState("networkidle");
  assert.deepEqual(missing, []);
  const icon = await page.locator('link[rel="icon"]').getAttribute("href");
  const answer = await page.request.get(icon);
  assert.equal(answer.status(), 200);
  assert.match(answer.headers()["content-type"], /^image\/svg\+xml/);
});
