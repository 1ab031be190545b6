import { fireEvent, render, screen, waitFor } from "@testing-library/react";
import { describe, expect, test, vi } from "vitest";
import { parseCitation, splitCitations } from "./citations";
import { Markdown } from "./Markdown";

describe("citations in assistant text", () => {
  test("an English citation names its knowledge base, document and passage", () => {
    expect(parseCitation("[handbook:travel.md#3]")).toEqual({
      ref: "[handbook:travel.md#3]",
      knowledgeBase: "handbook",
      document: "travel.md",
      ordinal: 3,
    });
  });

  test("Chinese names, spaces, colons and # in a document name read back whole", () => {
    expect(parseCitation("[手册:差旅 制度.md#0]")).toMatchObject({
      knowledgeBase: "手册",
      document: "差旅 制度.md",
      ordinal: 0,
    });
    expect(parseCitation("[hr-2024:Q&A: C# notes #2.txt#12]")).toMatchObject({
      knowledgeBase: "hr-2024",
      document: "Q&A: C# notes #2.txt",
      ordinal: 12,
    });
  });

  test("text that only looks like a citation is not one", () => {
    for (const text of [
      "[handbook:travel.md]",
      "[handbook:travel.md#x]",
      "[handbook: travel.md#1]",
      "[:travel.md#1]",
      "[handbook:#1]",
      "[hand book:travel.md#1]",
      "[handbook:line\nbreak.md#1]",
      "handbook:travel.md#1",
    ]) {
      expect(parseCitation(text), text).toBeNull();
    }
  });

  test("a sentence splits into its text and its citations, in order", () => {
    const parts = splitCitations("住宿标准见[手册:差旅 制度.md#0]和[handbook:travel.md#3]。Done.");
    expect(parts).toEqual([
      { kind: "text", text: "住宿标准见" },
      {
        kind: "citation",
        citation: {
          ref: "[手册:差旅 制度.md#0]",
          knowledgeBase: "手册",
          document: "差旅 制度.md",
          ordinal: 0,
        },
      },
      { kind: "text", text: "和" },
      {
        kind: "citation",
        citation: {
          ref: "[handbook:travel.md#3]",
          knowledgeBase: "handbook",
          document: "travel.md",
          ordinal: 3,
        },
      },
      { kind: "text", text: "。Done." },
    ]);
    expect(splitCitations("no citation here")).toEqual([{ kind: "text", text: "no citation here" }]);
    expect(splitCitations("")).toEqual([]);
  });

  test("adjacent citations are each their own", () => {
    const parts = splitCitations("[a:x.md#1][b:y.md#2]");
    expect(parts.map((p) => (p.kind === "citation" ? p.citation.ref : p.text))).toEqual([
      "[a:x.md#1]",
      "[b:y.md#2]",
    ]);
  });
});

describe("citations in rendered Markdown", () => {
  const text = [
    "Per diem is **50 EUR** [handbook:travel.md#3], 住宿见[手册:差旅 制度.md#0]。",
    "",
    "- a list item [handbook:travel.md#4]",
    "",
    "`inline [handbook:code.md#1]` and [a link [handbook:link.md#1]](https://example.com)",
    "",
    "```",
    "[handbook:block.md#2]",
    "```",
  ].join("\n");

  test("become buttons in prose, and stay text in code and links", () => {
    const open = vi.fn();
    render(<Markdown text={text} onCitation={open} />);
    const buttons = screen.getAllByTestId("citation");
    expect(buttons.map((b) => b.dataset.citation)).toEqual([
      "[handbook:travel.md#3]",
      "[手册:差旅 制度.md#0]",
      "[handbook:travel.md#4]",
    ]);
    expect(buttons[1]!.textContent).toBe("差旅 制度.md #0");
    expect(buttons[0]!.getAttribute("aria-label")).toContain("[handbook:travel.md#3]");
    expect(document.querySelector("code")!.textContent).toBe("inline [handbook:code.md#1]");
    expect(document.querySelector("a")!.textContent).toBe("a link [handbook:link.md#1]");
    expect(document.querySelector("pre")!.textContent).toContain("[handbook:block.md#2]");

    fireEvent.click(buttons[1]!);
    expect(open).toHaveBeenCalledWith("[手册:差旅 制度.md#0]");
  });

  test("stay plain text where the page does not open them", async () => {
    render(<Markdown text={text} />);
    await waitFor(() => expect(document.querySelector("pre")).not.toBeNull());
    expect(screen.queryAllByTestId("citation")).toEqual([]);
    expect(document.body.textContent).toContain("[handbook:travel.md#3]");
  });
});
