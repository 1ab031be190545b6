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
  await page.getByTestId("tools-mode-some").check();
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

  // The normal agent: all subagents by default (the new one among them), or only those ticked.
  await page.getByTestId("agent-new").click();
  await page.getByTestId("field-name").fill("Writer");
  await page.getByTestId("field-slug").fill("writer");
  assert.equal(await page.getByTestId("field-backend").inputValue(), "normal");
  const subagents = page.getByTestId("field-subagents");
  assert.equal(await page.getByTestId("subagents-mode-all").isChecked(), true);
  await eventually(async () =>
    assert.match(await page.getByTestId("subagents-resolved").textContent(), /researcher/),
  );
  await page.getByTestId("subagents-mode-some").check();
  await subagents.getByTestId("subagent-option-researcher").check();
  await page.getByTestId("field-script").waitFor({ state: "detached" });
  await page.getByTestId("field-model").selectOption("scripted/scripted");
  await page.getByTestId("field-script").fill('[{"text": "Hello {{input}}"}]');
  await page.getByTestId("tools-mode-some").check();
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

flow(
  "each list field offers its states and shows what it resolves to, in English and 简体中文",
  async ({ page, server }) => {
    await signIn(page);
    await page.goto("/agents/new");
    const resolved = (field) => page.getByTestId(`${field}-resolved`).textContent();
    const checked = (id) => page.getByTestId(id).isChecked();

    // A new agent inherits: the form says what each default is.
    const TOOLS = "ls, read_file, write_file, edit_file, glob, grep, execute";
    await eventually(async () => assert.equal(await resolved("tools"), `Resolves to: ${TOOLS} (7)`));
    assert.equal(await checked("tools-mode-inherit"), true);
    assert.match(
      await page.getByTestId("field-tools").textContent(),
      /Inherit the server default \(ls, read_file, write_file, … \(7 in all\)\)/,
    );
    assert.equal(await page.getByTestId("tool-ls").count(), 0, "no ticks unless Only these");
    assert.equal(await page.getByTestId("tools-mode-all").count(), 0, "tools have no All");
    assert.match(await resolved("skills"), /^Resolves to: .*csv-data, delegate-research/);
    assert.equal(await resolved("knowledge-bases"), "Resolves to: nothing");
    assert.equal(await resolved("mcp-servers"), "Resolves to: nothing");
    assert.equal(await checked("subagents-mode-all"), true);
    assert.equal(await page.getByTestId("subagents-mode-inherit").count(), 0);
    assert.match(await resolved("subagents"), /general-purpose/);

    // Each state, and what it resolves to.
    await page.getByTestId("field-name").fill("States");
    await page.getByTestId("field-slug").fill("states");
    await page.getByTestId("tools-mode-none").check();
    assert.equal(await resolved("tools"), "Resolves to: nothing");
    await page.getByTestId("tools-mode-some").check();
    await page.getByTestId("tool-ls").check();
    await page.getByTestId("tool-execute").check();
    assert.equal(await resolved("tools"), "Resolves to: ls, execute (2)");
    await page.getByTestId("skills-mode-all").check();
    await page.getByTestId("knowledge-bases-mode-none").check();
    await page.getByTestId("subagents-mode-some").check();
    // Only these with nothing ticked is refused, not widened to all.
    await page.getByTestId("agent-save").click();
    await page.getByTestId("error-subagents").waitFor();
    await page.getByTestId("subagent-option-general-purpose").check();
    assert.equal(await resolved("subagents"), "Resolves to: general-purpose (1)");
    await page.getByTestId("agent-save").click();
    await page.waitForURL("**/agents");

    const context = (await stored(server, "states")).config_json.context;
    assert.deepEqual(context.tools, ["ls", "execute"]);
    assert.deepEqual(context.skills, ["*"]);
    assert.deepEqual(context.knowledge_bases, []);
    assert.equal("mcp_servers" in context, false, "inherit sends no list");
    assert.deepEqual(context.subagents, ["general-purpose"]);

    // The same choices read back, in 简体中文.
    await page.getByTestId("user-menu").click();
    await page.getByTestId("language-switch").selectOption("zh-CN");
    await page.getByTestId("nav-agents").filter({ hasText: "智能体" }).waitFor();
    await page.getByTestId("user-menu").click();
    const general = await stored(server, "general-purpose");
    const row = page.getByTestId("agent-row-general-purpose");
    if (general.name === "General purpose") await row.filter({ hasText: "通用" }).waitFor();
    await page.getByTestId("agent-edit-states").click();
    await page.getByTestId("field-tools").waitFor();
    assert.equal(await checked("tools-mode-some"), true);
    assert.equal(await checked("tool-ls"), true);
    assert.equal(await checked("tool-read_file"), false);
    assert.equal(await resolved("tools"), "实际生效：ls, execute（2 项）");
    // The built-in tools' descriptions read in Chinese.
    assert.match(await page.getByTestId("tool-ls-description").textContent(), /^列出目录/);
    assert.equal(await checked("skills-mode-all"), true);
    assert.match(await resolved("skills"), /^实际生效：.*csv-data/);
    assert.equal(await checked("knowledge-bases-mode-none"), true);
    assert.equal(await resolved("knowledge-bases"), "实际生效：无");
    assert.equal(await checked("mcp-servers-mode-inherit"), true);
    assert.match(await page.getByTestId("field-mcp-servers").textContent(), /继承服务器默认值（无）/);
    assert.equal(await checked("subagents-mode-some"), true);
    // The built-in general-purpose subagent, in Chinese while its text is the built-in one.
    const option = page.getByTestId("field-subagents").locator(".list-choice-options li", {
      has: page.getByTestId("subagent-option-general-purpose"),
    });
    if (general.name === "General purpose")
      assert.match(await option.textContent(), /通用 \(general-purpose\)/);
    const description = await page.getByTestId("subagent-option-general-purpose-description").textContent();
    if (general.description.startsWith("Built-in subagent for general tasks")) {
      assert.match(description, /^内置的通用子智能体/);
    } else {
      assert.equal(description, general.description, "an edited description is shown as it is");
    }
    await page.getByTestId("tools-mode-inherit").check();
    assert.equal(
      await resolved("tools"),
      "实际生效：ls, read_file, write_file, edit_file, glob, grep, execute（7 项）",
    );
    await page.getByTestId("agent-cancel").click();
    await page.waitForURL("**/agents");
  },
);
