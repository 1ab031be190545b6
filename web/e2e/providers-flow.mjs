// The first hour, shared by the English and the Chinese test files: a fresh server with no
// provider; a non-admin sees whom to ask; the admin connects a local OpenAI-compatible server
// through the UI (a wrong key first, told in one sentence, even on "Save and start chatting"),
// and the chat answers through it; "Fetch from the provider" asks with what the form shows.
import assert from "node:assert/strict";
import { after, before } from "node:test";
import { eventually, signIn, useServer } from "./harness.mjs";
import { startOpenAiServer } from "./openai-server.mjs";

export function firstHourFlows({ locale, text }) {
  const flow = useServer();
  let model;
  let other;
  before(async () => {
    model = await startOpenAiServer({ answer: () => text.answer });
    other = await startOpenAiServer({ models: ["other-large", "other-small"] });
  });
  after(async () => {
    await model?.close();
    await other?.close();
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
      // The Models box is left empty: the provider's own list fills it.
      assert.equal(await page.getByTestId("provider-models").inputValue(), "");

      // A wrong key is told as such, once, in the page's language.
      await page.getByTestId("provider-key").fill("sk-wrong");
      await page.getByTestId("provider-test").click();
      const refused = page.getByTestId("provider-test-error");
      await refused.waitFor();
      assert.equal(await refused.getAttribute("data-kind"), "bad_key");
      assert.equal(await refused.textContent(), text.badKey);

      // Saving with it anyway stays on the saved provider's form, filled, saying why at once.
      await page.getByTestId("provider-save").click();
      await page.waitForURL(/\/providers\/[0-9a-f-]{36}\?setup=1$/);
      const failed = page.getByTestId("provider-test-error");
      await failed.waitFor();
      assert.equal(await failed.textContent(), text.badKey);
      assert.equal(await page.locator("h1").textContent(), text.editTitle);
      assert.equal(await page.getByTestId("provider-name").inputValue(), "local");
      assert.equal(await page.getByTestId("provider-url").inputValue(), model.url);
      assert.match(await page.getByTestId("provider-saved-untested").textContent(), text.savedUntested);
      assert.equal(await page.getByTestId("provider-save").textContent(), text.saveAndChat);

      // The right key: with the Models box still empty, the test asks the provider's first
      // model and fills the box with its list.
      assert.equal(await page.getByTestId("provider-models").inputValue(), "");
      await page.getByTestId("provider-key").fill("sk-test-key");
      await page.getByTestId("provider-test").click();
      const ok = page.getByTestId("provider-test-ok");
      await ok.waitFor();
      assert.match(await ok.textContent(), /local-chat/);
      assert.equal(await page.getByTestId("provider-models").inputValue(), "local-chat");
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

      // One provider, saved twice (never created again), and the key is never handed back.
      const providers = await server.api("GET", "/api/model-providers");
      assert.deepEqual(
        providers.filter((p) => p.source === "database").map((p) => [p.name, p.models]),
        [["local", ["local-chat"]]],
      );
      assert.doesNotMatch(JSON.stringify(providers), /sk-test-key/);
      assert.doesNotMatch(server.log(), /sk-test-key/);
    },
    { locale },
  );

  flow(
    "Fetch from the provider asks with the form as edited, before anything is saved",
    async ({ page, server }) => {
      const stored = await server.api("POST", "/api/model-providers", {
        name: "moving",
        base_url: model.url,
        api_key: "sk-test-key",
        models: ["local-chat"],
      });
      await signIn(page);

      // Editing: the URL typed is the one asked, with the stored key (the key field is empty).
      await page.goto(`/providers/${stored.id}`);
      await page.getByTestId("provider-url").fill(other.url);
      await page.getByTestId("provider-refresh").click();
      await eventually(async () =>
        assert.equal(await page.getByTestId("provider-models").inputValue(), "other-large\nother-small"),
      );
      const unchanged = await server.api("GET", `/api/model-providers/${stored.id}`);
      assert.equal(unchanged.base_url, model.url);
      assert.deepEqual(unchanged.models, ["local-chat"]);

      // A new provider's form fetches too; a wrong key is one sentence next to the box.
      await page.goto("/providers/new");
      await page.getByTestId("provider-url").fill(other.url);
      await page.getByTestId("provider-key").fill("sk-wrong");
      await page.getByTestId("provider-refresh").click();
      const refused = page.getByTestId("provider-fetch-error");
      await refused.waitFor();
      assert.equal(await refused.getAttribute("data-kind"), "bad_key");
      assert.equal(await refused.textContent(), text.badKey);
      await page.getByTestId("provider-key").fill("sk-test-key");
      await page.getByTestId("provider-refresh").click();
      await eventually(async () =>
        assert.equal(await page.getByTestId("provider-models").inputValue(), "other-large\nother-small"),
      );
      assert.equal(await page.getByTestId("provider-fetch-error").count(), 0);
      const names = (await server.api("GET", "/api/model-providers")).map((p) => p.name);
      assert.deepEqual(names.filter((n) => n !== "scripted").sort(), ["local", "moving"]);
    },
    { locale },
  );
}
