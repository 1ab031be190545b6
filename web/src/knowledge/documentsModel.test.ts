import { describe, expect, test } from "vitest";
import type { KbDocumentView } from "../api/knowledge";
import {
  documentTotals,
  isNewer,
  mergeListing,
  removeDocument,
  sortDocuments,
  upsertDocument,
} from "./documentsModel";

function doc(id: string, patch: Partial<KbDocumentView> = {}): KbDocumentView {
  return {
    id,
    knowledge_base_id: "kb",
    name: `${id}.md`,
    format: "md",
    size_bytes: 100,
    version: 1,
    status: "pending",
    progress: 0,
    error: null,
    chunk_count: 0,
    uploaded_by: null,
    created_at: "2026-12-01T10:00:00Z",
    updated_at: "2026-12-01T10:00:00Z",
    ...patch,
  };
}

describe("a knowledge base's documents, fed in any order", () => {
  test("a later version, a later change or a later stage is newer", () => {
    const base = doc("a");
    expect(isNewer(doc("a", { version: 2 }), base)).toBe(true);
    expect(isNewer(base, doc("a", { version: 2 }))).toBe(false);
    expect(isNewer(doc("a", { updated_at: "2026-12-01T10:00:01Z", status: "pending" }), base)).toBe(true);
    expect(isNewer(doc("a", { status: "processing" }), base)).toBe(true);
    expect(isNewer(base, doc("a", { status: "processing" }))).toBe(false);
    expect(
      isNewer(
        doc("a", { status: "processing", progress: 0.5 }),
        doc("a", { status: "processing", progress: 0.2 }),
      ),
    ).toBe(true);
    expect(
      isNewer(
        doc("a", { status: "processing", progress: 0.2 }),
        doc("a", { status: "processing", progress: 0.5 }),
      ),
    ).toBe(false);
    // A retry: the failed document waits again, later.
    expect(
      isNewer(
        doc("a", { status: "pending", updated_at: "2026-12-01T10:05:00Z" }),
        doc("a", { status: "error" }),
      ),
    ).toBe(true);
  });

  test("an upload's answer arriving after the stream said more does not undo it", () => {
    const processing = doc("a", { status: "processing", progress: 0.4 });
    let list = upsertDocument([], processing);
    list = upsertDocument(list, doc("a"));
    expect(list).toEqual([processing]);
    list = upsertDocument(
      list,
      doc("a", { status: "ready", chunk_count: 3, updated_at: "2026-12-01T10:00:02Z" }),
    );
    expect(list[0]).toMatchObject({ status: "ready", chunk_count: 3 });
  });

  test("documents are listed by name; removal drops one", () => {
    let list = upsertDocument([], doc("b"));
    list = upsertDocument(list, doc("a"));
    list = upsertDocument(list, doc("c", { name: "中文.txt" }));
    expect(list.map((d) => d.id)).toEqual(["a", "b", "c"]);
    expect(removeDocument(list, "b").map((d) => d.id)).toEqual(["a", "c"]);
    expect(sortDocuments([doc("z", { name: "a.md" }), doc("y", { name: "a.md" })]).map((d) => d.id)).toEqual([
      "y",
      "z",
    ]);
  });

  test("a listing wins, except for what the stream said while it was on its way", () => {
    const current = [
      doc("a", { status: "ready", updated_at: "2026-12-01T10:00:05Z" }),
      doc("b", { status: "processing" }),
      doc("gone"),
    ];
    const listing = [
      doc("a", { status: "processing" }),
      doc("b", { status: "ready", updated_at: "2026-12-01T10:00:09Z" }),
      doc("removed"),
    ];
    // "a" changed and "removed" went after the listing was asked for; "new" came by upload.
    const merged = mergeListing([...current, doc("new")], listing, new Set(["a", "removed", "new"]));
    expect(merged.map((d) => [d.id, d.status])).toEqual([
      ["a", "ready"],
      ["b", "ready"],
      ["new", "pending"],
    ]);
  });

  test("a touched document the listing knows newer is taken from the listing", () => {
    const merged = mergeListing(
      [doc("a", { status: "processing" })],
      [doc("a", { status: "ready", updated_at: "2026-12-01T10:00:09Z" })],
      new Set(["a"]),
    );
    expect(merged[0]!.status).toBe("ready");
  });

  test("totals count documents, bytes, passages, busy and failed ones", () => {
    expect(
      documentTotals([
        doc("a", { status: "ready", chunk_count: 4, size_bytes: 1000 }),
        doc("b", { status: "processing" }),
        doc("c", { status: "pending" }),
        doc("d", { status: "error", error: "not a PDF" }),
      ]),
    ).toEqual({ documents: 4, bytes: 1300, chunks: 4, busy: 2, failed: 1 });
  });
});
