// Knowledge bases in the browser: creating one (a refused setting shown at its field), uploading
// an English Markdown file through the file picker and a Chinese text file dropped on the upload
// area, both followed live until ready, a search in each language with its highlighted
// snippets, a file that cannot be read (its reason, Retry, deleting it), choosing the knowledge
// base in an agent's form, a chat whose agent calls `knowledge_search` and cites passages that
// open in a dialog, and the pages in 简体中文.

import assert from "node:assert/strict";
import { eventually, scriptedAgent, signIn, useServer } from "./harness.mjs";

const flow = useServer();

const TRAVEL_MD = `# Travel policy

## Hotels

Hotels are booked through the travel desk. The hotel cost is capped at 120 EUR per night in Europe.

## Meals

The daily meal allowance is 45 EUR, paid with the monthly salary.
`;

const TRAVEL_ZH_NAME = "差旅 制度.txt";
const TRAVEL_ZH = `差旅制度

出差住宿标准：一线城市每晚不超过六百元，其他城市每晚不超过四百元。

伙食补贴每天一百元，随工资发放。
`;

const file = (name, text, mimeType = "text/plain") => ({ name, mimeType, buffer: Buffer.from(text, "utf8") });

/** Drops `files` ({name, text}) on the element `testId` names, as a person dragging them would. */
async function dropFiles(page, testId, files) {
  const dataTransfer = await page.evaluateHandle((files) => {
    const transfer = new DataTransfer();
    for (const { name, text } of files) transfer.items.add(new File([text], name, { type: "text/plain" }));
    return transfer;
  }, files);
  await page.getByTestId(testId).dispatchEvent("drop", { dataTransfer });
}

/** The document row named `name`. */
const docRow = (page, name) => page.locator(`[data-testid="doc-row"][data-name="${name}"]`);

/** Waits until document `name` is ready. */
async function waitReady(page, name) {
  await page.locator(`[data-testid="doc-row"][data-name="${name}"][data-status="ready"]`).waitFor();
}

/** Opens the chat with agent `name` chosen and sends `input`. */
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
}

/** Searches the knowledge base on its page; answers the hits' citation ids, best first. */
async function search(page, query) {
  await page.getByTestId("kb-search-input").fill(query);
  await page.getByTestId("kb-search-submit").click();
  const hits = page.locator(`[data-testid="kb-hits"][data-query="${query}"] [data-testid="kb-hit"]`);
  await hits.first().waitFor();
  return hits.evaluateAll((items) => items.map((li) => li.dataset.citation));
}

flow(
  "a knowledge base is created, filled, searched, and cited by an agent in a chat",
  async ({ page, server }) => {
    await signIn(page);
    await page.getByTestId("nav-knowledge").click();
    await page.waitForURL("**/knowledge");
    await page.getByTestId("kb-empty").waitFor();

    // The form: the slug follows the name; an overlap over half the passage size is refused.
    await page.getByTestId("kb-new").click();
    await page.waitForURL("**/knowledge/new");
    await page.getByTestId("kb-field-name").fill("Handbook");
    assert.equal(await page.getByTestId("kb-field-slug").inputValue(), "handbook");
    await page.getByTestId("kb-field-description").fill("Company travel rules, in English and Chinese");
    await page.getByTestId("kb-field-chunk-size").fill("400");
    await page.getByTestId("kb-field-chunk-overlap").fill("300");
    await page.getByTestId("kb-save").click();
    const overlapError = page.getByTestId("error-chunk-overlap");
    await overlapError.waitFor();
    assert.match(await overlapError.textContent(), /200/);
    await page.getByTestId("kb-field-chunk-overlap").fill("40");
    await page.getByTestId("kb-save").click();

    // The detail: empty, BM25 only, the settings as saved.
    const detail = page.getByTestId("kb-detail");
    await detail.waitFor();
    const id = await detail.getAttribute("data-kb-id");
    await page.getByTestId("doc-empty").waitFor();
    assert.equal(await detail.getByTestId("kb-search-mode").getAttribute("data-mode"), "bm25");
    assert.match(await page.getByTestId("kb-settings").textContent(), /400 characters, 40 repeated/);
    const stored = await server.api("GET", `/api/knowledge-bases/${id}`);
    assert.deepEqual(stored.settings, { chunk_size: 400, chunk_overlap: 40, embedding: null });

    // One file through the picker, one dropped on the upload area; both followed until ready.
    await page.getByTestId("kb-upload").setInputFiles([file("travel.md", TRAVEL_MD, "text/markdown")]);
    await dropFiles(page, "kb-drop-zone", [{ name: TRAVEL_ZH_NAME, text: TRAVEL_ZH }]);
    await waitReady(page, "travel.md");
    await waitReady(page, TRAVEL_ZH_NAME);
    const uploads = page.getByTestId("kb-upload-row");
    assert.equal(await uploads.count(), 2);
    assert.deepEqual(await uploads.evaluateAll((rows) => rows.map((r) => r.dataset.state)), ["done", "done"]);
    assert.notEqual((await docRow(page, "travel.md").getByTestId("doc-chunks").textContent()).trim(), "0");
    assert.match(await docRow(page, TRAVEL_ZH_NAME).textContent(), /txt/);
    await eventually(async () =>
      assert.equal(await detail.getByTestId("kb-status").getAttribute("data-status"), "ready"),
    );

    // A search in English and one in Chinese: ranked passages, matched words marked.
    const english = await search(page, "hotel cost per night");
    assert.match(english[0], /^\[handbook:travel\.md#\d+\]$/);
    const firstHit = page.getByTestId("kb-hit").first();
    assert.match(await firstHit.getByTestId("kb-hit-snippet").textContent(), /hotel/i);
    assert.ok((await firstHit.locator("mark").count()) > 0, "the matched words are marked");
    assert.match(await firstHit.getByTestId("kb-hit-heading").textContent(), /Hotels/);
    assert.equal(await firstHit.getByTestId("kb-hit-citation").textContent(), english[0]);
    const chinese = await search(page, "住宿标准");
    assert.match(chinese[0], /^\[handbook:差旅 制度\.txt#\d+\]$/);
    const zhHit = page.getByTestId("kb-hit").first();
    assert.match(await zhHit.locator("mark").first().textContent(), /住宿|标准/);

    // An agent on the scripted model: it searches, then answers citing both passages.
    const hotel = english[0];
    const zhHotel = chinese[0];
    const agent = await scriptedAgent(
      server,
      "handbook-helper",
      [
        { tool_calls: [{ name: "knowledge_search", arguments: { query: "hotel cost per night" } }] },
        { text: `Hotels are capped at 120 EUR per night ${hotel}. 国内住宿标准见${zhHotel}。` },
      ],
      { name: "Handbook Helper" },
    );
    await page.goto(`/agents/${agent.id}`);
    const field = page.getByTestId("field-knowledge-bases");
    await field.getByTestId("knowledge-bases-mode-some").check();
    await field.getByTestId("knowledge-base-option-handbook").check();
    assert.equal(
      await page.getByTestId("knowledge-bases-resolved").textContent(),
      "Resolves to: handbook (1)",
    );
    await page.getByTestId("agent-save").click();
    await page.waitForURL("**/agents");
    const saved = await server.api("GET", `/api/agent/${agent.id}`);
    assert.deepEqual(saved.config_json.context.knowledge_bases, ["handbook"]);

    // The chat: the search's tool card, then the answer with its citations as links.
    await send(page, "Handbook Helper", "How much may a hotel cost?");
    await page.locator('[data-testid="tool-card"][data-tool="knowledge_search"]').waitFor();
    await eventually(async () =>
      assert.equal(await page.getByTestId("run-status").getAttribute("data-status"), "success"),
    );
    // Once the run is done, the streamed answer is the stored one.
    const answer = page.getByTestId("message-assistant").filter({ hasText: "capped at 120 EUR" });
    await eventually(async () => assert.equal(await answer.count(), 1));
    const citations = answer.getByTestId("citation");
    assert.deepEqual(await citations.evaluateAll((els) => els.map((el) => el.dataset.citation)), [
      hotel,
      zhHotel,
    ]);

    // Each opens the passage between its neighbours, with its document and section.
    await answer.locator(`[data-citation="${hotel}"]`).click();
    const dialog = page.getByTestId("citation-dialog");
    await dialog.waitFor();
    await dialog.getByTestId("citation-chunk").waitFor();
    assert.match(await dialog.getByTestId("citation-chunk").textContent(), /120 EUR per night/);
    assert.equal(await dialog.getByTestId("citation-document").textContent(), "travel.md");
    assert.match(await dialog.getByTestId("citation-heading-path").textContent(), /Hotels/);
    assert.equal(await dialog.getByTestId("citation-knowledge-base").textContent(), "Handbook");
    await page.keyboard.press("Escape");
    await dialog.waitFor({ state: "detached" });
    await answer.locator(`[data-citation="${zhHotel}"]`).click();
    await dialog.getByTestId("citation-chunk").waitFor();
    assert.match(await dialog.getByTestId("citation-chunk").textContent(), /住宿标准/);
    assert.equal(await dialog.getByTestId("citation-document").textContent(), TRAVEL_ZH_NAME);

    // From the passage to its knowledge base's page.
    await dialog.getByTestId("citation-knowledge-base").click();
    await page.waitForURL(`**/knowledge/${id}`);
    await waitReady(page, "travel.md");
  },
);

flow(
  "files that cannot be read are refused or fail with a reason, and are retried and deleted",
  async ({ page, server }) => {
    const kb = await server.api("POST", "/api/knowledge-bases", { slug: "broken", name: "Broken files" });
    await signIn(page);
    await page.goto(`/knowledge/${kb.id}`);
    await page.getByTestId("doc-empty").waitFor();

    // A format the server does not read is refused before it is sent.
    await page
      .getByTestId("kb-upload")
      .setInputFiles([file("photo.png", "not really a picture", "image/png")]);
    const refused = page.locator('[data-testid="kb-upload-row"][data-name="photo.png"]');
    await refused.getByTestId("kb-upload-error").waitFor();
    assert.match(await refused.textContent(), /cannot be read/);

    // A "PDF" that is not one: accepted, then its ingestion fails with the reason.
    await page
      .getByTestId("kb-upload")
      .setInputFiles([file("scan.pdf", "plain text, not a PDF", "application/pdf")]);
    const row = docRow(page, "scan.pdf");
    await page.locator('[data-testid="doc-row"][data-name="scan.pdf"][data-status="error"]').waitFor();
    assert.notEqual((await row.getByTestId("doc-error").textContent()).trim(), "");
    await eventually(async () =>
      assert.equal(await page.getByTestId("kb-status").getAttribute("data-status"), "error"),
    );

    // Retry reads it again (and it fails again, saying why).
    const before = (await server.api("GET", `/api/knowledge-bases/${kb.id}/documents`))[0].updated_at;
    await row.getByTestId("doc-retry").click();
    await eventually(async () => {
      const [doc] = await server.api("GET", `/api/knowledge-bases/${kb.id}/documents`);
      assert.notEqual(doc.updated_at, before);
      assert.equal(doc.status, "error");
    });
    await page.locator('[data-testid="doc-row"][data-name="scan.pdf"][data-status="error"]').waitFor();

    // Deleting the document, then the knowledge base.
    await row.getByTestId("doc-delete").click();
    await page.getByTestId("confirm-delete").click();
    await page.getByTestId("doc-empty").waitFor();
    await page.getByTestId("kb-delete").click();
    await page.getByTestId("confirm-delete").click();
    await page.waitForURL("**/knowledge");
    await page.locator('[data-testid="kb-list"], [data-testid="kb-empty"]').first().waitFor();
    assert.equal(await page.getByTestId("kb-row-broken").count(), 0);
    const left = await server.api("GET", "/api/knowledge-bases");
    assert.deepEqual(
      left.filter((k) => k.slug === "broken"),
      [],
    );
  },
);

flow(
  "the knowledge pages in 简体中文 show Chinese and no raw keys",
  async ({ page, server }) => {
    const kb = await server.api("POST", "/api/knowledge-bases", {
      slug: "shou-ce",
      name: "员工手册",
      description: "差旅与报销",
    });
    await signIn(page);
    await page.getByTestId("nav-knowledge").filter({ hasText: "知识库" }).click();
    await page.getByTestId("kb-row-shou-ce").waitFor();
    const noKeys = async (where) => {
      const text = await page.locator("main").innerText();
      assert.doesNotMatch(
        text,
        /\b(knowledge|knowledgeField|citation|common)\.[a-zA-Z]/,
        `${where}: a raw key`,
      );
      assert.match(text, /[\u4e00-\u9fff]/, `${where}: Chinese`);
    };
    assert.match(await page.locator("main h1").textContent(), /知识库/);
    await noKeys("list");

    await page.getByTestId("kb-open-shou-ce").click();
    await page.getByTestId("kb-detail").waitFor();
    await page.getByTestId("doc-empty").waitFor();
    assert.match(await page.getByTestId("kb-status").textContent(), /空/);
    await page.getByTestId("kb-upload").setInputFiles([file(TRAVEL_ZH_NAME, TRAVEL_ZH)]);
    await waitReady(page, TRAVEL_ZH_NAME);
    assert.match(await docRow(page, TRAVEL_ZH_NAME).getByTestId("doc-status").textContent(), /就绪/);
    await page.getByTestId("kb-search-input").fill("伙食补贴");
    await page.getByTestId("kb-search-submit").click();
    await page.getByTestId("kb-hit").first().waitFor();
    assert.match(await page.getByTestId("kb-search-summary").textContent(), /个段落/);
    await noKeys("detail");

    await page.goto(`/knowledge/${kb.id}/edit`);
    await page.getByTestId("kb-field-embedding").check();
    await page.getByTestId("kb-save").click();
    await page.getByTestId("error-embedding-provider").filter({ hasText: "混合检索" }).waitFor();
    await noKeys("edit form");
  },
  { locale: "zh-CN" },
);
