// Usage: runs of a scripted agent (its tokens scripted) and of an agent on a local provider with
// prices show on the Usage page — the totals, the chart, the table per agent with its cost or
// "—" — in English and in 简体中文; an admin gets the All users switch and a table per user; a
// user sees only their own runs (none yet: the empty state) and no switch.

import assert from "node:assert/strict";
import { after, before } from "node:test";
import { eventually, scriptedAgent, signIn, useServer } from "./harness.mjs";
import { startOpenAiServer } from "./openai-server.mjs";

const flow = useServer();
let model;
before(async () => {
  model = await startOpenAiServer();
});
after(async () => {
  await model?.close();
});

/** Starts one run of `agent` as the admin and waits for it to succeed. */
async function runOnce(server, agent, input) {
  const thread = await server.api("POST", "/api/threads", { agent_id: agent });
  const { run } = await server.api("POST", `/api/threads/${thread.id}/runs`, { input });
  await eventually(async () =>
    assert.equal((await server.api("GET", `/api/runs/${run.id}`)).status, "success"),
  );
}

let seeded;
/** Once per server: Coder on the scripted model (1,234 tokens, no price) and Pricey on a priced provider. */
function seed(server) {
  seeded ??= (async () => {
    await scriptedAgent(
      server,
      "coder",
      [{ text: "Done.", usage: { prompt_tokens: 1200, completion_tokens: 34 } }],
      { name: "Coder" },
    );
    await server.api("POST", "/api/model-providers", {
      name: "priced",
      base_url: model.url,
      api_key: "sk-test-key",
      models: ["local-chat"],
      // 12 tokens in at 2 and 6 out at 8 per million: 0.000072.
      prices: { input: 2, output: 8 },
    });
    await server.api("POST", "/api/agent", {
      slug: "pricey",
      name: "Pricey",
      config_json: { context: { model: { provider: "priced", name: "local-chat" } } },
    });
    await runOnce(server, "coder", "write the code");
    await runOnce(server, "pricey", "say hello");
  })();
  return seeded;
}

/** The cells of each row of a usage table, by the row's first cell. */
async function table(page, testId) {
  await page.getByTestId(testId).getByTestId("usage-row").first().waitFor();
  const rows = await page
    .getByTestId(testId)
    .getByTestId("usage-row")
    .evaluateAll((nodes) =>
      nodes.map((row) => [...row.querySelectorAll("th, td")].map((cell) => cell.textContent.trim())),
    );
  return Object.fromEntries(rows.map(([name, ...cells]) => [name, cells]));
}

flow(
  "a run's tokens show in the totals, the agent table and the chart; an admin sees every user",
  async ({ page, server }) => {
    await seed(server);
    await signIn(page);
    await page.getByTestId("nav-usage").click();
    await page.waitForURL(/\/usage$/);
    await page.getByTestId("usage-report").waitFor();
    assert.equal(await page.getByRole("heading", { level: 1 }).textContent(), "Usage");

    assert.equal(await page.getByTestId("usage-total-runs").textContent(), "2");
    assert.equal(await page.getByTestId("usage-total-input").textContent(), "1,212");
    assert.equal(await page.getByTestId("usage-total-output").textContent(), "40");
    assert.equal(await page.getByTestId("usage-total-total").textContent(), "1,252");
    assert.equal(await page.getByTestId("usage-total-cost").textContent(), "0.000072");
    assert.match(
      await page.getByTestId("usage-cost-note").textContent(),
      /1,234 tokens have no price and are left out of the cost/,
    );

    const agents = await table(page, "usage-agents");
    assert.deepEqual(agents.Coder, ["1", "1,200", "34", "1,234", "—No price"]);
    assert.deepEqual(agents.Pricey, ["1", "12", "6", "18", "0.000072"]);
    const models = await table(page, "usage-models");
    assert.equal(models["priced/local-chat"]?.[4], "0.000072");

    // Today's bar carries the tokens, its tooltip says so, and the summary reads them out.
    const today = new Date().toISOString().slice(0, 10);
    const bar = page.locator(`[data-testid="usage-bar"][data-day="${today}"]`);
    assert.equal(await bar.getAttribute("data-tokens"), "1252");
    assert.match(await bar.locator("title").textContent(), /1,252 tokens \(1,212 in, 40 out\), 2 runs$/);
    assert.equal(await page.getByTestId("usage-bar").count(), 30);
    assert.match(await page.getByTestId("usage-chart-summary").textContent(), /1,252 tokens over 30 days/);

    await page.getByTestId("usage-range-7").click();
    await eventually(async () => assert.equal(await page.getByTestId("usage-bar").count(), 7));
    assert.equal(await page.getByTestId("usage-total-total").textContent(), "1,252");

    // The admin's switch: every user's runs, with a table per user.
    assert.equal(await page.getByTestId("usage-users").count(), 0);
    await page.getByTestId("usage-all").click();
    await eventually(async () => assert.equal(await page.getByTestId("usage-all").isChecked(), true));
    const users = await table(page, "usage-users");
    // Part of the admin's tokens has no price: the cost is marked, and a note says why.
    assert.deepEqual(users.admin, ["2", "1,212", "40", "1,252", "0.000072*"]);
    assert.match(await page.getByTestId("usage-users").textContent(), /the cost leaves them out/);
  },
);

flow(
  "the Usage page in 简体中文",
  async ({ page, server }) => {
    await seed(server);
    await signIn(page);
    await page.getByTestId("nav-usage").filter({ hasText: "用量" }).click();
    await page.getByTestId("usage-report").waitFor();
    assert.equal(await page.getByRole("heading", { level: 1 }).textContent(), "用量");
    assert.equal(await page.getByTestId("usage-total-total").textContent(), "1,252");
    assert.match(await page.getByTestId("usage-totals").textContent(), /输入令牌1,212/);
    assert.match(await page.getByTestId("usage-cost-note").textContent(), /有 1,234 个令牌未设置价格/);
    assert.equal(await page.getByTestId("usage-agents").getByRole("heading").textContent(), "按智能体");
    const agents = await table(page, "usage-agents");
    assert.deepEqual(agents.Coder, ["1", "1,200", "34", "1,234", "—未定价"]);
    assert.match(await page.getByTestId("usage-chart-summary").textContent(), /共 1,252 个令牌/);
    assert.equal(await page.getByTestId("usage-range-7").textContent(), "最近 7 天");
    assert.equal(await page.getByTestId("usage-all").count(), 1);
  },
  { locale: "zh-CN" },
);

flow("a user sees only their own runs, and no All users switch", async ({ page, server }) => {
  await seed(server);
  await server.api("POST", "/api/users", { username: "lin", password: "lin-password-123", role: "user" });
  await signIn(page, "lin", "lin-password-123");
  await page.getByTestId("nav-usage").click();
  assert.equal(await page.getByTestId("usage-empty").textContent(), "No runs in this period.");
  assert.equal(await page.getByTestId("usage-all").count(), 0);
});
