// Chat basics: messages carry their time and copy; code blocks are highlighted and copy;
// the run's usage shows; threads show their agent and time, can be searched (titles and message
// content, in English and Chinese), and fold away on a phone.

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
  await page.getByText("No title or agent name matches.").waitFor();
  await page.getByText("No messages contain “nothing like this”.").waitFor();
  // A single character filters titles only: messages are not searched for it.
  await page.getByTestId("thread-search").fill("x");
  await page.getByText("No conversation matches the search.").waitFor();
  assert.equal(await page.getByTestId("message-hits").count(), 0);
});

// Each language's flow has its own words, so the hits of one never show in the other.
const MESSAGE_SEARCH = {
  "en-US": {
    slug: "scribe-en",
    name: "Scribe",
    first: "Draft the quarterly budget and the 月报 for Tuesday",
    second: "Book a meeting room",
    word: "QUARTERLY",
    marked: "quarterly",
    chinese: "月报",
    heading: "In messages",
    you: "You",
    none: "No messages contain “nothing like this”.",
  },
  "zh-CN": {
    slug: "scribe-zh",
    name: "书记员",
    first: "Prepare the annual review and the 年报 before Friday",
    second: "订一间会议室",
    word: "ANNUAL",
    marked: "annual",
    chinese: "年报",
    heading: "消息中",
    you: "你",
    none: "没有消息包含“nothing like this”。",
  },
};

for (const [locale, words] of Object.entries(MESSAGE_SEARCH)) {
  flow(
    `the search finds message content and opens the thread at the message (${locale})`,
    async ({ page, server }) => {
      // The answer repeats the input: each search finds the user's message and the agent's answer.
      await scriptedAgent(server, words.slug, [{ text: "Noted: {{input}}" }], { name: words.name });
      await signIn(page);
      await chat(page, words.name, words.first);
      const firstThread = new URL(page.url()).pathname.split("/").pop();
      await chat(page, words.name, words.second);
      assert.notEqual(new URL(page.url()).pathname.split("/").pop(), firstThread);

      const search = page.getByTestId("thread-search");
      const hits = page.getByTestId("message-hit");
      await search.fill(words.word);
      await page.getByRole("heading", { name: words.heading }).waitFor();
      await eventually(async () => assert.equal(await hits.count(), 2));
      // Newest first: the agent's answer, then the user's message; both in the first thread.
      assert.deepEqual(await hits.getByTestId("message-hit-author").allTextContents(), [
        words.name,
        words.you,
      ]);
      for (const id of await hits.evaluateAll((els) => els.map((el) => el.dataset.threadId))) {
        assert.equal(id, firstThread);
      }
      assert.deepEqual(await hits.locator("mark").allTextContents(), [words.marked, words.marked]);
      const mine = hits.nth(1);
      assert.match(await mine.getByTestId("message-hit-snippet").textContent(), new RegExp(words.first));
      assert.match(await mine.locator("time").textContent(), /\d/);

      // Opening the user's message: its thread, scrolled to it, the message marked.
      const userMessageId = await mine.getAttribute("data-message-id");
      await mine.locator("a").click();
      await page.waitForURL((url) => url.pathname === `/chat/${firstThread}` && url.hash !== "");
      const userMessage = page.locator(`[data-testid="message-user"][data-message-id="${userMessageId}"]`);
      await eventually(async () => assert.match(await userMessage.getAttribute("class"), /\bflash\b/));
      assert.ok(await userMessage.isVisible());
      assert.equal(await page.locator("h1").textContent(), words.first);

      // A Chinese word, as written; this time the agent's answer is opened.
      await search.fill(words.chinese);
      await eventually(async () => assert.equal(await hits.count(), 2));
      assert.deepEqual(await hits.locator("mark").allTextContents(), [words.chinese, words.chinese]);
      const answerId = await hits.first().getAttribute("data-message-id");
      await hits.first().locator("a").click();
      const answer = page.locator(`[data-testid="message-assistant"][data-message-id="${answerId}"]`);
      await eventually(async () => assert.match(await answer.getAttribute("class"), /\bflash\b/));
      assert.match(await answer.textContent(), new RegExp(`Noted: ${words.first}`));

      await search.fill("nothing like this");
      await eventually(async () =>
        assert.equal(await page.getByTestId("message-hits-empty").textContent(), words.none),
      );
      // Esc clears the search: the whole list is back, and no message hits.
      await search.press("Escape");
      assert.equal(await search.inputValue(), "");
      await eventually(async () => assert.equal(await page.getByTestId("message-hits").count(), 0));
      assert.ok((await page.getByTestId("thread-item").count()) >= 2);
    },
    { locale },
  );
}

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

flow("New thread opens a draft: only the first message creates the thread", async ({ page, server }) => {
  const agent = await scriptedAgent(server, "drafter", [{ text: "Draft answer" }], { name: "Drafter" });
  await signIn(page);
  await chat(page, "Drafter", "an earlier thread");
  const before = (await server.api("GET", "/api/threads")).map((thread) => thread.id);
  const items = page.getByTestId("thread-item");
  await eventually(async () => assert.equal(await items.count(), before.length));

  // New thread, then leave without typing: nothing is created.
  await page.getByTestId("thread-new").click();
  await page.waitForURL(/\/chat\/new\?agent=drafter$/);
  assert.equal(await page.getByTestId("agent-switch").inputValue(), agent.id);
  // The composer has the focus on a chat page.
  await eventually(async () =>
    assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), "chat-input"),
  );
  // Reloading the draft shows an empty new chat with the same agent, not an error.
  await page.reload();
  await page.getByTestId("chat-input").waitFor();
  await eventually(async () => assert.equal(await page.getByTestId("agent-switch").inputValue(), agent.id));
  assert.equal(await page.getByTestId("chat-error").count(), 0);
  assert.equal(await page.getByTestId("message-user").count(), 0);
  await page.getByTestId("nav-agents").click();
  await page.waitForURL(/\/agents$/);
  // Another page does not move the focus into anything of its own.
  assert.notEqual(await page.evaluate(() => document.activeElement?.dataset.testid), "chat-input");
  await page.getByTestId("nav-chat").click();
  await page.waitForURL(/\/chat$/);
  assert.equal((await server.api("GET", "/api/threads")).length, before.length);
  await eventually(async () => assert.equal(await items.count(), before.length));

  // New thread, then a message: exactly one thread, holding the message and the answer.
  await page.getByTestId("agent-switch").selectOption({ label: "Drafter" });
  await page.getByTestId("thread-new").click();
  await page.getByTestId("chat-input").fill("the first message");
  await page.getByTestId("chat-send").click();
  await page.waitForURL((url) => /^\/chat\/[^/]+$/.test(url.pathname) && url.pathname !== "/chat/new");
  const created = new URL(page.url()).pathname.split("/").pop();
  await page.getByTestId("message-assistant").filter({ hasText: "Draft answer" }).waitFor();
  const after = await server.api("GET", "/api/threads");
  assert.deepEqual(
    after.map((thread) => thread.id).filter((id) => !before.includes(id)),
    [created],
  );
  await eventually(async () => {
    const messages = await server.api("GET", `/api/threads/${created}/messages`);
    assert.deepEqual(
      messages.filter((m) => m.role !== "system").map((m) => [m.role, m.content]),
      [
        ["user", "the first message"],
        ["assistant", "Draft answer"],
      ],
    );
  });
  await eventually(async () => assert.equal(await items.count(), before.length + 1));
});

flow("a skip link is the first stop of Tab and moves the focus to the page", async ({ page }) => {
  await signIn(page);
  // A fresh load of a page that moves the focus nowhere: the first Tab lands on the link.
  await page.goto("/agents");
  await page.locator("main").waitFor();
  await page.keyboard.press("Tab");
  const skip = page.getByTestId("skip-link");
  assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), "skip-link");
  // Off screen until focused, then on screen.
  const box = await skip.boundingBox();
  assert.ok(box && box.y >= 0, `the focused skip link is visible (${JSON.stringify(box)})`);
  await page.keyboard.press("Enter");
  assert.equal(await page.evaluate(() => document.activeElement?.tagName), "MAIN");
  assert.match(new URL(page.url()).pathname, /\/agents$/);
});
