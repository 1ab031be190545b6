// The polish of the first day: an unknown address has a page of its own, the theme is the
// user's choice (System, Light, Dark) and holds from the first paint, a user message's time is
// readable on its bubble in both themes, every list is the same table, and "Fetch from the
// provider" is a button.

import assert from "node:assert/strict";
import { after, before } from "node:test";
import { eventually, scriptedAgent, signIn, useServer } from "./harness.mjs";
import { startOpenAiServer } from "./openai-server.mjs";

const flow = useServer();
let model;
before(async () => {
  model = await startOpenAiServer({ models: ["local-chat", "local-code"] });
});
after(async () => {
  await model?.close();
});

/** The page's background colour (the root element carries `--bg`). */
const pageBackground = (page) =>
  page.evaluate(() => getComputedStyle(document.documentElement).backgroundColor);
const LIGHT_BG = "rgb(246, 247, 249)";
const DARK_BG = "rgb(21, 24, 28)";

async function chooseTheme(page, theme) {
  await page.getByTestId("user-menu").click();
  await page.getByTestId("theme-switch").selectOption(theme);
  await page.getByTestId("user-menu").click();
}

/**
 * The WCAG contrast ratio of an element's text against the background it is drawn on (its own,
 * or the nearest ancestor's that is not transparent).
 */
function contrastOf(locator) {
  return locator.evaluate((element) => {
    const rgb = (text) => text.match(/[\d.]+/g).map(Number);
    const luminance = ([r, g, b]) => {
      const [R, G, B] = [r, g, b].map((v) => {
        const c = v / 255;
        return c <= 0.04045 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * R + 0.7152 * G + 0.0722 * B;
    };
    let node = element;
    let background = [255, 255, 255, 0];
    while (node) {
      background = rgb(getComputedStyle(node).backgroundColor);
      if (background.length < 4 || background[3] > 0) break;
      node = node.parentElement;
    }
    const [hi, lo] = [luminance(rgb(getComputedStyle(element).color)), luminance(background)].sort(
      (a, b) => b - a,
    );
    return (hi + 0.05) / (lo + 0.05);
  });
}

flow("an address the app has no page for says so, with the way back to the chat", async ({ page }) => {
  await signIn(page);
  await page.goto("/agents/x/no-such-page");
  const notFound = page.getByTestId("not-found");
  await notFound.waitFor();
  assert.equal(await notFound.getByRole("heading", { level: 1 }).textContent(), "Page not found");
  assert.equal(await notFound.locator("code").textContent(), "/agents/x/no-such-page");
  // Inside the app: its navigation is there too.
  await page.getByTestId("nav-agents").waitFor();
  await page.getByTestId("not-found-back").click();
  await page.waitForURL(/\/chat$/);
  // The root still opens the chat.
  await page.goto("/");
  await page.waitForURL(/\/chat$/);
});

flow(
  "在中文界面中，不存在的地址也有自己的页面",
  async ({ page }) => {
    await signIn(page);
    await page.goto("/nope");
    const notFound = page.getByTestId("not-found");
    await notFound.waitFor();
    assert.equal(await notFound.getByRole("heading", { level: 1 }).textContent(), "页面不存在");
    assert.equal(await page.getByTestId("not-found-back").textContent(), "返回聊天");
  },
  { locale: "zh-CN" },
);

flow(
  "the theme follows the system until the user menu pins Light or Dark, from the first paint on",
  async ({ page, context }) => {
    await page.emulateMedia({ colorScheme: "dark" });
    await signIn(page);
    await page.getByTestId("user-menu").click();
    assert.equal(await page.getByTestId("theme-switch").inputValue(), "system");
    await page.getByTestId("user-menu").click();
    assert.equal(await pageBackground(page), DARK_BG);

    // Light wins over a dark system, and the other way round.
    await chooseTheme(page, "light");
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), "light");
    assert.equal(await pageBackground(page), LIGHT_BG);
    await page.emulateMedia({ colorScheme: "light" });
    await chooseTheme(page, "dark");
    assert.equal(await pageBackground(page), DARK_BG);

    // Kept across loads, and applied by index.html before any of the app's script runs: with
    // the scripts refused, the page is dark all the same.
    const bare = await context.newPage();
    await bare.route(/\/assets\/.*\.js$/, (route) => route.abort());
    await bare.goto("/chat");
    assert.equal(await bare.evaluate(() => document.documentElement.dataset.theme), "dark");
    assert.equal(await pageBackground(bare), DARK_BG);
    await bare.close();

    await page.reload();
    await page.getByTestId("user-menu").click();
    assert.equal(await page.getByTestId("theme-switch").inputValue(), "dark");
    await page.getByTestId("theme-switch").selectOption("system");
    assert.equal(await page.evaluate(() => document.documentElement.dataset.theme), undefined);
    assert.equal(await pageBackground(page), LIGHT_BG);
  },
);

flow(
  "a user message's time is readable on its bubble in the light and the dark theme",
  async ({ page, server }) => {
    await scriptedAgent(server, "echo", [{ text: "Noted." }], { name: "Echo" });
    await signIn(page);
    await page.goto("/chat");
    const switcher = page.getByTestId("agent-switch");
    await eventually(async () =>
      assert.ok((await switcher.locator("option").allTextContents()).includes("Echo")),
    );
    await switcher.selectOption({ label: "Echo" });
    await page.getByTestId("chat-input").fill("Remember the milk");
    await page.getByTestId("chat-send").click();
    await page.waitForURL(/\/chat\/[^/]+$/);
    const bubble = page.getByTestId("message-user").last();
    const time = bubble.getByTestId("message-time");
    await time.waitFor();

    for (const theme of ["light", "dark"]) {
      await chooseTheme(page, theme);
      const ratio = await contrastOf(time);
      assert.ok(ratio >= 4.5, `the time's contrast in the ${theme} theme is ${ratio.toFixed(2)}:1`);
      // The buttons beside it, on their own surface, stay readable too.
      const copy = await contrastOf(bubble.getByTestId("message-copy"));
      assert.ok(copy >= 4.5, `Copy's contrast in the ${theme} theme is ${copy.toFixed(2)}:1`);
    }
  },
);

flow("providers, API tokens and users are the same table as agents and skills", async ({ page, server }) => {
  await scriptedAgent(server, "lister", [{ text: "ok" }], { name: "Lister" });
  await server.api("POST", "/api/model-providers", {
    name: "local",
    base_url: model.url,
    api_key: "sk-test-key",
    models: ["local-chat"],
  });
  await server.api("POST", "/api/tokens", { name: "ci", expires_in_days: 30 });
  await signIn(page);

  /** What makes a list look like one: the table's frame and a cell's padding and rule. */
  const look = async (testId) => {
    const table = testId ? page.getByTestId(testId) : page.locator("main table").first();
    await table.waitFor();
    // A table may show its header before its rows have arrived (the tokens' list does).
    await table.locator("tbody td").first().waitFor();
    return table.evaluate((element) => {
      const pick = (el, names) => Object.fromEntries(names.map((n) => [n, getComputedStyle(el)[n]]));
      return {
        className: element.className,
        table: pick(element, ["backgroundColor", "borderTopStyle", "borderTopWidth", "borderCollapse"]),
        fillsItsPlace: element.offsetWidth === element.parentElement.clientWidth,
        cell: pick(element.querySelector("tbody td"), [
          "paddingTop",
          "paddingLeft",
          "borderBottomStyle",
          "borderBottomWidth",
          "verticalAlign",
        ]),
      };
    });
  };

  await page.goto("/agents");
  const agents = await look();
  assert.equal(agents.className, "list-table");
  assert.equal(agents.table.borderTopStyle, "solid");
  await page.goto("/skills");
  assert.deepEqual(await look("skill-list"), agents);
  await page.goto("/providers");
  assert.deepEqual(await look("provider-list"), agents);
  await page.goto("/admin/users");
  assert.deepEqual(await look("user-list"), agents);
  await page.goto("/account");
  assert.deepEqual(await look("token-list"), agents);

  // The tokens' intro shows the header as code, not between backticks.
  const intro = page.getByTestId("tokens-intro");
  assert.equal(await intro.locator("code").textContent(), "Authorization: Bearer <token>");
  assert.doesNotMatch(await page.locator("main").innerText(), /`/);
});

flow(
  "Fetch from the provider is a button of its own size, and fetches the models",
  async ({ page, server }) => {
    const created = await server.api("POST", "/api/model-providers", {
      name: "fetcher",
      base_url: model.url,
      api_key: "sk-test-key",
      models: ["local-chat"],
    });
    await signIn(page);
    await page.goto(`/providers/${created.id}`);
    const fetch = page.getByTestId("provider-refresh");
    await fetch.waitFor();
    const [button, field] = await Promise.all([
      fetch.evaluate((el) => {
        const style = getComputedStyle(el);
        return {
          width: el.getBoundingClientRect().width,
          border: style.borderTopStyle,
          background: style.backgroundColor,
          cursor: style.cursor,
          icon: el.querySelector("svg") !== null,
        };
      }),
      page.getByTestId("provider-models").evaluate((el) => el.getBoundingClientRect().width),
    ]);
    assert.equal(button.border, "solid");
    assert.notEqual(button.background, "rgba(0, 0, 0, 0)");
    assert.equal(button.cursor, "pointer");
    assert.ok(button.icon, "the button shows its icon");
    assert.ok(button.width < field / 2, `the button is ${button.width}px wide in a ${field}px field`);

    await fetch.click();
    await eventually(async () =>
      assert.equal(await page.getByTestId("provider-models").inputValue(), "local-chat\nlocal-code"),
    );
  },
);
