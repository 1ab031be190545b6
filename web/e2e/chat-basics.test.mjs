// Chat basics: messages carry their time and copy; code blocks are highlighted and copy;
// the run's usage shows; threads show their agent and time, can be searched, and fold away on
// a phone.

import assert from "node:assert/strict";
import { eventually, scriptedAgent, signIn, useServer } from "./harness.mjs";

const flow = useServer();

async function chat(page, agentName, input) {
  await page.goto("/chat");
  const switcher = page.getByTestId("agent-switch");
  await eventually(async () =>
    assert.ok((await switcher.locator("option").allTextContents()).includes(agentName)),
  );
  await switcher.selectOption({ label: agentName });
  await page.getByTestId("chat-input").fill(input);
  await page.getByTestId("chat-send").click();
  await page.waitForURL(/\/chat\/[^/]+$/);
  await eventually(async () =>
    assert.equal(await page.getByTestId("run-status").getAttribute("data-status"), "success"),
  );
}

const CODE = 'fn main() {\n    println!("hi");\n}';

flow(
  "messages copy and show their time; code is highlighted and copies; usage is shown",
  async ({ page, server, context }) => {
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin: server.base });
    await scriptedAgent(
      server,
      "coder",
      [
        {
          text: `Here:\n\n\`\`\`rust\n${CODE}\n\`\`\``,
          usage: { prompt_tokens: 1200, completion_tokens: 34 },
        },
      ],
      { name: "Coder" },
    );
    await signIn(page);
    await chat(page, "Coder", "show me code");

    const answer = page.getByTestId("message-assistant").last();
    // The highlighter loads with the first fenced block; the keywords get their class then.
    await answer.locator("code.language-rust .hljs-keyword").first().waitFor();
    await answer.getByTestId("code-copy").click();
    await eventually(async () =>
      assert.equal(await page.evaluate(() => navigator.clipboard.readText()), CODE),
    );

    await answer.getByTestId("message-copy").click();
    await eventually(async () =>
      assert.match(await page.evaluate(() => navigator.clipboard.readText()), /^Here:\n\n```rust/),
    );
    const user = page.getByTestId("message-user").last();
    assert.notEqual((await user.getByTestId("message-time").getAttribute("datetime")) ?? "", "");
    assert.match(await answer.getByTestId("message-time").textContent(), /\d/);

    assert.match(await page.getByTestId("run-usage").textContent(), /1,234 tokens \(1,200 in, 34 out\)/);
  },
);

flow("threads show their agent and time and can be searched, in any script", async ({ page, server }) => {
  await scriptedAgent(server, "alpha", [{ text: "ok" }], { name: "Alpha helper" });
  await scriptedAgent(server, "beta", [{ text: "好的" }], { name: "贝塔助手" });
  await signIn(page);
  await chat(page, "Alpha helper", "plan the launch");
  await chat(page, "贝塔助手", "写一份周报");

  const items = page.getByTestId("thread-item");
  for (const time of await items.getByTestId("thread-time").allTextContents()) {
    assert.match(time, /now|ago|second|minute/);
  }

  await page.getByTestId("thread-search").fill("周报");
  await eventually(async () => assert.equal(await items.count(), 1));
  assert.match(await items.first().textContent(), /写一份周报/);
  assert.equal(await items.first().getByTestId("thread-agent").textContent(), "贝塔助手");
  // Case does not matter, and the agent's name is searched too.
  await page.getByTestId("thread-search").fill("ALPHA HELPER");
  await eventually(async () => assert.equal(await items.count(), 1));
  assert.match(await items.first().textContent(), /plan the launch/);
  assert.equal(await items.first().getByTestId("thread-agent").textContent(), "Alpha helper");
  await page.getByTestId("thread-search").fill("nothing like this");
  await page.getByText("No conversation matches the search.").waitFor();
});

flow(
  "on a phone the thread list folds away and opens from its toggle",
  async ({ page, server }) => {
    await scriptedAgent(server, "phone", [{ text: "ok" }], { name: "Phone agent" });
    await signIn(page);
    await chat(page, "Phone agent", "hello from a phone");
    // A thread is open: the list starts folded, leaving the conversation the screen.
    await page.reload();
    const toggle = page.getByTestId("thread-list-toggle");
    await toggle.waitFor();
    assert.equal(await toggle.getAttribute("aria-expanded"), "false");
    assert.equal(await page.getByTestId("thread-item").first().isVisible(), false);
    const sidebar = await page.locator(".thread-sidebar").boundingBox();
    assert.ok(sidebar && sidebar.height < 160, `the folded list is small (${sidebar?.height}px)`);

    await toggle.click();
    await page.getByTestId("thread-item").first().waitFor({ state: "visible" });
    await page.getByTestId("thread-item").first().locator("a").click();
    assert.equal(await toggle.getAttribute("aria-expanded"), "false");
  },
  { viewport: { width: 390, height: 844 } },
);
