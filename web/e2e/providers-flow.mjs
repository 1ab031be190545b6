// The first hour, shared by the English and the Chinese test files: a fresh server with no
// provider; a non-admin sees whom to ask; the admin connects a local OpenAI-compatible server
// through the UI (a wrong key first, told in words), and the chat answers through it.
import assert from "node:assert/strict";
import { after, before } from "node:test";
import { eventually, signIn, useServer } from "./harness.mjs";
import { startOpenAiServer } from "./openai-server.mjs";

export function firstHourFlows({ locale, text }) {
  const flow = useServer();
  let model;
  before(async () => {
    model = await startOpenAiServer({ answer: () => text.answer });
  });
  after(async () => {
    await model?.close();
  });

  flow(
    "with no model connected, a non-admin is told to ask an admin",
    async ({ page, server }) => {
      await server.api("POST", "/api/users", {
        username: "reader",
        password: "reader-password-1",
        role: "user",
      });
      await signIn(page, "reader", "reader-password-1");
      const card = page.getByTestId("setup-card");
      await card.waitFor();
      assert.match(await card.textContent(), text.askAdmin);
      assert.equal(await page.getByTestId("setup-connect").count(), 0);
    },
    { locale },
  );

  flow(
    "the admin connects a local model through the UI and gets an answer in the chat",
    async ({ page, server }) => {
      await signIn(page);
      await page.getByTestId("setup-card").waitFor();
      await page.getByTestId("setup-connect").click();
      await page.getByTestId("provider-preset").selectOption("ollama");
      assert.equal(await page.getByTestId("provider-url").inputValue(), "http://127.0.0.1:11434/v1");
      await page.getByTestId("provider-name").fill("local");
      await page.getByTestId("provider-url").fill(model.url);
      await page.getByTestId("provider-models").fill("local-chat");

      // A wrong key is told as such, in the page's language.
      await page.getByTestId("provider-key").fill("sk-wrong");
      await page.getByTestId("provider-test").click();
      const refused = page.getByTestId("provider-test-error");
      await refused.waitFor();
      assert.equal(await refused.getAttribute("data-kind"), "bad_key");
      assert.match(await refused.textContent(), text.badKey);

      await page.getByTestId("provider-key").fill("sk-test-key");
      await page.getByTestId("provider-test").click();
      await page.getByTestId("provider-test-ok").waitFor();
      await page.getByTestId("provider-save").click();

      // Back in the chat with a ready Assistant on the new default model.
      await page.waitForURL(/\/chat$/);
      await eventually(async () =>
        assert.equal(
          await page.getByTestId("agent-switch").locator("option:checked").textContent(),
          text.assistant,
        ),
      );
      await page.getByTestId("chat-input").fill(text.question);
      await page.getByTestId("chat-send").click();
      await page.waitForURL(/\/chat\/[^/]+$/);
      await page.getByTestId("message-assistant").filter({ hasText: text.answer }).waitFor();
      await eventually(async () =>
        assert.equal(await page.getByTestId("run-status").getAttribute("data-status"), "success"),
      );

      const chat = model.requests.find(
        (r) => r.body.stream && r.body.messages.some((m) => m.content === text.question),
      );
      assert.ok(chat, "the model got the question");
      assert.equal(chat.body.model, "local-chat");
      assert.equal(chat.headers.authorization, "Bearer sk-test-key");

      // The key is never handed back.
      const providers = await server.api("GET", "/api/model-providers");
      assert.doesNotMatch(JSON.stringify(providers), /sk-test-key/);
      assert.doesNotMatch(server.log(), /sk-test-key/);
    },
    { locale },
  );
}
