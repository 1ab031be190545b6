// Subagents that end after their parent, or fail: the completion notice arrives live as a card
// that opens the child's run, and a failure says why wherever the child is shown. The parents
// take results as notes (`subagent_results: "note"`); in-the-loop.test.mjs has a woken parent.
import assert from "node:assert/strict";
import { eventually, scriptedAgent, scriptedSubagent, signIn, startCall, useServer } from "./harness.mjs";

const flow = useServer();

async function send(page, name, input) {
  await page.goto("/chat");
  await page.getByTestId("agent-switch").selectOption({ label: name });
  await page.getByTestId("chat-input").fill(input);
  await page.getByTestId("chat-send").click();
  await page.waitForURL(/\/chat\/[^/]+$/);
}

flow(
  "a background child's completion notice arrives live and opens the child's run",
  async ({ page, server }) => {
    await scriptedSubagent(server, "late", [{ text: "The late result.", delay_ms: 2_500 }]);
    await scriptedAgent(
      server,
      "starter",
      [{ tool_calls: [startCall("late", "finish later")] }, { text: "Started it." }],
      {
        name: "Starter",
        // A note, not a woken run: this flow is about the notice card.
        context: { tools: [], subagents: ["late"], subagent_results: "note" },
      },
    );
    await signIn(page);
    await send(page, "Starter", "start the late one");
    await eventually(async () =>
      assert.equal(await page.getByTestId("run-status").getAttribute("data-status"), "success"),
    );
    assert.equal(await page.getByTestId("notice-card").count(), 0, "no notice while the child runs");

    // No reload: the thread's event stream brings the notice.
    const card = page.getByTestId("notice-card");
    await card.waitFor();
    assert.equal(await card.getAttribute("data-status"), "success");
    assert.match(await card.textContent(), /late/);
    assert.doesNotMatch(await card.textContent(), /[0-9a-f]{8}-[0-9a-f]{4}-/, "no raw run ids");
    await card.getByTestId("notice-open").click();
    const popup = page.getByTestId("subagent-popup");
    await popup.getByTestId("message-assistant").filter({ hasText: "The late result." }).waitFor();
  },
);

flow(
  "a failed subagent says why in the panel, its popup and the parent's tool card",
  async ({ page, server }) => {
    await scriptedSubagent(server, "breaks", [{ error: "the quota for this key is used up" }]);
    await scriptedAgent(
      server,
      "boss",
      [{ tool_calls: [startCall("breaks", "try it")] }, { text: "Asked." }],
      {
        name: "Boss",
        context: { tools: [], subagents: ["breaks"], subagent_results: "note" },
      },
    );
    await signIn(page);
    await send(page, "Boss", "delegate");
    const entry = page.locator('[data-testid="subagent-entry"][data-slug="breaks"]');
    await eventually(async () => assert.equal(await entry.getAttribute("data-status"), "error"));
    await eventually(async () =>
      assert.match(await entry.getByTestId("subagent-error").textContent(), /quota/),
    );

    const card = page.locator('[data-testid="tool-card"][data-tool="subagent_start"]');
    await card.locator("summary").click();
    await eventually(async () =>
      assert.match(await card.getByTestId("tool-subagent-error").textContent(), /quota/),
    );

    await entry.click();
    await eventually(async () =>
      assert.match(await page.getByTestId("subagent-popup-error").textContent(), /quota for this key/),
    );
  },
);
