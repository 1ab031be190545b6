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

// Files attached in the composer: uploaded into the new thread's workdir before its first run,
// named in the message the agent gets.
const ATTACH = {
  "en-US": {
    slug: "attach-reader-en",
    name: "Attach reader",
    file: "data.csv",
    text: "Sum the population",
    remove: "Remove notes.txt",
  },
  "zh-CN": {
    slug: "attach-reader-zh",
    name: "附件阅读者",
    file: "人口 数据.csv",
    text: "算一下总人口",
    remove: "移除 notes.txt",
    refused: "huge.bin 大小为 26 MB：超过 25 MB 的文件无法附加。",
  },
};

for (const [locale, words] of Object.entries(ATTACH)) {
  flow(
    `a file attached in the composer of a new thread is in the workdir before the run (${locale})`,
    async ({ page, server }) => {
      const path = `uploads/${words.file}`;
      await scriptedAgent(
        server,
        words.slug,
        [
          { tool_calls: [{ name: "read_file", arguments: { path } }] },
          { text: "The file says: {{last_tool_result}}" },
        ],
        { name: words.name, context: { tools: ["read_file"] } },
      );
      await signIn(page);
      await page.goto("/chat");
      await page.getByTestId("agent-switch").selectOption({ label: words.name });
      await page.getByTestId("thread-new").click();

      const csv = Buffer.from("城市,人口\n上海,2487\nBerlin,3850\n");
      await page.getByTestId("chat-attach-input").setInputFiles([
        { name: words.file, mimeType: "text/csv", buffer: csv },
        { name: "notes.txt", mimeType: "text/plain", buffer: Buffer.from("not this one") },
      ]);
      const chips = page.getByTestId("composer-file");
      await eventually(async () => assert.equal(await chips.count(), 2));
      const chip = page.locator(`[data-testid="composer-file"][data-name="${words.file}"]`);
      assert.match(await chip.textContent(), new RegExp(`${words.file}.*${csv.length} B`));
      await page.getByRole("button", { name: words.remove }).click();
      await eventually(async () => assert.equal(await chips.count(), 1));
      if (words.refused) {
        await page.getByTestId("chat-attach-input").setInputFiles({
          name: "huge.bin",
          mimeType: "application/octet-stream",
          buffer: Buffer.alloc(26 * 1024 * 1024),
        });
        assert.equal(await page.getByTestId("composer-refused").textContent(), words.refused);
        assert.equal(await chips.count(), 1);
      }

      await page.getByTestId("chat-input").fill(words.text);
      await page.getByTestId("chat-send").click();
      await page.waitForURL((url) => /^\/chat\/[^/]+$/.test(url.pathname) && url.pathname !== "/chat/new");
      const threadId = new URL(page.url()).pathname.split("/").pop();
      // The first run read the file: it was in the workdir before the run started.
      await page.getByTestId("message-assistant").filter({ hasText: "Berlin,3850" }).waitFor();
      await eventually(async () => assert.equal(await chips.count(), 0));
      assert.equal(await page.getByTestId("chat-input").inputValue(), "");

      const messages = await server.api("GET", `/api/threads/${threadId}/messages`);
      assert.equal(
        messages.find((m) => m.role === "user").content,
        `${words.text}\n\nAttached files: ${path}`,
      );
      // The bubble shows the text and the file as a chip.
      const bubble = page.getByTestId("message-user").first();
      await bubble.locator(`[data-path="${path}"]`).waitFor();
      assert.equal(await bubble.locator("p.pre").textContent(), words.text);

      await page.getByTestId("tab-files").click();
      await page.locator(`[data-testid="file-entry"][data-path="${path}"]`).waitFor();
      assert.equal(
        await page.locator('[data-testid="file-entry"][data-path="uploads/notes.txt"]').count(),
        0,
      );

      // The same name again: a suffix, nothing replaced; the files panel shows it.
      await page.getByTestId("chat-attach-input").setInputFiles({
        name: words.file,
        mimeType: "text/csv",
        buffer: Buffer.from("second"),
      });
      await page.getByTestId("chat-send").click();
      const second = path.replace(/\.csv$/, "-1.csv");
      await eventually(async () => {
        const all = await server.api("GET", `/api/threads/${threadId}/messages`);
        assert.deepEqual(
          all.filter((m) => m.role === "user").map((m) => m.content),
          [`${words.text}\n\nAttached files: ${path}`, `Attached files: ${second}`],
        );
      });
      await page.locator(`[data-testid="file-entry"][data-path="${second}"]`).waitFor();
      const listing = await server.api("GET", `/api/threads/${threadId}/files?path=uploads`);
      assert.deepEqual(listing.entries.map((e) => e.name).sort(), [words.file, second.slice(8)].sort());
    },
    { locale },
  );
}
