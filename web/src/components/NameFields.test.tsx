import { fireEvent, render, screen } from "@testing-library/react";
import { useState } from "react";
import { describe, expect, test } from "vitest";
import i18n from "../i18n";
import { NameFields, type NameValues } from "./NameFields";

function Harness({ initial, isNew = true }: { initial: NameValues; isNew?: boolean }) {
  const [form, setForm] = useState(initial);
  return (
    <NameFields
      prefix="kb-"
      texts="knowledge.form"
      form={form}
      errors={{ slug: form.slug.startsWith("-") ? "Starts with a dash" : undefined }}
      onChange={(patch) => setForm((f) => ({ ...f, ...patch }))}
      slugFixed={!isNew}
      slugHint={isNew ? "Lower-case letters" : "Fixed"}
      descriptionHint="What it holds"
      slugFollowsName={isNew}
      slugKind="kb"
    />
  );
}

const value = (testId: string) => (screen.getByTestId(testId) as HTMLInputElement).value;
const type = (testId: string, text: string) =>
  fireEvent.change(screen.getByTestId(testId), { target: { value: text } });

describe("the name section of a resource form", () => {
  test("is headed and labelled in the form's words, with the ids of its prefix", () => {
    render(<Harness initial={{ name: "", slug: "", description: "" }} />);
    const section = screen.getByRole("region", { name: "Display" });
    expect(section.getAttribute("aria-labelledby")).toBe("kb-section-display");
    expect(screen.getByLabelText("Name").id).toBe("kb-input-name");
    expect(screen.getByLabelText("Slug").getAttribute("data-testid")).toBe("kb-field-slug");
    expect(screen.getByLabelText("Description").tagName).toBe("TEXTAREA");
    expect(screen.getByText("What it holds").className).toBe("hint");
  });

  test("a new resource's slug follows its name until the slug is edited", () => {
    render(<Harness initial={{ name: "", slug: "", description: "" }} />);
    type("kb-field-name", "Travel Handbook");
    expect(value("kb-field-slug")).toBe("travel-handbook");
    type("kb-field-slug", "travel");
    type("kb-field-name", "Travel Handbook 2026");
    expect(value("kb-field-slug")).toBe("travel");
  });

  test("a Chinese name's slug follows it in pinyin, word by word", () => {
    render(<Harness initial={{ name: "", slug: "", description: "" }} />);
    type("kb-field-name", "产品");
    expect(value("kb-field-slug")).toBe("chanpin");
    type("kb-field-name", "产品手册");
    expect(value("kb-field-slug")).toBe("chanpin-shouce");
  });

  test("a name that spells no slug gets a random one that stays while the name changes", () => {
    render(<Harness initial={{ name: "", slug: "", description: "" }} />);
    type("kb-field-name", "🚀");
    const fallback = value("kb-field-slug");
    expect(fallback).toMatch(/^kb-[a-z0-9]{4}$/);
    type("kb-field-name", "🚀🚀");
    expect(value("kb-field-slug")).toBe(fallback);
    type("kb-field-name", "🚀 Rocket");
    expect(value("kb-field-slug")).toBe("rocket");
    type("kb-field-name", "");
    expect(value("kb-field-slug")).toBe("");
  });

  test("an existing resource keeps its slug", () => {
    render(<Harness initial={{ name: "Handbook", slug: "handbook", description: "" }} isNew={false} />);
    type("kb-field-name", "Staff handbook");
    expect(value("kb-field-slug")).toBe("handbook");
    expect((screen.getByTestId("kb-field-slug") as HTMLInputElement).readOnly).toBe(true);
    expect(screen.getByText("Fixed")).toBeTruthy();
  });

  test("an error is shown under its field and marks the control", () => {
    render(<Harness initial={{ name: "x", slug: "-x", description: "" }} isNew={false} />);
    expect(screen.getByTestId("error-slug").textContent).toBe("Starts with a dash");
    expect(screen.getByTestId("kb-field-slug").getAttribute("aria-describedby")).toBe("error-slug");
  });

  test("reads 简体中文 too", async () => {
    await i18n.changeLanguage("zh-CN");
    render(<Harness initial={{ name: "", slug: "", description: "" }} />);
    expect(screen.getByRole("heading").textContent).toBe("显示");
  });
});
