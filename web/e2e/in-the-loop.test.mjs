// People in the loop of a running tree: a child's `execute` approved (after an edit) from the
// status panel, a message sent into a running run from the composer, and a parent woken by
// its background child's end, all live.
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

async function send(page, name, input) {
  await page.goto("/chat");
  await page.getByTestId("agent-switch").selectOption({ label: name });
  await page.getByTestId("chat-input").fill(input);
  await page.getByTestId("chat-send").click();
  await page.waitForURL(/\/chat\/[^/]+$/);
}

const runStatus = (page) => page.getByTestId("run-status").getAttribute("data-status");

flow("approve an execute in a child from the status panel", async ({ page, server }) => {
  await scriptedSubagent(
    server,
    "runner",
    [
      { tool_calls: [{ name: "execute", arguments: { command: "echo hi" } }] },
      { text: "The command said {{last_tool_result}}" },
    ],
    { context: { tools: ["execute"], approvals: { execute: "ask" } } },
  );
  await scriptedAgent(
    server,
    "overseer",
    [{ tool_calls: [taskCall("runner", "run a command")] }, { text: "Child: {{last_tool_result.output}}" }],
    { name: "Overseer", context: { tools: [], subagents: ["runner"] } },
  );
  await signIn(page);
  await send(page, "Overseer", "run it");

  // The child waits; its card is in the panel, not in the chat.
  const panel = page.getByTestId("subagent-panel");
  const card = panel.getByTestId("approval-card");
  await card.waitFor();
  assert.equal(await page.locator(".chat-approvals").count(), 0, "the parent itself waits on nothing");
  const threadId = page.url().split("/").pop();
  const [child] = await server.api("GET", `/api/threads/${threadId}/subagents`);
  assert.equal(await card.getAttribute("data-run-id"), child.run_id);
  await page
    .locator(`[data-testid="thread-item"][data-thread-id="${threadId}"]`)
    .getByTestId("thread-waiting")
    .waitFor();
  const item = card.getByTestId("approval-item");
  assert.match(await card.textContent(), /execute/);
  const args = item.getByTestId("approval-args");
  assert.equal(JSON.parse(await args.inputValue()).command, "echo hi");

  // Nothing goes before every call is decided, nor with arguments that are not JSON.
  const submit = card.getByTestId("approval-submit");
  assert.equal(await submit.isDisabled(), true);
  await item.getByTestId("approval-approve").click();
  await args.fill('{"command": "echo edited"');
  await item.getByTestId("approval-args-error").waitFor();
  assert.equal(await submit.isDisabled(), true);
  // Changed arguments go as an edit: the child runs the command as edited.
  await args.fill('{"command": "echo edited"}');
  await item.getByTestId("approval-args-error").waitFor({ state: "detached" });
  await submit.click();
  await card.waitFor({ state: "detached" });

  await eventually(async () => assert.equal(await runStatus(page), "success"));
  const answer = page.getByTestId("message-assistant").filter({ hasText: "Child:" });
  await answer.waitFor();
  assert.match(await answer.textContent(), /The command said .*edited/);
  await page
    .locator(`[data-testid="thread-item"][data-thread-id="${threadId}"]`)
    .getByTestId("thread-waiting")
    .waitFor({ state: "detached" });
  const [after] = await server.api("GET", `/api/threads/${threadId}/subagents`);
  assert.equal(after.status, "success");
});

flow("steer a running run", async ({ page, server }) => {
  await scriptedAgent(server, "listener", [{ text: "{{input}} ({{user_turns}})", delay_ms: 2_500 }], {
    name: "Listener",
  });
  await signIn(page);
  await send(page, "Listener", "first thought");
  await eventually(async () => assert.ok(["pending", "running"].includes(await runStatus(page))));

  // While it runs: the composer sends into the run, and Stop stays.
  await page.getByTestId("chat-input").fill("second thought");
  await page.getByTestId("chat-send").click();
  const steered = page.getByTestId("message-user").filter({ hasText: "second thought" });
  await steered.getByTestId("message-steer").waitFor();
  assert.match(await steered.getByTestId("message-steer").textContent(), /sent to the running agent/);
  await page.getByTestId("chat-stop").waitFor();
  assert.equal(await page.getByTestId("chat-input").inputValue(), "");

  await eventually(async () => assert.equal(await runStatus(page), "success"), 30_000);
  const answers = page.getByTestId("message-assistant");
  await answers.filter({ hasText: "second thought (2)" }).waitFor();
  assert.match(await answers.last().textContent(), /second thought \(2\)/);
  const threadId = page.url().split("/").pop();
  const [run] = await server.api("GET", `/api/threads/${threadId}/runs`);
  assert.equal(run.output, "second thought (2)");

  // From history, the message keeps its label; the first one has none.
  await page.reload();
  await page
    .getByTestId("message-user")
    .filter({ hasText: "second thought" })
    .getByTestId("message-steer")
    .waitFor();
  assert.equal(
    await page
      .getByTestId("message-user")
      .filter({ hasText: "first thought" })
      .getByTestId("message-steer")
      .count(),
    0,
  );
});

flow("a parent woken by its background child", async ({ page, server }) => {
  await scriptedSubagent(server, "slowpoke", [{ text: "The child is done.", delay_ms: 2_000 }]);
  await scriptedAgent(
    server,
    "dispatcher",
    {
      turns: [
        { tool_calls: [startCall("slowpoke", "finish later")] },
        { text: "I will tell you when it is done" },
      ],
      when: [{ input_contains: "[notice]", turns: [{ text: "Done: the child said so" }] }],
    },
    { name: "Dispatcher", context: { tools: [], subagents: ["slowpoke"] } },
  );
  await signIn(page);
  await send(page, "Dispatcher", "start the slow one");
  await page
    .getByTestId("message-assistant")
    .filter({ hasText: "I will tell you when it is done" })
    .waitFor();
  // The page is never reloaded: the mark stays until the end.
  await page.evaluate(() => {
    window.__notReloaded = true;
  });
  const threadId = page.url().split("/").pop();
  const firstRuns = await server.api("GET", `/api/threads/${threadId}/runs`);
  assert.equal(firstRuns.length, 1, "the child still runs when the first run ends");

  // Without sending anything: the child's end wakes the parent, and the chat follows it.
  const card = page.getByTestId("notice-card");
  await card.waitFor();
  assert.equal(await card.getAttribute("data-status"), "success");
  const answer = page.getByTestId("message-assistant").filter({ hasText: "Done: the child said so" });
  await answer.waitFor();
  await eventually(async () => assert.equal(await runStatus(page), "success"));
  assert.equal(await page.getByTestId("notice-card").count(), 1);
  const texts = await page
    .locator('[data-testid="notice-card"], [data-testid="message-assistant"]')
    .evaluateAll((nodes) => nodes.map((n) => n.dataset.testid));
  assert.deepEqual(texts.slice(-2), ["notice-card", "message-assistant"], "the answer follows the notice");
  assert.equal(await page.evaluate(() => window.__notReloaded), true);

  const runs = await server.api("GET", `/api/threads/${threadId}/runs`);
  assert.equal(runs.length, 2);
  assert.equal(runs[1].output, "Done: the child said so");
});
