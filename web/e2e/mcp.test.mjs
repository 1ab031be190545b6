// MCP servers in the browser, against a real `@modelcontextprotocol/server-everything` over
// Streamable HTTP: adding one (a refused URL shown at its field — a plain user's loopback
// address, which only the address the server allows escapes — a secret header kept secret),
// the connection test and its tools, the tools offered to agents, choosing the server in an
// agent's form, a chat whose agent calls its `echo` tool (the tool card names the server), and
// the pages in 简体中文 with no English left.
//
// The server comes from the folder `ARS_TEST_MCP_PEERS` names (its `node_modules` holds
// `@modelcontextprotocol/server-everything`); without it the tests are skipped.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { createServer } from "node:net";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { eventually, scriptedAgent, signIn, useServer } from "./harness.mjs";

const PEERS = process.env.ARS_TEST_MCP_PEERS;
const EVERYTHING = PEERS && join(PEERS, "node_modules/@modelcontextprotocol/server-everything/dist/index.js");

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** server-everything over Streamable HTTP on `port`; `url` is its MCP endpoint. */
async function startEverything(port) {
  const child = spawn(process.execPath, [EVERYTHING, "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output = [];
  child.stdout.on("data", (chunk) => output.push(chunk));
  child.stderr.on("data", (chunk) => output.push(chunk));
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);
  const url = `http://127.0.0.1:${port}/mcp`;
  const deadline = Date.now() + 30_000;
  // Any HTTP answer (a GET without a session is refused) means it listens.
  while (
    !(await fetch(url).then(
      () => true,
      () => false,
    ))
  ) {
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`server-everything did not start\n${Buffer.concat(output).toString("utf8")}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    async close() {
      process.off("exit", killOnExit);
      if (child.exitCode === null) {
        const exited = new Promise((resolve) => child.once("exit", resolve));
        child.kill("SIGTERM");
        await exited;
      }
    },
  };
}

/** The texts of a language file's `mcpField` and `mcp` sections. */
async function mcpTexts(file) {
  const source = await readFile(new URL(`../src/i18n/${file}`, import.meta.url), "utf8");
  const start = source.indexOf("\n  mcpField: {");
  const end = source.indexOf("\n  resolved: {", start);
  assert.ok(start > 0 && end > start, `${file} has its mcpField and mcp sections`);
  return [...source.slice(start, end).matchAll(/:\s*"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]);
}

/**
 * The English of the MCP pages as fragments a Chinese page must not show: the literal parts of
 * each text (without placeholders and markup), long enough to be telling, and not a name a
 * Chinese text holds too (such as Streamable HTTP). A Chinese text without Chinese in it is an
 * English one left untranslated, so it names nothing.
 */
async function englishMcpTexts() {
  const chinese = (await mcpTexts("zh-CN.ts")).filter((text) => /[\u4e00-\u9fff]/.test(text));
  return (await mcpTexts("en.ts"))
    .flatMap((text) => text.split(/\{\{\w+\}\}|<\/?\w+>/))
    .map((part) => part.trim())
    .filter((part) => part.length >= 8 && !chinese.some((zh) => zh.includes(part)));
}

/** What the UI itself says on the page: its text without the data the servers sent. */
function uiText(page) {
  return page.locator("main").evaluate((main) => {
    // Names, URLs, descriptions and messages from the MCP server stay as they are.
    const data =
      "code, pre, .description, .tool-description, .tool-subtitle, [data-testid=mcp-check-server], [data-testid=mcp-check-message]";
    const parts = [];
    const walker = document.createTreeWalker(main, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      if (!node.parentElement.closest(data)) parts.push(node.textContent);
    }
    const fields = [...main.querySelectorAll("input[placeholder], textarea[placeholder]")];
    return [...parts, ...fields.map((f) => f.placeholder)].join("\n");
  });
}

/** Asserts the page shows no i18n key and none of `english`. */
async function assertNoEnglish(page, english, where) {
  const text = await uiText(page);
  assert.doesNotMatch(text, /\b(mcp|mcpField|common|nav|tool|agents)\.[a-zA-Z]/, `${where}: a raw i18n key`);
  const left = english.filter((part) => text.includes(part));
  assert.deepEqual(left, [], `${where}: English text in the Chinese UI`);
}

/** Opens the chat with agent `name` chosen and sends `input`. */
async function send(page, name, input) {
  await page.goto("/chat");
  const switcher = page.getByTestId("agent-switch");
  await eventually(async () =>
    assert.ok((await switcher.locator("option").allTextContents()).includes(name)),
  );
  await switcher.selectOption({ label: name });
  await page.getByTestId("chat-input").fill(input);
  await page.getByTestId("chat-send").click();
  await page.waitForURL(/\/chat\/[^/]+$/);
}

if (!PEERS || !existsSync(EVERYTHING)) {
  test("MCP servers in the browser", {
    skip: PEERS
      ? `no server-everything under ARS_TEST_MCP_PEERS (${EVERYTHING})`
      : "ARS_TEST_MCP_PEERS is not set: it names the folder whose node_modules holds @modelcontextprotocol/server-everything",
  });
} else {
  // server-everything listens on loopback, which a non-admin's URL may not reach unless an
  // admin allows it: this server allows exactly that address.
  const everythingPort = await freePort();
  const flow = useServer({ env: { ARS_NETWORK__ALLOW: `127.0.0.1:${everythingPort}` } });
  let everything;
  before(async () => {
    everything = await startEverything(everythingPort);
  });
  after(async () => {
    await everything?.close();
  });

  flow(
    "an admin adds an MCP server, tests it, and an agent uses its tool in a chat",
    async ({ page, server }) => {
      await signIn(page);
      await page.getByTestId("nav-mcp-servers").click();
      await page.waitForURL("**/mcp-servers");
      await page.getByTestId("mcp-empty").waitFor();

      // The form: Streamable HTTP by default, the slug follows the name.
      await page.getByTestId("mcp-new").click();
      await page.waitForURL("**/mcp-servers/new");
      assert.equal(await page.getByTestId("mcp-transport-streamable_http").isChecked(), true);
      assert.equal(await page.getByTestId("mcp-transport-stdio").isDisabled(), false);
      await page.getByTestId("mcp-field-name").fill("Everything");
      assert.equal(await page.getByTestId("mcp-field-slug").inputValue(), "everything");
      await page.getByTestId("mcp-field-description").fill("The MCP reference server");

      // A URL the server refuses: its message is shown at the URL field.
      await page.getByTestId("mcp-field-url").fill("ftp://127.0.0.1/mcp");
      await page.getByTestId("mcp-save").click();
      const urlError = page.getByTestId("error-url");
      await urlError.waitFor();
      assert.match(await urlError.textContent(), /http/);
      assert.equal(await page.getByTestId("mcp-field-url").getAttribute("aria-invalid"), "true");

      // The real URL, a plain header and a secret one.
      await page.getByTestId("mcp-field-url").fill(everything.url);
      await page.getByTestId("mcp-headers-add").click();
      await page.getByTestId("mcp-headers-name-0").fill("X-Team");
      await page.getByTestId("mcp-headers-value-0").fill("e2e");
      await page.getByTestId("mcp-headers-add").click();
      await page.getByTestId("mcp-headers-name-1").fill("X-Secret-Token");
      await page.getByTestId("mcp-headers-value-1").fill("s3cret-e2e-token");
      await page.getByTestId("mcp-headers-secret-1").check();
      await page.getByTestId("mcp-save").click();

      // The detail page: the secret is only "set", the plain header shown.
      const detail = page.getByTestId("mcp-detail");
      await detail.waitFor();
      const id = await detail.getAttribute("data-server-id");
      const settings = page.getByTestId("mcp-settings");
      assert.match(await settings.textContent(), new RegExp(everything.url.replace(/[.]/g, "\\.")));
      assert.match(await page.getByTestId("mcp-value-x-secret-token").textContent(), /set/);
      assert.match(await page.getByTestId("mcp-value-x-team").textContent(), /e2e/);
      const stored = await server.api("GET", `/api/mcp-servers/${id}`);
      assert.deepEqual(stored.transport.headers, [
        { name: "x-secret-token", secret: true },
        { name: "x-team", secret: false, value: "e2e" },
      ]);
      assert.doesNotMatch(await page.content(), /s3cret-e2e-token/);

      // Test connection: the server, protocol version, latency and tools.
      await page.getByTestId("mcp-test").click();
      const ok = page.getByTestId("mcp-check-ok");
      await ok.waitFor();
      assert.match(await page.getByTestId("mcp-check-server").textContent(), /everything/i);
      assert.match(await page.getByTestId("mcp-check-protocol").textContent(), /^\d{4}-\d{2}-\d{2}$/);
      assert.match(await page.getByTestId("mcp-check-latency").textContent(), /\d+ ms/);
      const echo = page.getByTestId("mcp-tool-echo");
      await echo.waitFor();
      assert.match(await echo.textContent(), /mcp__everything__echo/);
      await echo.locator("details summary").click();
      assert.match(await page.getByTestId("mcp-tool-schema-echo").textContent(), /"message"/);

      // Offer one tool fewer, then every tool again.
      const names = await page
        .getByTestId("mcp-tools")
        .locator("li")
        .evaluateAll((items) => items.map((li) => li.dataset.testid.replace(/^mcp-tool-/, "")));
      const other = names.find((name) => name !== "echo");
      assert.ok(other, `the server lists more tools than echo: ${names.join(", ")}`);
      await page.getByTestId(`mcp-tool-toggle-${other}`).uncheck();
      await eventually(async () => {
        const saved = await server.api("GET", `/api/mcp-servers/${id}`);
        assert.ok(Array.isArray(saved.enabled_tools));
        assert.ok(saved.enabled_tools.includes("echo") && !saved.enabled_tools.includes(other));
      });
      assert.match(await page.getByTestId("mcp-tools-summary").textContent(), /of \d+ tools/);
      await page.getByTestId("mcp-tools-all").click();
      await eventually(async () =>
        assert.equal((await server.api("GET", `/api/mcp-servers/${id}`)).enabled_tools ?? null, null),
      );
      assert.equal(await page.getByTestId(`mcp-tool-toggle-${other}`).isChecked(), true);

      // The list shows it with its transport and target.
      await page.getByTestId("mcp-back").click();
      const row = page.getByTestId("mcp-row-everything");
      await row.waitFor();
      assert.equal(await row.getByTestId("mcp-transport").getAttribute("data-transport"), "streamable_http");
      assert.equal(await row.getByTestId("mcp-target").textContent(), everything.url);

      // An agent playing a call of the server's echo tool; the server chosen in its form.
      const agent = await scriptedAgent(
        server,
        "mcp-echo",
        [
          { tool_calls: [{ name: "mcp__everything__echo", arguments: { message: "hi" } }] },
          { text: "{{last_tool_result}}" },
        ],
        { name: "MCP Echo" },
      );
      await page.goto(`/agents/${agent.id}`);
      const field = page.getByTestId("field-mcp-servers");
      await field.getByTestId("mcp-servers-mode-some").check();
      await field.getByTestId("mcp-server-option-everything").check();
      assert.equal(
        await page.getByTestId("mcp-servers-resolved").textContent(),
        "Resolves to: everything (1)",
      );
      await page.getByTestId("agent-save").click();
      await page.waitForURL("**/agents");
      const saved = await server.api("GET", `/api/agent/${agent.id}`);
      assert.deepEqual(saved.config_json.context.mcp_servers, ["everything"]);

      // The chat: the tool card names the server and the tool, the answer is the tool's result.
      await send(page, "MCP Echo", "say hi through MCP");
      const card = page.locator('[data-testid="tool-card"][data-tool="mcp__everything__echo"]');
      await card.waitFor();
      assert.equal((await card.getByTestId("tool-mcp-server").textContent()).trim(), "MCP · everything");
      assert.equal((await card.getByTestId("tool-own-name").textContent()).trim(), "echo");
      await page.getByTestId("message-assistant").filter({ hasText: "Echo: hi" }).waitFor();
      await eventually(async () =>
        assert.equal(await page.getByTestId("run-status").getAttribute("data-status"), "success"),
      );
      assert.doesNotMatch(server.log(), /s3cret-e2e-token/);
    },
  );

  flow("a user may add only Streamable HTTP servers, and is told why", async ({ page, server }) => {
    await server.api("POST", "/api/users", { username: "mia", password: "password-mia-123", role: "user" });
    await signIn(page, "mia", "password-mia-123");
    await page.goto("/mcp-servers/new");
    assert.equal(await page.getByTestId("mcp-transport-stdio").isDisabled(), true);
    assert.match(await page.getByTestId("mcp-stdio-admin-only").textContent(), /Only admins/);
    await page.getByTestId("mcp-field-name").fill("Mia's everything");
    // An address inside the server's own network is refused at its field, saying why.
    await page.getByTestId("mcp-field-url").fill(`http://127.0.0.1:${await freePort()}/mcp`);
    await page.getByTestId("mcp-save").click();
    await eventually(async () =>
      assert.match(await page.getByTestId("error-url").textContent(), /may not reach; an admin can allow it/),
    );
    // The address the admin allowed is accepted.
    await page.getByTestId("mcp-field-url").fill(everything.url);
    await page.getByTestId("mcp-save").click();
    await page.getByTestId("mcp-detail").waitFor();
    await page.getByTestId("mcp-test").click();
    await page.getByTestId("mcp-tool-echo").waitFor();
  });

  flow(
    "the MCP pages in 简体中文 show no English and no raw keys",
    async ({ page, server }) => {
      const english = await englishMcpTexts();
      assert.ok(english.length > 50, `read ${english.length} English texts`);
      const created = await server.api("POST", "/api/mcp-servers", {
        slug: "everything-zh",
        name: "Everything 中文",
        transport: { type: "streamable_http", url: everything.url, headers: { "X-Key": { secret: "k" } } },
      });
      await signIn(page);
      await page.getByTestId("nav-mcp-servers").filter({ hasText: "MCP 服务器" }).click();
      await page.getByTestId("mcp-row-everything-zh").waitFor();
      await assertNoEnglish(page, english, "list");

      await page.getByTestId("mcp-open-everything-zh").click();
      await page.getByTestId("mcp-detail").waitFor();
      await page.getByTestId("mcp-test").click();
      await page.getByTestId("mcp-tool-echo").waitFor();
      await page.getByTestId("mcp-tool-toggle-echo").uncheck();
      await page.getByTestId("mcp-tools-all").waitFor();
      assert.match(await page.getByTestId("mcp-check-ok").textContent(), /连接成功/);
      await assertNoEnglish(page, english, "detail");

      await page.goto(`/mcp-servers/${created.id}/edit`);
      await page.getByTestId("mcp-field-url").waitFor();
      assert.match(await page.getByTestId("mcp-headers-value-0").getAttribute("placeholder"), /已设置/);
      await page.getByTestId("mcp-tools-some-option").check();
      await assertNoEnglish(page, english, "edit form (HTTP)");
      await page.getByTestId("mcp-transport-stdio").check();
      await page.getByTestId("mcp-env-add").click();
      await assertNoEnglish(page, english, "edit form (stdio)");

      // A failed check is explained in Chinese too.
      const broken = await server.api("POST", "/api/mcp-servers", {
        slug: "nowhere",
        name: "Nowhere",
        transport: { type: "streamable_http", url: `http://127.0.0.1:${await freePort()}/mcp` },
      });
      await page.goto(`/mcp-servers/${broken.id}`);
      await page.getByTestId("mcp-test").click();
      const failed = page.getByTestId("mcp-check-error");
      await failed.waitFor();
      assert.match(await failed.textContent(), /[\u4e00-\u9fff]/);
      assert.match(await failed.textContent(), /服务器返回/);
      await assertNoEnglish(page, english, "failed check");
    },
    { locale: "zh-CN" },
  );
}
