// The chat page: sending, streaming, stopping and reattaching to runs; threads; and the
// Subagents panel with its popups (live, finished, cancelled children).

import assert from "node:assert/strict";
import {
  eventually,
  scriptedAgent,
  scriptedSubagent,
  signIn,
  startCall,
  taskCall,
  useServer,
} from "./harness.mjs";

const flow = useServer();

/** Words streamed one delta each, so a slow `chunk_delay_ms` makes a long-running answer. */
const WORDS = Array.from({ length: 16 }, (_, i) => `word${i + 1}`).join(" ");

/** Opens the chat with agent `name` chosen, sends `input`, and waits for the thread page. */
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
  await page.getByTestId("message-user").filter({ hasText: input }).waitFor();
}

/** The run's status as the API names it (the badge's text is translated). */
async function runStatus(page) {
  return page.getByTestId("run-status").getAttribute("data-status");
}

/** The Subagents panel's entries as `{slug, status, runId}`. */
async function entries(page) {
  return page
    .getByTestId("subagent-panel")
    .getByTestId("subagent-entry")
    .evaluateAll((nodes) =>
      nodes.map((n) => ({ slug: n.dataset.slug, status: n.dataset.status, runId: n.dataset.runId })),
    );
}

function entry(page, slug) {
  return page.getByTestId("subagent-panel").locator(`[data-testid="subagent-entry"][data-slug="${slug}"]`);
}

async function statusOf(page, slug) {
  return entry(page, slug).getAttribute("data-status");
}

flow(
  "an answer streams with Markdown and tool cards, and the thread can be renamed and deleted",
  async ({ page, server }) => {
    await scriptedAgent(
      server,
      "scribe",
      [
        {
          text: "Writing it down.",
          tool_calls: [{ name: "write_file", arguments: { path: "a.txt", content: "hi" } }],
        },
        { text: "Saved **a.txt** for `{{input}}`." },
      ],
      { name: "Scribe", context: { tools: ["write_file"] } },
    );
    await signIn(page);
    await send(page, "Scribe", "note this");
    await eventually(async () => assert.equal(await runStatus(page), "success"));

    const answer = page.getByTestId("message-assistant").last();
    assert.equal(await answer.locator("strong").textContent(), "a.txt");
    assert.equal(await answer.locator("code").textContent(), "note this");
    const card = page.locator('[data-testid="tool-card"][data-tool="write_file"]');
    assert.equal(await card.count(), 1);
    await card.locator("summary").click();
    assert.match(await card.textContent(), /a\.txt/);
    assert.equal(await page.getByTestId("chat-stop").count(), 0);

    // The new thread is listed; rename it, then delete it.
    const threadId = page.url().split("/").pop();
    const item = page.locator(`[data-testid="thread-item"][data-thread-id="${threadId}"]`);
    await item.getByTestId("thread-rename").click();
    await item.locator("input").fill("Renamed thread");
    await item.locator("input").press("Enter");
    await eventually(async () => {
      const thread = await server.api("GET", `/api/threads/${threadId}`);
      assert.equal(thread.title, "Renamed thread");
    });
    await item.filter({ hasText: "Renamed thread" }).waitFor();
    await item.getByTestId("thread-delete").click();
    await page.getByTestId("confirm-delete").click();
    await item.waitFor({ state: "detached" });
    const threads = await server.api("GET", "/api/threads");
    assert.ok(!threads.some((t) => t.id === threadId));
  },
);

flow("stop cancels the running answer", async ({ page, server }) => {
  await scriptedAgent(server, "ponder", [{ text: "too late", delay_ms: 60_000 }], { name: "Ponder" });
  await signIn(page);
  await send(page, "Ponder", "think hard");
  await page.getByTestId("chat-stop").click();
  await eventually(async () => assert.equal(await runStatus(page), "cancelled"));
  await page.getByTestId("chat-stop").waitFor({ state: "detached" });
  // A cancel the user chose is not an error: no error banner, now or after a reload.
  assert.equal(await page.getByTestId("chat-error").count(), 0);
  await page.reload();
  await eventually(async () => assert.equal(await runStatus(page), "cancelled"));
  assert.equal(await page.getByTestId("chat-error").count(), 0);
});

flow("a run's error is shown inline", async ({ page, server }) => {
  await scriptedAgent(server, "broken", [{ error: "the model fell over" }], { name: "Broken" });
  await signIn(page);
  await send(page, "Broken", "try");
  await page.getByTestId("chat-error").waitFor();
  assert.match(await page.getByTestId("chat-error").textContent(), /fell over/);
  await eventually(async () => assert.equal(await runStatus(page), "error"));
});

flow("reloading mid-run reattaches to the answer, which completes", async ({ page, server }) => {
  await scriptedAgent(server, "slowpoke", [{ text: WORDS, chunk_delay_ms: 300 }], { name: "Slowpoke" });
  await signIn(page);
  await send(page, "Slowpoke", "tell me slowly");
  const answer = page.getByTestId("message-assistant");
  await answer.filter({ hasText: "word2" }).waitFor();
  assert.ok(!(await answer.textContent()).includes("word16"), "still streaming before the reload");
  const url = page.url();

  await page.reload();
  assert.equal(page.url(), url);
  await page.getByTestId("chat-stop").waitFor();
  await answer.filter({ hasText: "word16" }).waitFor();
  await eventually(async () => assert.equal(await runStatus(page), "success"));
  // One answer, complete and in order: nothing lost or repeated across the reattachment.
  assert.equal(await answer.count(), 1);
  assert.equal((await answer.locator(".markdown").textContent()).replace(/\s+/g, " ").trim(), WORDS);
});

flow("a run that ends while the thread loads still shows its whole answer", async ({ page, server }) => {
  const agent = await scriptedAgent(server, "brisk", [{ text: "the brisk answer", delay_ms: 2_000 }], {
    name: "Brisk",
  });
  await signIn(page);
  const thread = await server.api("POST", "/api/threads", { agent_id: agent.id });
  // The page reads the messages while the run is active and learns of its end afterwards:
  // the runs list is held back until the run has finished.
  await page.route(`**/api/threads/${thread.id}/runs`, async (route) => {
    if (route.request().method() === "GET") {
      await eventually(async () => {
        const runs = await server.api("GET", `/api/threads/${thread.id}/runs`);
        assert.equal(runs.at(-1).status, "success");
      });
    }
    await route.continue();
  });
  await server.api("POST", `/api/threads/${thread.id}/runs`, { input: "quick" });
  await page.goto(`/chat/${thread.id}`);
  await eventually(async () => assert.equal(await runStatus(page), "success"));
  await page.getByTestId("message-assistant").filter({ hasText: "the brisk answer" }).waitFor();
});

flow("background and synchronous subagents all appear in the panel and finish", async ({ page, server }) => {
  await scriptedSubagent(server, "bg-fast", [{ text: "fast result", delay_ms: 2_000 }]);
  await scriptedSubagent(server, "bg-slow", [{ text: "slow result", delay_ms: 4_000 }]);
  await scriptedSubagent(
    server,
    "sync-helper",
    [
      { tool_calls: [{ name: "write_file", arguments: { path: "notes.md", content: "# Notes" } }] },
      { text: "notes written" },
    ],
    { context: { tools: ["write_file"] } },
  );
  await scriptedAgent(
    server,
    "lead",
    [
      {
        text: "Starting helpers.",
        tool_calls: [
          startCall("bg-fast", "first background job"),
          startCall("bg-slow", "second background job"),
        ],
      },
      { tool_calls: [taskCall("sync-helper", "write the notes")] },
      { text: "All **done**: {{last_tool_result.output}}" },
    ],
    // Told as notes: the flow is about the panel, not about a woken parent.
    {
      name: "Lead",
      context: { subagents: ["bg-fast", "bg-slow", "sync-helper"], subagent_results: "note" },
    },
  );
  await signIn(page);
  await send(page, "Lead", "delegate");

  await eventually(async () => {
    const slugs = (await entries(page)).map((e) => e.slug).sort();
    assert.deepEqual(slugs, ["bg-fast", "bg-slow", "sync-helper"]);
  });
  await eventually(async () => assert.equal(await runStatus(page), "success"));
  await page.getByTestId("message-assistant").locator("strong", { hasText: "done" }).waitFor();
  await page.getByTestId("message-assistant").filter({ hasText: "notes written" }).waitFor();
  assert.equal(await page.locator('[data-testid="tool-card"][data-tool="subagent_start"]').count(), 2);
  assert.equal(await page.locator('[data-testid="tool-card"][data-tool="task"]').count(), 1);

  // The parent is done while the background children still run; the panel follows them.
  assert.equal(await statusOf(page, "sync-helper"), "success");
  assert.ok(
    ["pending", "running"].includes(await statusOf(page, "bg-slow")),
    "bg-slow still running after the parent ended",
  );
  await eventually(async () => {
    assert.equal(await statusOf(page, "bg-fast"), "success");
    assert.equal(await statusOf(page, "bg-slow"), "success");
  });
  const slow = entry(page, "bg-slow");
  assert.match(await slow.textContent(), /second background job/);

  // The panel's run ids are the server's child runs.
  const threadId = page.url().split("/").pop();
  const children = await server.api("GET", `/api/threads/${threadId}/subagents`);
  assert.deepEqual((await entries(page)).map((e) => e.runId).sort(), children.map((c) => c.run_id).sort());
});

flow("a running child's popup shows its events live", async ({ page, server }) => {
  await scriptedSubagent(
    server,
    "streamer",
    [
      { tool_calls: [{ name: "write_file", arguments: { path: "draft.md", content: "draft" } }] },
      { text: WORDS, chunk_delay_ms: 400, delay_ms: 500 },
    ],
    { context: { tools: ["write_file"] } },
  );
  await scriptedAgent(
    server,
    "launcher",
    [{ tool_calls: [startCall("streamer", "stream a long answer")] }, { text: "started it" }],
    { name: "Launcher", context: { subagents: ["streamer"], subagent_results: "note" } },
  );
  await signIn(page);
  await send(page, "Launcher", "go");
  await eventually(async () => assert.equal(await statusOf(page, "streamer"), "running"));
  await entry(page, "streamer").click();

  const popup = page.getByTestId("subagent-popup");
  await popup.locator('[data-testid="tool-card"][data-tool="write_file"]').waitFor();
  const answer = popup.getByTestId("message-assistant").filter({ hasText: "word" });
  await answer.filter({ hasText: "word2" }).waitFor();
  assert.ok(!(await answer.textContent()).includes("word16"), "the answer arrives while it streams");
  await popup.getByTestId("subagent-cancel").waitFor();

  await answer.filter({ hasText: "word16" }).waitFor();
  await popup.getByTestId("subagent-cancel").waitFor({ state: "detached" });
  await eventually(async () => assert.equal(await statusOf(page, "streamer"), "success"));
  await popup.getByTestId("popup-close").click();
  await popup.waitFor({ state: "detached" });
});

flow("a finished child's popup shows its history", async ({ page, server }) => {
  await scriptedSubagent(
    server,
    "archivist",
    [
      { tool_calls: [{ name: "write_file", arguments: { path: "log.md", content: "entry" } }] },
      { text: "archived the **log**" },
    ],
    { context: { tools: ["write_file"] } },
  );
  await scriptedAgent(
    server,
    "curator",
    [{ tool_calls: [taskCall("archivist", "archive the log")] }, { text: "archived" }],
    { name: "Curator", context: { subagents: ["archivist"] } },
  );
  await signIn(page);
  await send(page, "Curator", "archive");
  await eventually(async () => assert.equal(await runStatus(page), "success"));
  await eventually(async () => assert.equal(await statusOf(page, "archivist"), "success"));

  // Opened later, from a fresh page load: the history comes from the child thread's messages.
  await page.reload();
  await entry(page, "archivist").click();
  const popup = page.getByTestId("subagent-popup");
  await popup.getByTestId("message-user").filter({ hasText: "archive the log" }).waitFor();
  await popup.locator('[data-testid="tool-card"][data-tool="write_file"]').waitFor();
  await popup.getByTestId("message-assistant").locator("strong", { hasText: "log" }).waitFor();
  assert.equal(await popup.getByTestId("subagent-cancel").count(), 0);
  await page.keyboard.press("Escape");
  await popup.waitFor({ state: "detached" });
});

/** How each locale words a cancelled child, and the failure wording it must not use. */
const CANCEL_WORDS = [
  ["en-US", "en", "cancelled", /failed/i],
  ["zh-CN", "zh", "已取消", /运行失败/],
];

for (const [locale, tag, cancelled, failed] of CANCEL_WORDS) {
  // One server serves every test: each locale's agents get their own slugs.
  const sleeper = `sleeper-${tag}`;
  flow(
    `a running child is cancelled from its popup, and reads cancelled once (${locale})`,
    async ({ page, server }) => {
      await scriptedSubagent(server, sleeper, [{ text: "never", delay_ms: 60_000 }]);
      await scriptedAgent(
        server,
        `waker-${tag}`,
        [{ tool_calls: [startCall(sleeper, "sleep for a minute")] }, { text: "left it sleeping" }],
        { name: `Waker ${tag}`, context: { subagents: [sleeper], subagent_results: "note" } },
      );
      await signIn(page);
      await send(page, `Waker ${tag}`, "start");
      await eventually(async () => assert.equal(await statusOf(page, sleeper), "running"));
      // The collapsed card names the child and its task.
      const card = page.locator('[data-testid="tool-card"][data-tool="subagent_start"]');
      assert.equal(await card.getByTestId("tool-subagent").textContent(), `${sleeper} — sleep for a minute`);
      await entry(page, sleeper).click();
      const popup = page.getByTestId("subagent-popup");
      await popup.getByTestId("subagent-progress").waitFor();
      await popup.getByTestId("subagent-cancel").click();
      await eventually(async () => assert.equal(await statusOf(page, sleeper), "cancelled"));
      await popup.getByTestId("subagent-cancel").waitFor({ state: "detached" });
      assert.equal(await popup.getByTestId("subagent-progress").count(), 0);
      const text = await popup.textContent();
      assert.ok(text.includes(cancelled), text);
      assert.doesNotMatch(text, failed);
      const panelText = await entry(page, sleeper).textContent();
      assert.equal(panelText.split(cancelled).length - 1, 1, panelText);
      assert.doesNotMatch(panelText, failed);
      // Focus stays in the popup, on Close, so Escape still closes it.
      assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), "popup-close");
      await page.keyboard.press("Escape");
      await popup.waitFor({ state: "detached" });

      const threadId = page.url().split("/").pop();
      const [child] = await server.api("GET", `/api/threads/${threadId}/subagents`);
      assert.equal(child.status, "cancelled");
    },
    { locale },
  );
}

flow(
  "on a narrow screen the status panel opens from its toggle",
  async ({ page, server }) => {
    await scriptedSubagent(server, "mini", [{ text: "tiny result" }]);
    await scriptedAgent(
      server,
      "pocket",
      [{ tool_calls: [taskCall("mini", "a small job")] }, { text: "done" }],
      { name: "Pocket", context: { subagents: ["mini"] } },
    );
    await signIn(page);
    await send(page, "Pocket", "go");
    await eventually(async () => assert.equal(await runStatus(page), "success"));
    const panel = page.getByTestId("subagent-panel");
    assert.equal(await panel.isVisible(), false, "the panel is a closed drawer");
    await page.getByTestId("status-toggle").click();
    await panel.waitFor({ state: "visible" });
    await eventually(async () => assert.equal(await statusOf(page, "mini"), "success"));
    await entry(page, "mini").click();
    await page
      .getByTestId("subagent-popup")
      .getByTestId("message-assistant")
      .filter({ hasText: "tiny result" })
      .waitFor();
  },
  { viewport: { width: 390, height: 844 } },
);
