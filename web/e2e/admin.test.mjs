// Administration in the UI: users (create, role, disable, reset a password) and My account
// (change the password, API tokens shown once, listed and revoked).

import assert from "node:assert/strict";
import { eventually, signIn, useServer } from "./harness.mjs";

const flow = useServer();

async function status(server, token) {
  const response = await fetch(`${server.base}/api/me`, { headers: { authorization: `Bearer ${token}` } });
  return response.status;
}

flow(
  "an admin creates a user, changes the role, disables and enables the account",
  async ({ page, server }) => {
    await signIn(page);
    await page.getByTestId("nav-users").click();
    await page.getByTestId("new-user-name").fill("mei");
    await page.getByTestId("new-user-password").fill("mei-password-123");
    await page.getByTestId("new-user-create").click();
    await page.getByTestId("new-user-done").waitFor();
    await page.getByTestId("user-row-mei").waitFor();

    // Her session works until she is disabled, and fails at once after.
    const login = await fetch(`${server.base}/api/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ username: "mei", password: "mei-password-123" }),
    }).then((r) => r.json());
    assert.equal(await status(server, login.token), 200);

    await page.getByTestId("user-role-mei").selectOption("admin");
    await eventually(async () => {
      const users = await server.api("GET", "/api/users");
      assert.equal(users.find((u) => u.username === "mei").role, "admin");
    });

    await page.getByTestId("user-toggle-mei").click();
    await eventually(async () =>
      assert.match(await page.getByTestId("user-state-mei").textContent(), /disabled/),
    );
    // Refused at once: the account is disabled (403), not the token unknown.
    assert.equal(await status(server, login.token), 403);
    await page.getByTestId("user-toggle-mei").click();
    await eventually(async () =>
      assert.match(await page.getByTestId("user-state-mei").textContent(), /active/),
    );
    assert.equal(await status(server, login.token), 200);

    // The admin cannot disable themselves: the control is off.
    assert.ok(await page.getByTestId("user-toggle-admin").isDisabled());
  },
);

flow("an admin resets a password; the user signs in with the new one", async ({ page, server }) => {
  await server.api("POST", "/api/users", { username: "bo", password: "bo-password-1234", role: "user" });
  await signIn(page);
  await page.goto("/admin/users");
  await page.getByTestId("user-reset-bo").click();
  await page.getByTestId("reset-password-input").fill("short");
  await page.getByTestId("reset-password-save").click();
  await page.getByTestId("reset-password-error").waitFor();
  await page.getByTestId("reset-password-input").fill("bo-new-password-99");
  await page.getByTestId("reset-password-save").click();
  await page.getByTestId("reset-password-done").waitFor();
  await page.getByTestId("reset-password").getByRole("button", { name: "Close" }).click();

  await page.getByTestId("user-menu").click();
  await page.getByTestId("logout").click();
  await signIn(page, "bo", "bo-new-password-99");
  // A non-admin has no Users page in the navigation.
  assert.equal(await page.getByTestId("nav-users").count(), 0);
});

flow(
  "My account: change the password, create a token shown once, revoke it",
  async ({ page, server, context }) => {
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.base });
    await server.api("POST", "/api/users", { username: "yan", password: "yan-password-1234", role: "user" });
    await signIn(page, "yan", "yan-password-1234");
    await page.getByTestId("user-menu").click();
    await page.getByTestId("nav-account").click();

    await page.getByTestId("password-current").fill("not-my-password");
    await page.getByTestId("password-new").fill("yan-password-5678");
    await page.getByTestId("password-repeat").fill("yan-password-5678");
    await page.getByTestId("password-save").click();
    await page.getByTestId("password-error").waitFor();
    await page.getByTestId("password-current").fill("yan-password-1234");
    await page.getByTestId("password-save").click();
    await page.getByTestId("password-done").waitFor();

    await page.getByTestId("token-name").fill("ci-script");
    await page.getByTestId("token-expiry").selectOption("30");
    await page.getByTestId("token-create").click();
    const secret = (await page.getByTestId("token-secret").textContent()).trim();
    assert.equal(await status(server, secret), 200);
    await page.getByTestId("token-copy").click();
    await eventually(async () =>
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), secret),
    );
    await page.getByTestId("token-row-ci-script").waitFor();

    // Shown once: after a reload the list has the token but not its secret.
    await page.reload();
    await page.getByTestId("token-row-ci-script").waitFor();
    assert.equal(await page.getByTestId("token-secret").count(), 0);
    assert.doesNotMatch(await page.locator("main").textContent(), new RegExp(secret));

    await page.getByTestId("token-revoke-ci-script").click();
    await page.getByTestId("confirm-delete").click();
    await page.getByTestId("token-row-ci-script").waitFor({ state: "detached" });
    assert.equal(await status(server, secret), 401);

    // The new password works; the old one does not.
    await page.getByTestId("user-menu").click();
    await page.getByTestId("logout").click();
    await page.getByTestId("login-username").fill("yan");
    await page.getByTestId("login-password").fill("yan-password-1234");
    await page.getByTestId("login-submit").click();
    await page.getByTestId("login-error").waitFor();
    await signIn(page, "yan", "yan-password-5678");
  },
);
