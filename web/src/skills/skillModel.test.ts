import { describe, expect, test } from "vitest";
import type { SkillView } from "../api/skills";
import {
  ALL_SKILLS,
  frontmatterRows,
  skillNameOptions,
  sortSkills,
  splitFrontmatter,
  uploadContentType,
} from "./skillModel";

function skill(patch: Partial<SkillView>): SkillView {
  return {
    id: "builtin:x",
    name: "x",
    description: "",
    source: "builtin",
    license: null,
    compatibility: null,
    metadata: {},
    allowed_tools: [],
    owner_id: null,
    share_config: null,
    version: "v",
    file_count: 1,
    size_bytes: 10,
    path: "/home/gem/skills/x/SKILL.md",
    shadowed: false,
    can_manage: false,
    created_at: null,
    updated_at: null,
    ...patch,
  };
}

describe("SKILL.md frontmatter for display", () => {
  test("the frontmatter is split off and the body keeps its Markdown", () => {
    const text = "---\nname: e2e-notes\ndescription: Notes\n---\n\n# Notes\n\nBody `code`\n";
    expect(splitFrontmatter(text)).toEqual({
      frontmatter: "name: e2e-notes\ndescription: Notes",
      body: "# Notes\n\nBody `code`\n",
    });
  });

  test("a BOM and CRLF line endings are accepted", () => {
    const text = "\uFEFF---\r\nname: a\r\n---\r\nHello\r\n";
    expect(splitFrontmatter(text)).toEqual({ frontmatter: "name: a", body: "Hello\n" });
  });

  test("without an opening or closing line the whole text is the body", () => {
    expect(splitFrontmatter("# Just Markdown\n---\n")).toEqual({
      frontmatter: null,
      body: "# Just Markdown\n---\n",
    });
    expect(splitFrontmatter("---\nname: a\nno closing line")).toEqual({
      frontmatter: null,
      body: "---\nname: a\nno closing line",
    });
  });

  test("a horizontal rule in the body stays in the body", () => {
    expect(splitFrontmatter("---\nname: a\n---\none\n\n---\n\ntwo").body).toBe("one\n\n---\n\ntwo");
  });

  test("the fields table lists what is set, metadata by key", () => {
    const rows = frontmatterRows(
      skill({
        name: "csv-data",
        description: "Tables",
        license: "Apache-2.0",
        allowed_tools: ["execute", "read_file"],
        metadata: { author: "ars" },
      }),
    );
    expect(rows).toEqual([
      ["name", "csv-data"],
      ["description", "Tables"],
      ["license", "Apache-2.0"],
      ["allowed-tools", "execute read_file"],
      ["metadata.author", "ars"],
    ]);
  });
});

describe("skill uploads and listing", () => {
  test("archives go as zip, SKILL.md as Markdown, anything else is refused", () => {
    expect(uploadContentType("notes.zip")).toBe("application/zip");
    expect(uploadContentType("Notes.SKILL")).toBe("application/zip");
    expect(uploadContentType("SKILL.md")).toBe("text/markdown");
    expect(uploadContentType("notes.tar.gz")).toBeNull();
  });

  test("skills sort by name, the winning source of a name first", () => {
    const sorted = sortSkills([
      skill({ id: "b", name: "b" }),
      skill({ id: "builtin:a", name: "a", source: "builtin", shadowed: true }),
      skill({ id: "personal:a", name: "a", source: "personal" }),
      skill({ id: "u1", name: "a", source: "shared", shadowed: true }),
    ]);
    expect(sorted.map((s) => s.id)).toEqual(["personal:a", "u1", "builtin:a", "b"]);
  });
});

describe("agent form skills field", () => {
  const visible = [
    skill({ name: "csv-data" }),
    skill({ id: "u1", name: "csv-data", source: "shared", shadowed: false }),
    skill({ name: "delegate-research" }),
  ];

  test("each visible name is offered once, with stored names no longer visible", () => {
    expect(skillNameOptions(visible, null)).toEqual(["csv-data", "delegate-research"]);
    expect(skillNameOptions(visible, ["gone", ALL_SKILLS])).toEqual([
      "csv-data",
      "delegate-research",
      "gone",
    ]);
  });
});
