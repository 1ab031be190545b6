// The Agents page and form: creating both kinds of agent, what the chat offers afterwards,
// server validation errors at their field, the resolved context and deletion.

import assert from "node:assert/strict";
import { eventually, scriptedAgent, scriptedSubagent, signIn, useServer } from "./harness.mjs";

const flow = useServer();

/** The agent `slug` as the API stores it. */
async function stored(server, slug) {
  return server.api("GET", `/api/agent/${slug}`);
}

flow("a subagent and a normal agent are created through the form", async ({ page, server }) => {
  await signIn(page);
  await page.getByTestId("nav-agents").click();
  await page.getByTestId("agent-new").click();
  await page.waitForURL("**/agents/new");

  // The subagent: choosing SubAgentBackend hides the default switch and the subagents list.
  await page.getByTestId("field-name").fill("Researcher");
  await page.getByTestId("field-slug").fill("researcher");
  await page.getByTestId("field-description").fill("Finds and summarises sources");
  await page.getByTestId("field-default").waitFor();
  await page.getByTestId("field-subagents").waitFor();
  await page.getByTestId("field-backend").selectOption("SubAgentBackend");
  await page.getByTestId("field-default").waitFor({ state: "detached" });
  await page.getByTestId("field-subagents").waitFor({ state: "detached" });
  await page.getByTestId("field-share-config").check();
  await page.getByTestId("field-system-prompt").fill("You research carefully.");
  await page.getByTestId("tool-read_file").check();
  await page.getByTestId("agent-save").click();
  await page.waitForURL("**/agents");
  await page.getByTestId("agent-row-researcher").getByTestId("subagent-badge").waitFor();

  const researcher = await stored(server, "researcher");
  assert.equal(researcher.backend_id, "SubAgentBackend");
  assert.equal(researcher.is_subagent, true);
  assert.equal(researcher.description, "Finds and summarises sources");
  assert.equal(researcher.share_config.visibility, "public");
  assert.equal(researcher.config_json.context.system_prompt, "You research carefully.");
  assert.deepEqual(researcher.config_json.context.tools, ["read_file"]);

  // The normal agent: the subagents list offers the new subagent ("empty means all").
  await page.getByTestId("agent-new").click();
  await page.getByTestId("field-name").fill("Writer");
  await page.getByTestId("field-slug").fill("writer");
  assert.equal(await page.getByTestId("field-backend").inputValue(), "normal");
  const subagents = page.getByTestId("field-subagents");
  assert.match(await subagents.textContent(), /empty means all/i);
  await subagents.getByTestId("subagent-option-researcher").check();
  await page.getByTestId("field-script").waitFor({ state: "detached" });
  await page.getByTestId("field-model").selectOption("scripted/scripted");
  await page.getByTestId("field-script").fill('[{"text": "Hello {{input}}"}]');
  await page.getByTestId("tool-write_file").check();
  await page.getByTestId("field-max-steps").fill("12");
  await page.getByTestId("field-timeout").fill("90");
  await page.getByTestId("agent-save").click();
  await page.waitForURL("**/agents");
  await page.getByTestId("agent-row-writer").waitFor();
  assert.equal(await page.getByTestId("agent-row-writer").getByTestId("subagent-badge").count(), 0);

  const writer = await stored(server, "writer");
  assert.equal(writer.is_subagent, false);
  const context = writer.config_json.context;
  assert.deepEqual(context.subagents, ["researcher"]);
  assert.deepEqual(context.tools, ["write_file"]);
  assert.deepEqual(context.model, {
    provider: "scripted",
    name: "scripted",
    script: [{ text: "Hello {{input}}" }],
  });
  assert.deepEqual(context.limits, { max_steps: 12, timeout_s: 90 });

  // Editing shows what was saved.
  await page.getByTestId("agent-edit-writer").click();
  assert.equal(await page.getByTestId("field-name").inputValue(), "Writer");
  assert.equal(await page.getByTestId("subagent-option-researcher").isChecked(), true);
  assert.equal(await page.getByTestId("field-model").inputValue(), "scripted/scripted");
  await page.getByTestId("agent-cancel").click();
  await page.waitForURL("**/agents");
});

flow(
  "an agent named in Chinese gets its slug in pinyin and saves",
  async ({ page, server }) => {
    await signIn(page);
    await page.getByTestId("nav-agents").filter({ hasText: "智能体" }).click();
    await page.getByTestId("agent-new").click();
    await page.waitForURL("**/agents/new");
    await page.getByLabel("标识", { exact: true }).waitFor();

    // The slug follows the name word by word, and the user could still edit it.
    await page.getByTestId("field-name").fill("翻译助手");
    assert.equal(await page.getByTestId("field-slug").inputValue(), "fanyi-zhushou");
    assert.equal(await page.getByTestId("field-slug").isEditable(), true);
    await page.getByTestId("agent-save").click();
    await page.waitForURL("**/agents");
    await page.getByTestId("agent-row-fanyi-zhushou").filter({ hasText: "翻译助手" }).waitFor();

    const saved = await stored(server, "fanyi-zhushou");
    assert.equal(saved.name, "翻译助手");
    assert.equal(saved.slug, "fanyi-zhushou");
  },
  { locale: "zh-CN" },
);

flow("the chat quick-switch offers normal agents only", async ({ page, server }) => {
  await scriptedAgent(server, "switch-normal", [{ text: "hi" }], { name: "Switch Normal" });
  await scriptedSubagent(server, "switch-sub", [{ text: "hi" }], { name: "Switch Sub" });
  await signIn(page);
  await page.goto("/chat");
  const switcher = page.getByTestId("agent-switch");
  await eventually(async () => {
    const names = await switcher.locator("option").allTextContents();
    assert.ok(names.includes("Switch Normal"), `normal agent missing from ${names}`);
  });
  const options = await switcher
    .locator("option")
    .evaluateAll((nodes) => nodes.map((o) => ({ value: o.value, text: o.textContent })));
  const agents = await server.api("GET", "/api/agent?include_subagents=true");
  const normal = agents.filter((a) => !a.is_subagent);
  assert.deepEqual(
    options.map((o) => o.value).sort(),
    normal.map((a) => a.id).sort(),
    "every normal agent, by id, and nothing else",
  );
  for (const sub of agents.filter((a) => a.is_subagent)) {
    assert.ok(!options.some((o) => o.value === sub.id || o.text === sub.name), `${sub.slug} offered`);
  }
  const normalAgent = normal.find((a) => a.slug === "switch-normal");
  assert.ok(options.some((o) => o.value === normalAgent.id && o.text === "Switch Normal"));
});

flow("server validation errors are shown at their field", async ({ page, server }) => {
  await scriptedAgent(server, "taken", [{ text: "hi" }]);
  await signIn(page);
  await page.goto("/agents/new");

  // A taken slug: the server's 409 names `slug`.
  await page.getByTestId("field-name").fill("Another");
  await page.getByTestId("field-slug").fill("taken");
  await page.getByTestId("agent-save").click();
  await page.getByTestId("error-slug").waitFor();
  await page.getByTestId("form-error").waitFor();
  assert.match(await page.getByTestId("error-slug").textContent(), /taken/i);
  assert.ok(page.url().endsWith("/agents/new"), "the form stays open");

  // A malformed slug: the server's 422 names `slug` too.
  await page.getByTestId("field-slug").fill("Not A Slug!");
  await page.getByTestId("agent-save").click();
  await page.getByTestId("error-slug").waitFor();
  assert.notEqual((await page.getByTestId("error-slug").textContent()).trim(), "");
  assert.equal(await page.getByTestId("error-name").count(), 0);

  // A missing name is refused at the name field.
  await page.getByTestId("field-slug").fill("fine-slug");
  await page.getByTestId("field-name").fill("");
  await page.getByTestId("agent-save").click();
  await page.getByTestId("error-name").waitFor();

  const slugs = (await server.api("GET", "/api/agent?include_subagents=true")).map((a) => a.slug);
  assert.ok(!slugs.includes("fine-slug") && !slugs.includes("Not A Slug!"), "nothing was saved");
});

flow("after a failed save the first bad field has the focus and is in view", async ({ page }) => {
  await signIn(page);
  await page.goto("/agents/new");
  await page.getByTestId("field-name").fill("Scripted");
  await page.getByTestId("field-slug").fill("scripted-bad");
  await page.getByTestId("field-model").selectOption("scripted/scripted");
  // A script the server refuses: its 422 names `config_json.context.model.script`.
  await page.getByTestId("field-script").fill('[{"txt": "hello"}]');
  await page.getByTestId("field-max-steps").scrollIntoViewIfNeeded();
  await page.getByTestId("agent-save").click();
  await page.getByTestId("error-script").waitFor();
  await eventually(async () =>
    assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), "field-script"),
  );
  const box = await page.getByTestId("field-script").boundingBox();
  assert.ok(
    box && box.y >= 0 && box.y + box.height <= 800,
    `the script field is in view (${JSON.stringify(box)})`,
  );
  const summary = await page.getByTestId("form-error").textContent();
  assert.match(summary, /check Script\./);
  assert.doesNotMatch(summary, /config_json/);
});

flow("the built-in general-purpose subagent keeps its slug and type, and says why", async ({ page }) => {
  await signIn(page);
  await page.goto("/agents");
  await page.getByTestId("agent-edit-general-purpose").click();
  await page.getByTestId("field-slug").waitFor();
  assert.equal(await page.getByTestId("field-slug").getAttribute("readonly"), "");
  assert.ok(await page.getByTestId("field-backend").isDisabled());
  assert.match(await page.locator("main").textContent(), /the slug stays/);
  // What may change still saves.
  await page.getByTestId("field-description").fill("Handles anything, with the server's defaults.");
  await page.getByTestId("agent-save").click();
  await page.waitForURL(/\/agents$/);
});

flow("the resolved context opens from the table, and deleting asks first", async ({ page, server }) => {
  await scriptedAgent(server, "short-lived", [{ text: "hi" }], { context: { system_prompt: "Be brief." } });
  await signIn(page);
  await page.getByTestId("nav-agents").click();
  await page.getByTestId("agent-search").fill("short");
  await eventually(async () => assert.equal(await page.locator('[data-testid^="agent-row-"]').count(), 1));

  await page.getByTestId("agent-resolved-short-lived").click();
  const resolved = page.getByTestId("resolved-context");
  await eventually(async () => assert.match(await resolved.textContent(), /Be brief\./));
  await page.keyboard.press("Escape");
  await resolved.waitFor({ state: "detached" });

  await page.getByTestId("agent-delete-short-lived").click();
  await page.getByTestId("confirm-delete").click();
  await page.getByTestId("agent-row-short-lived").waitFor({ state: "detached" });
  const slugs = (await server.api("GET", "/api/agent?include_subagents=true")).map((a) => a.slug);
  assert.ok(!slugs.includes("short-lived"));
});
