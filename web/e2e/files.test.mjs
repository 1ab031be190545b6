// The Files tab: the conversation's shared workdir, as the parent and its subagents see it.
import assert from "node:assert/strict";
import { eventually, scriptedAgent, scriptedSubagent, signIn, taskCall, useServer } from "./harness.mjs";

const flow = useServer();

flow("the Files tab shows a file a subagent wrote and a tool card links to it", async ({ page, server }) => {
  await scriptedSubagent(
    server,
    "writer-sub",
    [
      {
        tool_calls: [
          {
            name: "write_file",
            arguments: { path: "notes/报告.md", content: "# 周报\n\n- shipped the **Files** tab\n" },
          },
        ],
      },
      { text: "Wrote the report." },
    ],
    { context: { tools: ["write_file"] } },
  );
  await scriptedAgent(
    server,
    "lead",
    [{ tool_calls: [taskCall("writer-sub", "write the report")] }, { text: "Done." }],
    {
      name: "Lead",
      context: { tools: [], subagents: ["writer-sub"] },
    },
  );
  await signIn(page);
  await page.goto("/chat");
  await page.getByTestId("agent-switch").selectOption({ label: "Lead" });
  await page.getByTestId("chat-input").fill("write it");
  await page.getByTestId("chat-send").click();
  await page.waitForURL(/\/chat\/[^/]+$/);
  await eventually(async () =>
    assert.equal(await page.getByTestId("run-status").getAttribute("data-status"), "success"),
  );

  await page.getByTestId("tab-files").click();
  const entry = page.locator('[data-testid="file-entry"][data-path="notes/报告.md"]');
  await entry.waitFor();
  await entry.getByTestId("file-open").click();
  const preview = page.getByTestId("file-preview");
  await preview.getByTestId("file-preview-markdown").locator("h1", { hasText: "周报" }).waitFor();
  await preview.getByRole("button", { name: "Close" }).click();
});

flow("a file uploaded in the Files tab is read by the agent", async ({ page, server }) => {
  await scriptedAgent(
    server,
    "reader",
    [
      { tool_calls: [{ name: "read_file", arguments: { path: "data.csv" } }] },
      { text: "The file says: {{last_tool_result}}" },
    ],
    { name: "Reader", context: { tools: ["read_file"] } },
  );
  await signIn(page);
  await page.goto("/chat");
  await page.getByTestId("agent-switch").selectOption({ label: "Reader" });
  // A first message creates the thread (and its workdir); the read fails, which is fine.
  await page.getByTestId("chat-input").fill("hello");
  await page.getByTestId("chat-send").click();
  await page.waitForURL(/\/chat\/[^/]+$/);
  await eventually(async () =>
    assert.equal(await page.getByTestId("run-status").getAttribute("data-status"), "success"),
  );

  await page.getByTestId("tab-files").click();
  // The workdir's long path shortens; the panel's own buttons stay inside the panel.
  await page.getByTestId("files-panel").locator(".files-workdir").waitFor();
  const panel = await page.getByTestId("subagent-panel").boundingBox();
  const button = await page.getByTestId("files-upload-button").boundingBox();
  assert.ok(button.x + button.width <= panel.x + panel.width, "the Upload button is inside the panel");
  await page.getByTestId("files-upload").setInputFiles({
    name: "data.csv",
    mimeType: "text/csv",
    buffer: Buffer.from("城市,人口\n上海,2487\nBerlin,3850\n"),
  });
  const entry = page.locator('[data-testid="file-entry"][data-path="data.csv"]');
  await entry.waitFor();
  await entry.getByTestId("file-open").click();
  await page.getByTestId("file-preview-csv").locator("td", { hasText: "上海" }).waitFor();
  await page.keyboard.press("Escape");

  await page.getByTestId("chat-input").fill("read the data");
  await page.getByTestId("chat-send").click();
  await page.getByTestId("message-assistant").filter({ hasText: "Berlin,3850" }).waitFor();
});
