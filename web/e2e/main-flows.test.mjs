// The first day's main flows, once in English and once in 简体中文: signing in (and a wrong
// password), creating an agent through the form (and a slug that is taken), chatting with it,
// and a run that hits its time limit. Every message the server answers is shown in the page's
// language: in Chinese no English sentence of the server's reaches the page.

import assert from "node:assert/strict";
import { ADMIN_PASSWORD, eventually, scriptedAgent, signIn, useServer } from "./harness.mjs";

const flow = useServer();

const LOCALES = [
  { locale: "en-US", name: "English" },
  { locale: "zh-CN", name: "简体中文" },
];

/** Asserts `text` is in the flow's language: Chinese holds Chinese and no English sentence. */
function inLanguage(text, locale) {
  const trimmed = text.trim();
  assert.notEqual(trimmed, "", "a message is shown");
  if (locale === "zh-CN") {
    assert.match(trimmed, /[\u4e00-\u9fff]/, `Chinese words: ${trimmed}`);
    // Names and numbers may be Latin; three English words in a row are a sentence.
    assert.doesNotMatch(trimmed, /[A-Za-z]{2,} [A-Za-z]{2,} [A-Za-z]{2,}/, `no English sentence: ${trimmed}`);
  } else {
    assert.doesNotMatch(trimmed, /[\u4e00-\u9fff]/, `English words: ${trimmed}`);
  }
}

for (const { locale, name } of LOCALES) {
  flow(
    `${name}: a wrong password is refused in the page's language, the right one signs in`,
    async ({ page }) => {
      await page.goto("/login");
      await page.getByTestId("login-username").fill("admin");
      await page.getByTestId("login-password").fill("not-the-password");
      await page.getByTestId("login-submit").click();
      await page.getByTestId("login-error").waitFor();
      inLanguage(await page.getByTestId("login-error").textContent(), locale);
      await signIn(page, "admin", ADMIN_PASSWORD);
      assert.equal(await page.locator("html").getAttribute("lang"), locale === "zh-CN" ? "zh-CN" : "en");
    },
    { locale },
  );

  flow(
    `${name}: an agent is created through the form; a taken slug is refused in the page's language`,
    async ({ page, server }) => {
      const slug = `taken-${locale.toLowerCase()}`;
      await scriptedAgent(server, slug, [{ text: "hi" }]);
      await signIn(page);
      await page.goto("/agents/new");
      await page.getByTestId("field-name").fill("Another");
      await page.getByTestId("field-slug").fill(slug);
      await page.getByTestId("agent-save").click();
      await page.getByTestId("error-slug").waitFor();
      inLanguage(await page.getByTestId("error-slug").textContent(), locale);
      inLanguage(await page.getByTestId("form-error").textContent(), locale);

      const fresh = `fresh-${locale.toLowerCase()}`;
      await page.getByTestId("field-slug").fill(fresh);
      await page.getByTestId("agent-save").click();
      await page.waitForURL("**/agents");
      await page.getByTestId(`agent-row-${fresh}`).waitFor();
    },
    { locale },
  );

  flow(
    `${name}: a chat gets its answer, and a run over its time limit says so in the page's language`,
    async ({ page, server }) => {
      const suffix = locale.toLowerCase();
      await scriptedAgent(server, `helper-${suffix}`, [{ text: "Here is the answer." }], {
        name: `Helper ${suffix}`,
      });
      await scriptedAgent(server, `slow-${suffix}`, [{ text: "too late", delay_ms: 30_000 }], {
        name: `Slow ${suffix}`,
        context: { limits: { timeout_s: 1 } },
      });
      await signIn(page);

      const send = async (agentName, input) => {
        await page.goto("/chat");
        const switcher = page.getByTestId("agent-switch");
        await eventually(async () =>
          assert.ok((await switcher.locator("option").allTextContents()).includes(agentName)),
        );
        await switcher.selectOption({ label: agentName });
        await page.getByTestId("chat-input").fill(input);
        await page.getByTestId("chat-send").click();
        await page.waitForURL(/\/chat\/[^/]+$/);
      };

      await send(`Helper ${suffix}`, "你好 hello");
      await page.getByTestId("message-assistant").filter({ hasText: "Here is the answer." }).waitFor();

      await send(`Slow ${suffix}`, "take your time");
      await page.getByTestId("chat-error").waitFor({ timeout: 20_000 });
      const error = await page.getByTestId("chat-error").textContent();
      inLanguage(error, locale);
      assert.match(error, /1/, `the limit is named: ${error}`);
      await eventually(async () =>
        assert.equal(await page.getByTestId("run-status").getAttribute("data-status"), "timeout"),
      );
    },
    { locale },
  );
}
