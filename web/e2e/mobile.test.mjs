// The phone and the keyboard: at 390 px the navigation folds into a menu, the thread list is a
// drawer over the chat, the thread's title stays in the chat's header, the message box keeps its
// width while a run goes, and no page scrolls sideways; on a desktop, Ctrl+K opens the command
// palette and `?` the list of shortcuts.

import assert from "node:assert/strict";
import { eventually, scriptedAgent, signIn, useServer } from "./harness.mjs";

const flow = useServer();
const PHONE = { width: 390, height: 844 };

/** The document's width: nothing may make a phone's page scroll sideways. */
async function assertFits(page, path) {
  const measure = () =>
    page.evaluate(() => {
      const width = document.scrollingElement.scrollWidth;
      // What sticks out, to say why when it does.
      const wide = [...document.querySelectorAll("body *")]
        .filter((e) => e.getBoundingClientRect().right > window.innerWidth + 0.5)
        .filter((e) => getComputedStyle(e).position !== "fixed" && e.checkVisibility())
        .slice(0, 6)
        .map(
          (e) =>
            `<${e.tagName.toLowerCase()} class="${e.className}" data-testid="${e.dataset.testid ?? ""}">`,
        );
      return { width, wide };
    });
  // The page's data arrives after its heading: measured when it has settled.
  await page.waitForTimeout(300);
  const { width, wide } = await measure();
  assert.ok(width <= PHONE.width, `${path} is ${width}px wide at ${PHONE.width}px: ${wide.join(", ")}`);
}

async function visit(page, path) {
  await page.goto(path);
  await page.locator("main h1").first().waitFor();
  await page.getByTestId("nav-menu-toggle").waitFor();
  await assertFits(page, path);
}

for (const [locale, words] of [
  [
    "en-US",
    {
      agent: "Pocket agent",
      slow: "Slow agent",
      titles: [
        "Packing list for the trip",
        "A rather long title that a phone cannot show in full, however it tries",
      ],
      agentsHeading: "Agents",
      skills: "Skills",
    },
  ],
  [
    "zh-CN",
    {
      agent: "口袋助手",
      slow: "慢助手",
      titles: ["旅行打包清单", "一个很长很长的标题，手机屏幕再怎么努力也无法完整地显示出来"],
      agentsHeading: "智能体",
      skills: "技能",
    },
  ],
]) {
  const tag = locale === "en-US" ? "en" : "zh";

  flow(
    `${locale}: at 390 px the navigation is a menu and no page scrolls sideways`,
    async ({ page, server }) => {
      const agent = await scriptedAgent(server, `pocket-${tag}`, [{ text: "ok" }], { name: words.agent });
      await signIn(page);
      await page.goto("/chat");
      const menu = page.getByTestId("nav-menu-toggle");
      await menu.waitFor();
      assert.equal(await menu.getAttribute("aria-expanded"), "false");
      assert.equal(await page.getByTestId("nav-agents").isVisible(), false, "the links are folded away");

      // Opened: the links show and the first takes the focus; Escape closes it, back on the button.
      await menu.click();
      assert.equal(await menu.getAttribute("aria-expanded"), "true");
      await page.getByTestId("nav-agents").waitFor({ state: "visible" });
      assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), "nav-chat");
      await page.keyboard.press("Escape");
      assert.equal(await menu.getAttribute("aria-expanded"), "false");
      await page.getByTestId("nav-agents").waitFor({ state: "hidden" });
      assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), "nav-menu-toggle");

      // A link chosen: its page opens and the menu closes.
      await menu.click();
      await page.getByTestId("nav-agents").click();
      await page.waitForURL(/\/agents$/);
      // The page loads on first use: its heading follows the address.
      await eventually(async () =>
        assert.equal(await page.locator("main h1").first().textContent(), words.agentsHeading),
      );
      assert.equal(await menu.getAttribute("aria-expanded"), "false");
      await page.getByTestId("nav-skills").waitFor({ state: "hidden" });
      await menu.click();
      await page.getByTestId("nav-skills").click();
      await page.waitForURL(/\/skills$/);
      // The page loads on first use: its heading follows the address.
      await eventually(async () =>
        assert.equal(await page.locator("main h1").first().textContent(), words.skills),
      );

      // The user menu still opens within the screen.
      await page.getByTestId("user-menu").click();
      const box = await page.locator(".menu").boundingBox();
      assert.ok(box && box.x >= 0 && box.x + box.width <= PHONE.width, "the user menu fits the screen");
      await page.getByTestId("user-menu").click();

      const thread = await server.api("POST", "/api/threads", { agent_id: agent.id, title: words.titles[1] });
      for (const path of [
        "/chat",
        `/chat/${thread.id}`,
        "/agents",
        "/agents/new",
        `/agents/${agent.id}`,
        "/skills",
        "/providers",
        "/providers/new",
        "/mcp-servers",
        "/mcp-servers/new",
        "/knowledge",
        "/knowledge/new",
        "/account",
        "/admin/users",
      ]) {
        await visit(page, path);
      }
    },
    { viewport: PHONE, locale },
  );

  flow(
    `${locale}: at 390 px the thread list is a drawer, and the title and the message box keep their room`,
    async ({ page, server }) => {
      const agent = await scriptedAgent(server, `slow-${tag}`, [{ text: "too late", delay_ms: 60_000 }], {
        name: words.slow,
      });
      const threads = [];
      for (const title of words.titles) {
        threads.push(await server.api("POST", "/api/threads", { agent_id: agent.id, title }));
      }
      await signIn(page);
      await page.goto("/chat");
      const toggle = page.getByTestId("thread-list-toggle");
      const drawer = page.getByTestId("thread-drawer");
      await toggle.waitFor();
      assert.equal(await drawer.isVisible(), false, "the list starts closed");

      // Opened: over the chat, with the focus in its search box; Escape closes it.
      await toggle.click();
      await drawer.waitFor({ state: "visible" });
      assert.equal(await toggle.getAttribute("aria-expanded"), "true");
      await eventually(async () =>
        assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), "thread-search"),
      );
      await page.keyboard.press("Escape");
      await drawer.waitFor({ state: "hidden" });
      assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), "thread-list-toggle");

      // The backdrop closes it too, and so does its close button.
      await toggle.click();
      await drawer.waitFor({ state: "visible" });
      await page.mouse.click(PHONE.width - 10, 500);
      await drawer.waitFor({ state: "hidden" });
      await toggle.click();
      await page.getByTestId("thread-drawer-close").click();
      await drawer.waitFor({ state: "hidden" });

      // Choosing a thread opens it and closes the drawer; its title is in the header.
      await toggle.click();
      const item = page.locator(`[data-testid="thread-item"][data-thread-id="${threads[0].id}"]`);
      await item.locator("a").click();
      await page.waitForURL(new RegExp(`/chat/${threads[0].id}$`));
      await drawer.waitFor({ state: "hidden" });
      assert.equal(await toggle.getAttribute("aria-expanded"), "false");
      const title = page.locator(".chat-head h1");
      assert.equal(await title.textContent(), words.titles[0]);
      assert.ok(await title.isVisible());

      // The long title: shortened, still there beside the Status button, within the screen.
      await toggle.click();
      await page
        .locator(`[data-testid="thread-item"][data-thread-id="${threads[1].id}"]`)
        .locator("a")
        .click();
      await page.waitForURL(new RegExp(`/chat/${threads[1].id}$`));
      await eventually(async () => assert.equal(await title.textContent(), words.titles[1]));
      const head = await title.boundingBox();
      assert.ok(head && head.width >= 120, `the title has room (${head?.width}px)`);
      assert.ok(head.x >= 0 && head.x + head.width <= PHONE.width, "the title is on the screen");
      await assertFits(page, `/chat/${threads[1].id}`);

      // A run going: Stop appears, and the message box keeps its width.
      const input = page.getByTestId("chat-input");
      const idle = await input.boundingBox();
      assert.ok(idle.width >= PHONE.width - 50, `the message box is the screen's width (${idle.width}px)`);
      await input.fill("Pack the tent");
      await page.getByTestId("chat-send").click();
      await page.getByTestId("chat-stop").waitFor();
      const active = await input.boundingBox();
      assert.equal(Math.round(active.width), Math.round(idle.width), "Stop squeezes the message box");
      assert.ok(await title.isVisible());
      const status = await page.getByTestId("run-status").boundingBox();
      assert.ok(status.x + status.width <= PHONE.width, "the run's status is on the screen");
      await assertFits(page, `/chat/${threads[1].id} with a run going`);
      await page.getByTestId("chat-stop").click();
      await page.getByTestId("chat-stop").waitFor({ state: "detached" });
    },
    { viewport: PHONE, locale },
  );
}

flow(
  "Ctrl+K opens the command palette: an agent's name and Enter open its chat",
  async ({ page, server }) => {
    await scriptedAgent(server, "librarian", [{ text: "ok" }], { name: "Librarian" });
    await signIn(page);
    await page.goto("/agents");
    await page.getByTestId("nav-agents").waitFor();
    await page.keyboard.press("Control+k");
    const search = page.getByTestId("palette-search");
    await search.waitFor();
    assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), "palette-search");
    await search.pressSequentially("Librarian");
    // The first entry holding the name: its chat (or New thread, were it the agent in use).
    await eventually(async () =>
      assert.ok(
        (await page.getByTestId("palette-item").locator(".palette-label").allTextContents()).includes(
          "Chat with Librarian",
        ),
      ),
    );
    await search.press("Enter");
    await page.waitForURL(
      (url) => url.pathname === "/chat/new" && url.searchParams.get("agent") === "librarian",
    );
    await page.getByTestId("command-palette").waitFor({ state: "detached" });
    const switcher = page.getByTestId("agent-switch");
    await eventually(async () =>
      assert.equal(await switcher.locator("option:checked").textContent(), "Librarian"),
    );

    // A page by its name; Escape closes without going anywhere, the focus back where it was.
    await page.keyboard.press("Control+k");
    await search.fill("skills");
    await search.press("Enter");
    await page.waitForURL(/\/skills$/);
    await page.locator("main h1").first().click();
    await page.keyboard.press("Control+k");
    await search.waitFor();
    await page.keyboard.press("Escape");
    await page.getByTestId("command-palette").waitFor({ state: "detached" });
    assert.match(page.url(), /\/skills$/);
  },
);

flow(
  "? opens the list of shortcuts, outside a text field; so does the user menu",
  async ({ page, server }) => {
    // An agent to chat with, so the message box is enabled whatever ran before.
    await scriptedAgent(server, "shortcuts-helper", [{ text: "hi" }], { name: "Shortcuts helper" });
    await signIn(page);
    await page.goto("/chat/new?agent=shortcuts-helper");
    const input = page.getByTestId("chat-input");
    await input.waitFor();
    // Typed into the message box, a ? is text (once the page has settled: the box may be
    // replaced while the agents load, so each try starts from an empty box).
    await eventually(async () => {
      await input.fill("");
      await input.focus();
      await page.keyboard.press("?");
      assert.equal(await input.inputValue(), "?");
    });
    assert.equal(await page.getByTestId("shortcuts-dialog").count(), 0);
    await input.fill("");

    await page.locator(".chat-head h1").click();
    await page.keyboard.press("?");
    const dialog = page.getByTestId("shortcuts-dialog");
    await dialog.waitFor();
    const rows = await dialog.getByTestId("shortcut-row").allTextContents();
    // Chromium on Linux: Ctrl+K (a Mac would say ⌘K).
    assert.ok(
      rows.some((row) => row.startsWith("Ctrl+K")),
      rows.join(" | "),
    );
    for (const keys of ["?", "Enter", "Shift+Enter", "Esc"]) {
      assert.ok(
        rows.some((row) => row.startsWith(keys)),
        `${keys} is listed`,
      );
    }
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });

    await page.getByTestId("user-menu").click();
    await page.getByTestId("open-shortcuts").click();
    await dialog.waitFor();
    await dialog.getByRole("button", { name: "Close" }).click();
    await dialog.waitFor({ state: "detached" });
    assert.equal(await page.evaluate(() => document.activeElement?.dataset.testid), "user-menu");
  },
);

flow(
  "命令面板和快捷键列表也说中文",
  async ({ page }) => {
    await signIn(page);
    await page.goto("/agents");
    await page.getByTestId("nav-agents").waitFor();
    await page.keyboard.press("Control+k");
    const palette = page.getByRole("dialog", { name: "命令面板" });
    await palette.waitFor();
    await page.getByTestId("palette-search").fill("技能");
    await page.getByTestId("palette-search").press("Enter");
    await page.waitForURL(/\/skills$/);
    await page.locator("main h1").first().click();
    await page.keyboard.press("?");
    await page.getByRole("dialog", { name: "键盘快捷键" }).waitFor();
  },
  { locale: "zh-CN" },
);
