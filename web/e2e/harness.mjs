// The end-to-end harness: a real `ars serve` (target/debug/ars, or $ARS_BIN) on a free loopback
// port with a fresh data dir, the distribution's Chromium driven by playwright-core, and
// helpers to seed data through the REST API. Only the built-in scripted model is used.
//
// A test file calls `useServer()` once (one server and one browser for the file, stopped after
// it) and declares flows with `flow(name, async ({ page, server }) => …)`: each flow gets a fresh
// browser context, and on failure prints the server's log and saves a screenshot.

import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { fileURLToPath } from "node:url";
import { chromium } from "playwright-core";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));
const ARS_BIN = process.env.ARS_BIN ?? join(ROOT, "target/debug/ars");
const CHROMIUM = process.env.CHROMIUM ?? "/usr/bin/chromium";
export const ADMIN_PASSWORD = "e2e-admin-password";

/** How long a flow waits for the UI to reach a state before failing. */
export const WAIT_MS = 20_000;

/** Where screenshots of failed flows go. */
const FAILURES = join(tmpdir(), "ars-e2e-failures");

async function freePort() {
  const server = createServer();
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * A running `ars serve` with its own data dir; `log()` is everything it printed. `env` adds
 * settings of the test's own (such as `ARS_NETWORK__ALLOW`).
 */
export async function startServer({ env: extra = {} } = {}) {
  const dataDir = await mkdtemp(join(tmpdir(), "ars-e2e-"));
  const port = await freePort();
  const base = `http://127.0.0.1:${port}`;
  const env = { ...process.env };
  // Nothing from the environment may point the server elsewhere: no real model provider (only
  // the scripted model runs), no shared database or event bus, no config file.
  for (const name of [
    "OPENAI_BASE_URL",
    "OPENAI_API_KEY",
    "ARS_DEFAULT_MODEL",
    "ARS_DATABASE_URL",
    "ARS_REDIS_URL",
    "ARS_CONFIG",
  ]) {
    delete env[name];
  }
  Object.assign(env, {
    ARS_DATA_DIR: dataDir,
    ARS_BIND: `127.0.0.1:${port}`,
    ARS_ADMIN_PASSWORD: ADMIN_PASSWORD,
    ARS_LOG_FORMAT: "pretty",
    RUST_LOG: process.env.RUST_LOG ?? "info",
    ...extra,
  });
  const child = spawn(ARS_BIN, ["serve"], { cwd: dataDir, env, stdio: ["ignore", "pipe", "pipe"] });
  const output = [];
  child.stdout.on("data", (chunk) => output.push(chunk));
  child.stderr.on("data", (chunk) => output.push(chunk));
  const exited = new Promise((resolve) => child.once("exit", (code, signal) => resolve({ code, signal })));
  const spawnFailed = new Promise((resolve) => child.once("error", resolve));
  const log = () => Buffer.concat(output).toString("utf8");
  // However the test process ends, the server ends with it.
  const killOnExit = () => child.kill("SIGKILL");
  process.once("exit", killOnExit);

  const deadline = Date.now() + 30_000;
  let ready = false;
  while (!ready) {
    const failure = await Promise.race([
      exited.then((how) => `exited early (${JSON.stringify(how)})`),
      spawnFailed.then((e) => `could not start ${ARS_BIN}: ${e.message} (run \`cargo build -p ars\` first)`),
      new Promise((resolve) => setTimeout(resolve, 100, null)),
    ]);
    if (failure) throw new Error(`ars serve ${failure}\n${log()}`);
    ready = await fetch(`${base}/api/health`)
      .then((r) => r.ok)
      .catch(() => false);
    if (!ready && Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`ars serve did not answer /api/health within 30 s\n${log()}`);
    }
  }

  const adminToken = await login(base, "admin", ADMIN_PASSWORD);
  return {
    base,
    log,
    adminToken,
    /** A JSON request as the admin; throws on a non-2xx answer. */
    api: (method, path, body) => request(base, adminToken, method, path, body),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        child.kill("SIGTERM");
        const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
        await exited;
        clearTimeout(timer);
      }
      process.off("exit", killOnExit);
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

async function login(base, username, password) {
  const body = await request(base, null, "POST", "/api/auth/login", { username, password });
  return body.token;
}

async function request(base, token, method, path, body) {
  const headers = { accept: "application/json" };
  if (token) headers.authorization = `Bearer ${token}`;
  if (body !== undefined) headers["content-type"] = "application/json";
  const response = await fetch(`${base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path} answered ${response.status}: ${text}`);
  return text ? JSON.parse(text) : null;
}

export function launchBrowser() {
  // `launch` gives the browser a fresh temporary profile (user data dir) of its own.
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/**
 * One server and one browser for the calling test file. Returns a function that declares a
 * flow: a test with a fresh browser context (1280×800 and `en-US` unless `viewport` or `locale`
 * say otherwise).
 */
export function useServer(options = {}) {
  let server;
  let browser;
  before(async () => {
    server = await startServer(options);
    browser = await launchBrowser();
  });
  after(async () => {
    await browser?.close();
    await server?.stop();
  });

  return function flow(name, body, { viewport = { width: 1280, height: 800 }, locale = "en-US" } = {}) {
    test(name, async () => {
      // The browser's language picks the UI's language on a first visit (English unless asked).
      const context = await browser.newContext({ viewport, baseURL: server.base, locale });
      context.setDefaultTimeout(WAIT_MS);
      const page = await context.newPage();
      const consoleErrors = [];
      page.on("console", (m) => m.type() === "error" && consoleErrors.push(m.text()));
      page.on("pageerror", (e) => consoleErrors.push(String(e)));
      try {
        await body({ page, server, context });
        // The browser logs every 4xx answer as "Failed to load resource"; flows provoke those
        // on purpose (wrong password, busy thread, invalid agent). Anything else is the app's.
        const unexpected = consoleErrors.filter((text) => !text.startsWith("Failed to load resource"));
        assert.deepEqual(unexpected, [], "the page logged errors");
      } catch (failure) {
        await mkdir(FAILURES, { recursive: true });
        const shot = join(FAILURES, `${name.replace(/[^a-z0-9]+/gi, "-")}.png`);
        await page.screenshot({ path: shot, fullPage: true }).catch(() => {});
        console.error(
          `\n--- flow "${name}" failed at ${page.url()}; screenshot: ${shot}` +
            `\n--- browser console errors:\n${consoleErrors.join("\n") || "(none)"}` +
            `\n--- ars serve log:\n${server.log()}`,
        );
        throw failure;
      } finally {
        await context.close();
      }
    });
  };
}

/** Signs in through the login page and waits for the app shell. */
export async function signIn(page, username = "admin", password = ADMIN_PASSWORD) {
  await page.goto("/login");
  await page.getByTestId("login-username").fill(username);
  await page.getByTestId("login-password").fill(password);
  await page.getByTestId("login-submit").click();
  // Attached rather than visible: on a phone the navigation is folded into its menu.
  await page.getByTestId("nav-chat").waitFor({ state: "attached" });
}

/** Retries `check` (which throws while the state is not reached) until it passes. */
export async function eventually(check, timeout = WAIT_MS) {
  const deadline = Date.now() + timeout;
  for (;;) {
    try {
      return await check();
    } catch (failure) {
      if (Date.now() > deadline) throw failure;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/** A normal agent on the scripted model playing `script`; `context` adds to its runtime context. */
export function scriptedAgent(server, slug, script, { context = {}, ...fields } = {}) {
  return server.api("POST", "/api/agent", {
    slug,
    name: `Agent ${slug}`,
    ...fields,
    config_json: { context: { model: { provider: "scripted", name: "scripted", script }, ...context } },
  });
}

/** A subagent on the scripted model playing `script`. */
export function scriptedSubagent(server, slug, script, options = {}) {
  return scriptedAgent(server, slug, script, {
    name: `Sub ${slug}`,
    description: `Subagent ${slug}`,
    backend_id: "SubAgentBackend",
    ...options,
  });
}

/** The `subagent_start` / `task` tool calls of a scripted parent. */
export const startCall = (slug, description) => ({
  name: "subagent_start",
  arguments: { description, subagent_slug: slug },
});
export const taskCall = (slug, description) => ({
  name: "task",
  arguments: { description, subagent_slug: slug },
});
