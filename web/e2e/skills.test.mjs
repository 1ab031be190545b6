// The Skills page and the skills an agent gets: uploading a skill archive (and the server's
// refusals shown as it words them), its detail (rendered SKILL.md, files), choosing it in the
// agent form, and a chat whose agent reads the skill's file in the sandbox.

import assert from "node:assert/strict";
import { mkdtemp, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eventually, scriptedAgent, signIn, useServer } from "./harness.mjs";

const flow = useServer();

const MARKER = "MARKER-7f3a";

const SKILL_MD = `---
name: e2e-notes
description: Notes for the e2e test
license: MIT
---

# E2E notes

The secret word is ${MARKER}.

- first point
- second point
`;

const EXTRA_MD = "# Extra\n\nMore notes, in a reference file.\n";

// A minimal zip writer: stored (uncompressed) entries, enough for a skill archive.
const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes) {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** A zip archive of `files` ({path: text}), every entry stored. */
function zip(files) {
  const locals = [];
  const centrals = [];
  let offset = 0;
  for (const [path, text] of Object.entries(files)) {
    const name = Buffer.from(path, "utf8");
    const data = Buffer.from(text, "utf8");
    const crc = crc32(data);
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    local.writeUInt16LE(20, 4); // version needed
    local.writeUInt16LE(0x0800, 6); // UTF-8 names
    local.writeUInt16LE(0, 8); // stored
    local.writeUInt16LE(0, 10); // time
    local.writeUInt16LE(0x21, 12); // date: 1980-01-01
    local.writeUInt32LE(crc, 14);
    local.writeUInt32LE(data.length, 18);
    local.writeUInt32LE(data.length, 22);
    local.writeUInt16LE(name.length, 26);
    local.writeUInt16LE(0, 28);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE(20, 4); // made by
    central.writeUInt16LE(20, 6);
    central.writeUInt16LE(0x0800, 8);
    central.writeUInt16LE(0, 10);
    central.writeUInt16LE(0, 12);
    central.writeUInt16LE(0x21, 14);
    central.writeUInt32LE(crc, 16);
    central.writeUInt32LE(data.length, 20);
    central.writeUInt32LE(data.length, 24);
    central.writeUInt16LE(name.length, 28);
    central.writeUInt32LE(offset, 42);
    locals.push(local, name, data);
    centrals.push(central, name);
    offset += local.length + name.length + data.length;
  }
  const directory = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(centrals.length / 2, 8);
  end.writeUInt16LE(centrals.length / 2, 10);
  end.writeUInt32LE(directory.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, directory, end]);
}

/** Writes `bytes` to a fresh temporary file named `name` and answers its path. */
async function tempFile(name, bytes) {
  const dir = await mkdtemp(join(tmpdir(), "ars-e2e-skill-"));
  const path = join(dir, name);
  await writeFile(path, bytes);
  return path;
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

flow("a skill zip is uploaded, shown, chosen for an agent and read in a chat", async ({ page, server }) => {
  await signIn(page);
  await page.getByTestId("nav-skills").click();
  await page.waitForURL("**/skills");

  // Upload: the archive holds one top folder named after the skill.
  const archive = await tempFile(
    "e2e-notes.zip",
    zip({ "e2e-notes/SKILL.md": SKILL_MD, "e2e-notes/references/extra.md": EXTRA_MD }),
  );
  await page.getByTestId("skill-upload-target").selectOption("shared");
  await page.getByTestId("skill-upload").setInputFiles(archive);
  const row = page.getByTestId("skill-row-e2e-notes");
  await row.waitFor();
  assert.equal((await row.getByTestId("skill-source").textContent()).trim(), "Shared");
  assert.equal(await page.getByTestId("skill-upload-error").count(), 0);
  const listed = (await server.api("GET", "/api/skills")).find((s) => s.name === "e2e-notes");
  assert.equal(listed.source, "shared");
  assert.equal(listed.path, "/home/gem/skills/e2e-notes/SKILL.md");

  // The same name again, without Replace: the 409 points to the box to tick, not to an API
  // parameter.
  await page.getByTestId("skill-upload").setInputFiles(archive);
  const error = page.getByTestId("skill-upload-error");
  await error.waitFor();
  assert.match(await error.textContent(), /“Replace a skill of the same name”/);
  assert.doesNotMatch(await error.textContent(), /replace=true/);

  // The detail: the body rendered without its frontmatter, the fields as a table, the files.
  await row.getByTestId("skill-open-e2e-notes").click();
  const detail = page.getByTestId("skill-detail");
  await detail.waitFor();
  const body = detail.getByTestId("skill-body");
  await body.locator("h1", { hasText: "E2E notes" }).waitFor();
  assert.match(await body.textContent(), new RegExp(MARKER));
  assert.equal(await body.locator("li").count(), 2);
  assert.doesNotMatch(await body.textContent(), /description: Notes/);
  assert.match(await detail.getByTestId("skill-frontmatter").textContent(), /Notes for the e2e test/);
  await detail.getByTestId("skill-file-SKILL.md").waitFor();
  await detail.getByTestId("skill-file-references/extra.md").click();
  await eventually(async () =>
    assert.match(
      await detail.getByTestId("skill-file-content").textContent(),
      /More notes, in a reference file/,
    ),
  );

  // An agent reading the skill's SKILL.md where agents see it; its skills chosen in the form.
  const agent = await scriptedAgent(
    server,
    "skill-reader",
    [
      { tool_calls: [{ name: "read_file", arguments: { path: "/home/gem/skills/e2e-notes/SKILL.md" } }] },
      { text: "{{last_tool_result}}" },
    ],
    { name: "Skill Reader", context: { tools: ["read_file"] } },
  );
  await page.goto(`/agents/${agent.id}`);
  const skills = page.getByTestId("field-skills");
  await skills.getByTestId("skills-mode-some").check();
  await skills.getByTestId("skill-option-e2e-notes").check();
  assert.equal(await skills.getByTestId("skills-mode-all").isChecked(), false);
  assert.equal(await page.getByTestId("skills-resolved").textContent(), "Resolves to: e2e-notes (1)");
  await page.getByTestId("agent-save").click();
  await page.waitForURL("**/agents");
  const saved = await server.api("GET", `/api/agent/${agent.id}`);
  assert.deepEqual(saved.config_json.context.skills, ["e2e-notes"]);

  // The resolved context lists the skill a run will be offered.
  await page.getByTestId("agent-resolved-skill-reader").click();
  await page.getByTestId("offered-skills").getByTestId("offered-skill-e2e-notes").waitFor();
  await page.keyboard.press("Escape");

  await send(page, "Skill Reader", "what does the skill say?");
  const answer = page.getByTestId("message-assistant").filter({ hasText: MARKER });
  await answer.waitFor();
  await eventually(async () =>
    assert.equal(await page.getByTestId("run-status").getAttribute("data-status"), "success"),
  );
});

flow(
  "an invalid skill is refused with the server's message, and a skill can be deleted",
  async ({ page, server }) => {
    await signIn(page);
    await page.goto("/skills");

    // A SKILL.md whose name breaks the naming rules: a 422 naming the problem.
    const bad = await tempFile("SKILL.md", "---\nname: Not_A_Name\ndescription: Broken\n---\nBody\n");
    await page.getByTestId("skill-upload").setInputFiles(bad);
    const error = page.getByTestId("skill-upload-error");
    await error.waitFor();
    assert.match(await error.textContent(), /name/i);
    assert.equal(await page.getByTestId("skill-row-Not_A_Name").count(), 0);

    // A personal skill from a lone SKILL.md, then deleted from its detail page.
    const md = await tempFile(
      "SKILL.md",
      "---\nname: e2e-scratch\ndescription: Scratch notes\n---\nScratch body\n",
    );
    await page.getByTestId("skill-upload-target").selectOption("personal");
    await page.getByTestId("skill-upload").setInputFiles(md);
    const row = page.getByTestId("skill-row-e2e-scratch");
    await row.waitFor();
    assert.equal((await row.getByTestId("skill-source").textContent()).trim(), "Personal");
    await row.getByTestId("skill-open-e2e-scratch").click();
    await page.getByTestId("skill-detail").getByText("Scratch body").waitFor();
    await page.getByTestId("skill-delete").click();
    await page.getByTestId("confirm-delete").click();
    await page.waitForURL("**/skills");
    await page.getByTestId("skill-list").waitFor();
    assert.equal(await page.getByTestId("skill-row-e2e-scratch").count(), 0);
    const names = (await server.api("GET", "/api/skills")).map((s) => s.name);
    assert.ok(!names.includes("e2e-scratch"));

    // Built-in skills are listed as such and cannot be deleted.
    const builtin = (await server.api("GET", "/api/skills")).find((s) => s.source === "builtin");
    assert.ok(builtin, "the server ships built-in skills");
    const builtinRow = page.locator(`[data-skill-id="${builtin.id}"]`);
    assert.equal((await builtinRow.getByTestId("skill-source").textContent()).trim(), "Built-in");
    await builtinRow.getByTestId(`skill-open-${builtin.name}`).click();
    await page.getByTestId("skill-detail").waitFor();
    await page.getByTestId("skill-body").locator("h1, h2").first().waitFor();
    assert.equal(await page.getByTestId("skill-delete").count(), 0);
  },
);
