import { fireEvent, render, screen } from "@testing-library/react";
import { afterEach, describe, expect, test, vi } from "vitest";
import { ApiError, decodeError } from "../api/errors";
import i18n from "../i18n";
import { SkillUpload } from "./SkillUpload";

const uploadSkill = vi.fn();
vi.mock("../api/skills", () => ({ uploadSkill: (...args: unknown[]) => uploadSkill(...args) }));

afterEach(async () => {
  uploadSkill.mockReset();
  await i18n.changeLanguage("en");
});

async function refusedWith(failure: ApiError) {
  uploadSkill.mockRejectedValue(failure);
  render(<SkillUpload onUploaded={() => {}} />);
  const file = new File(["---\nname: notes\n---\n"], "SKILL.md", { type: "text/markdown" });
  fireEvent.change(screen.getByTestId("skill-upload"), { target: { files: [file] } });
  return (await screen.findByTestId("skill-upload-error")).textContent;
}

describe("a refused skill upload names what to click, not an API parameter", () => {
  test("a shared skill of the same name points to the Replace box", async () => {
    const failure = decodeError(409, {
      error: {
        code: "conflict",
        message:
          "a shared skill named `notes` already exists; upload with replace=true to make this its new version",
        field: "frontmatter.name",
        reason: "skill_exists",
        params: { field: "frontmatter.name", name: "notes" },
      },
    });
    await i18n.changeLanguage("zh-CN");
    const text = await refusedWith(failure);
    expect(text).toContain("“替换同名的技能”");
    expect(text).not.toContain("replace=true");
  });

  test("a personal skill of the same name points to the Replace box too", async () => {
    const failure = decodeError(409, {
      error: {
        code: "conflict",
        message: "skill `notes` already exists; upload with replace=true to replace it, or delete it first",
        field: "frontmatter.name",
        reason: "skill_exists",
        params: { field: "frontmatter.name", name: "notes" },
      },
    });
    const text = await refusedWith(failure);
    expect(text).toContain("“Replace a skill of the same name”");
    expect(text).not.toContain("replace=true");
  });
});
