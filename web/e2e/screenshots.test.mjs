// Every page rendered with realistic data: login, agents, the agent form, skills and a skill's
// detail, the chat with its Subagents panel, a subagent popup, the Files tab, the users page
// (1280×800), the chat on a phone (390 px), the first-run setup and the Usage page in English
// and Chinese.
//
// The pictures go to a temporary folder; `ARS_UPDATE_SCREENSHOTS=1 npm run e2e` writes them to
// docs/screenshots instead, for the README.

import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after } from "node:test";
import { fileURLToPath } from "node:url";
import {
  eventually,
  scriptedAgent,
  scriptedSubagent,
  signIn,
  startCall,
  taskCall,
  useServer,
} from "./harness.mjs";
import { startOpenAiServer } from "./openai-server.mjs";

const UPDATE = process.env.ARS_UPDATE_SCREENSHOTS === "1";
const OUT = UPDATE
  ? fileURLToPath(new URL("../../docs/screenshots", import.meta.url))
  : mkdtempSync(join(tmpdir(), "ars-screenshots-"));
mkdirSync(OUT, { recursive: true });
after(() => UPDATE || rmSync(OUT, { recursive: true, force: true }));

const flow = useServer();

async function shoot(page, name) {
  await page.emulateMedia({ reducedMotion: "reduce" });
  // Let fonts and the last render settle.
  await page.waitForTimeout(300);
  await page.screenshot({ path: join(OUT, `${name}.png`) });
}

/** Agents worth showing, and a conversation that used three subagents. */
async function seed(server) {
  await scriptedSubagent(
    server,
    "researcher",
    [
      { tool_calls: [{ name: "write_file", arguments: { path: "sources.md", content: "# Sources\n" } }] },
      { text: "Found twelve sources.", delay_ms: 600_000 },
    ],
    {
      name: "Researcher",
      description: "Finds and summarises sources on a topic",
      share_config: { visibility: "public" },
      context: { tools: ["write_file"] },
    },
  );
  await scriptedSubagent(
    server,
    "summarizer",
    [
      {
        tool_calls: [
          {
            name: "write_file",
            arguments: {
              path: "summary.md",
              content: "# Summary\n\nRust's ownership model prevents data races.",
            },
          },
        ],
      },
      { text: "Wrote **summary.md**: ownership and borrowing prevent data races at compile time." },
    ],
    {
      name: "Summarizer",
      description: "Condenses long notes into a short summary",
      context: { tools: ["write_file"] },
    },
  );
  await scriptedSubagent(server, "fact-checker", [{ error: "the source archive is unreachable" }], {
    name: "Fact checker",
    description: "Checks claims against primary sources",
  });
  await scriptedAgent(
    server,
    "writer",
    [
      {
        text: "I'll split this up: research in the background, a fact check, then a summary.",
        tool_calls: [
          startCall("researcher", "Collect sources on Rust's memory safety"),
          startCall("fact-checker", "Check the claim that Rust prevents data races"),
        ],
      },
      { tool_calls: [taskCall("summarizer", "Summarise the notes on ownership")] },
      {
        text:
          "Here is the plan:\n\n1. **Research** keeps collecting sources in the background.\n" +
          "2. The **summary** is ready in `summary.md`.\n3. The fact check failed; I will retry it later.\n\n" +
          "> Ownership and borrowing prevent data races at compile time.",
      },
    ],
    {
      name: "Writer",
      description: "Drafts articles with help from research subagents",
      is_default: true,
      share_config: { visibility: "public" },
      context: {
        system_prompt: "You write clearly.",
        subagents: ["researcher", "summarizer", "fact-checker"],
        subagent_results: "note",
      },
    },
  );
  await scriptedAgent(server, "reviewer", [{ text: "Looks good." }], {
    name: "Reviewer",
    description: "Reviews drafts for clarity and tone",
  });
}

/** Sends the demo request as Writer and waits until the panel shows every child's state. */
async function converse(page) {
  await page.goto("/chat");
  await page.getByTestId("agent-switch").selectOption({ label: "Writer" });
  await page.getByTestId("chat-input").fill("Write a short piece on Rust's memory safety.");
  await page.getByTestId("chat-send").click();
  await page.waitForURL(/\/chat\/[^/]+$/);
  await eventually(async () => {
    const states = await page
      .getByTestId("subagent-entry")
      .evaluateAll((nodes) => Object.fromEntries(nodes.map((n) => [n.dataset.slug, n.dataset.status])));
    assert.deepEqual(states, { researcher: "running", "fact-checker": "error", summarizer: "success" });
  });
  await eventually(async () =>
    assert.equal(await page.getByTestId("run-status").getAttribute("data-status"), "success"),
  );
  // The pictures show the stored conversation (a run that ends while its thread is first loaded
  // is the subject of its own flow in chat.test.mjs).
  await page.reload();
  await page.getByTestId("message-assistant").last().locator("blockquote").waitFor();
}

flow("screenshots of every page at 1280×800", async ({ page, server }) => {
  await seed(server);

  await page.goto("/login");
  await page.getByTestId("login-username").fill("admin");
  await shoot(page, "login");

  await signIn(page);
  await page.getByTestId("nav-agents").click();
  await page.getByTestId("agent-row-writer").waitFor();
  await shoot(page, "agents");

  await page.getByTestId("agent-edit-writer").click();
  await page.getByTestId("field-script").waitFor();
  // From the backend type down: sharing, the default switch and the runtime settings.
  await page.getByTestId("field-backend").evaluate((node) => {
    node.closest("section").scrollIntoView();
    window.scrollBy(0, -64); // clear of the sticky top bar
  });
  await shoot(page, "agent-form");

  // The Skills page lists the built-in skills; a built-in skill's detail renders its SKILL.md.
  await page.getByTestId("nav-skills").click();
  await page.getByTestId("skill-row-csv-data").waitFor();
  await shoot(page, "skills");
  await page.getByTestId("skill-open-csv-data").click();
  await page.getByTestId("skill-body").locator("h1").waitFor();
  await shoot(page, "skill-detail");

  await converse(page);
  await shoot(page, "chat");

  await page.locator('[data-testid="subagent-entry"][data-slug="summarizer"]').click();
  const popup = page.getByTestId("subagent-popup");
  await popup.getByTestId("message-assistant").waitFor();
  await popup.locator('[data-testid="tool-card"] summary').click();
  await shoot(page, "subagent-popup");

  // The shared workdir: the file the researcher wrote, previewed.
  await popup.getByTestId("popup-close").click();
  await page.getByTestId("tab-files").click();
  const sources = page.locator('[data-testid="file-entry"][data-path="sources.md"]');
  await sources.waitFor();
  await sources.getByTestId("file-open").click();
  await page.getByTestId("file-preview").waitFor();
  await shoot(page, "files");

  for (const [username, role] of [
    ["lin.wei", "user"],
    ["grace", "admin"],
  ]) {
    await server.api("POST", "/api/users", { username, password: "a-long-password", role });
  }
  await page.goto("/admin/users");
  await page.getByTestId("user-row-lin.wei").waitFor();
  await shoot(page, "users");
});

flow(
  "screenshot of the chat at 390 px",
  async ({ page }) => {
    await signIn(page);
    // On a phone the thread list is a drawer, opened from its button.
    await page.getByTestId("thread-list-toggle").click();
    const threads = page.getByTestId("thread-item");
    await threads.first().waitFor();
    await shoot(page, "chat-narrow-threads");
    await threads.first().locator("a").click();
    await page.getByTestId("message-assistant").last().waitFor();
    await page.getByTestId("status-toggle").click();
    await page.getByTestId("subagent-panel").waitFor({ state: "visible" });
    await shoot(page, "chat-narrow");
  },
  { viewport: { width: 390, height: 844 } },
);

for (const [locale, suffix] of [
  ["en-US", ""],
  ["zh-CN", "-zh"],
]) {
  flow(
    `screenshots of the first hour (${locale})`,
    async ({ page }) => {
      await signIn(page);
      await page.goto("/chat");
      await page.getByTestId("setup-card").waitFor();
      await shoot(page, `setup${suffix}`);
      await page.getByTestId("setup-connect").click();
      await page.getByTestId("provider-preset").selectOption("ollama");
      await page.getByTestId("provider-models").fill("qwen2.5:7b");
      await shoot(page, `provider-form${suffix}`);
    },
    { locale },
  );
}

/**
 * Once: runs worth a Usage page (after the first hour's pictures, which need no provider yet) —
 * an analyst on the scripted model, and an agent on a local provider with prices.
 */
let usageSeeded;
let usageModel;
after(() => usageModel?.close());
function seedUsage(server) {
  usageSeeded ??= (async () => {
    usageModel = await startOpenAiServer();
    await server.api("POST", "/api/model-providers", {
      name: "cloud",
      base_url: usageModel.url,
      api_key: "sk-test-key",
      models: ["local-chat"],
      prices: { input: 2.5, output: 10 },
    });
    await scriptedAgent(
      server,
      "analyst",
      [{ text: "The report is ready.", usage: { prompt_tokens: 18_400, completion_tokens: 2_300 } }],
      { name: "Analyst" },
    );
    await server.api("POST", "/api/agent", {
      slug: "translator",
      name: "Translator",
      config_json: { context: { model: { provider: "cloud", name: "local-chat" } } },
    });
    for (const agent of ["analyst", "translator"]) {
      const thread = await server.api("POST", "/api/threads", { agent_id: agent });
      const { run } = await server.api("POST", `/api/threads/${thread.id}/runs`, { input: "Go" });
      await eventually(async () =>
        assert.equal((await server.api("GET", `/api/runs/${run.id}`)).status, "success"),
      );
    }
  })();
  return usageSeeded;
}

for (const [locale, suffix] of [
  ["en-US", ""],
  ["zh-CN", "-zh"],
]) {
  flow(
    `screenshot of the Usage page (${locale})`,
    async ({ page, server }) => {
      await seedUsage(server);
      await signIn(page);
      await page.goto("/usage?days=7");
      await page.getByTestId("usage-chart").waitFor();
      await shoot(page, `usage${suffix}`);
    },
    { locale },
  );
}
