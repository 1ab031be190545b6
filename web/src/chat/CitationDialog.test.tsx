import { render, screen, waitFor } from "@testing-library/react";
import { MemoryRouter } from "react-router-dom";
import { beforeEach, describe, expect, test, vi } from "vitest";
import { ApiError } from "../api/errors";
import type { KbCitationView, KbChunkView } from "../api/knowledge";
import { CitationDialog } from "./CitationDialog";

// What the server answers, and the citations asked for.
let answer: () => Promise<KbCitationView> = () => Promise.resolve(view);
const asked: string[] = [];
vi.mock("../api/knowledge", () => ({
  readCitation: (ref: string) => {
    asked.push(ref);
    return answer();
  },
}));

const chunk = (ordinal: number, text: string, heading_path: string[] = []): KbChunkView => ({
  ordinal,
  citation: `[手册:差旅 制度.md#${ordinal}]`,
  heading_path,
  start: ordinal * 100,
  end: ordinal * 100 + 99,
  text,
});

const view: KbCitationView = {
  knowledge_base: { id: "kb1", slug: "手册", name: "员工手册" },
  document: { id: "d1", name: "差旅 制度.md" } as KbCitationView["document"],
  ordinal: 3,
  chunks: [
    chunk(2, "交通：优先乘坐高铁。", ["差旅制度", "交通"]),
    chunk(3, "住宿：每晚不超过六百元。", ["差旅制度", "住宿"]),
    chunk(4, "伙食：每天一百元。", ["差旅制度", "伙食"]),
  ],
};

function show(ref = "[手册:差旅 制度.md#3]") {
  return render(
    <MemoryRouter>
      <CitationDialog citation={ref} onClose={() => undefined} />
    </MemoryRouter>,
  );
}

beforeEach(() => {
  asked.length = 0;
});

describe("the cited passage", () => {
  test("is shown between its neighbours, with its document, section and knowledge base", async () => {
    answer = () => Promise.resolve(view);
    show();
    await screen.findByTestId("citation-chunk");
    expect(asked).toEqual(["[手册:差旅 制度.md#3]"]);
    expect(screen.getByTestId("citation-chunk").textContent).toContain("住宿：每晚不超过六百元。");
    expect(screen.getByTestId("citation-chunk").getAttribute("aria-current")).toBe("true");
    expect(screen.getAllByTestId("citation-neighbour").map((li) => li.dataset.ordinal)).toEqual(["2", "4"]);
    expect(screen.getByTestId("citation-document").textContent).toBe("差旅 制度.md");
    expect(screen.getByTestId("citation-heading-path").textContent).toBe("差旅制度 › 住宿");
    expect(screen.getByTestId("citation-knowledge-base").getAttribute("href")).toBe("/knowledge/kb1");
  });

  test("a passage the user cannot see is explained in words", async () => {
    answer = () => Promise.reject(new ApiError(404, "not_found", "no such passage"));
    show("[secret:plan.md#0]");
    const error = await screen.findByTestId("citation-error");
    expect(error.textContent).toMatch(/“plan\.md” or its knowledge base is gone, or not shared with you/);
  });

  test("other failures say what the server said", async () => {
    answer = () => Promise.reject(new ApiError(500, "internal", "boom"));
    show();
    await waitFor(() => expect(screen.getByTestId("citation-error").textContent).toMatch(/went wrong/));
  });
});
