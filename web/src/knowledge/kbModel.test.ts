import { describe, expect, test } from "vitest";
import type { KnowledgeBaseView } from "../api/knowledge";
import { ApiError } from "../api/errors";
import {
  buildKbWrite,
  clearKbEdited,
  emptyKbForm,
  formFromKnowledgeBase,
  isAcceptedFile,
  kbErrorsFromFailure,
  kbFieldForPath,
  sortKnowledgeBases,
} from "./kbModel";

const stored = {
  id: "kb1",
  slug: "handbook",
  name: "Handbook",
  description: "Company rules",
  settings: {
    chunk_size: 600,
    chunk_overlap: 60,
    embedding: { provider: "openai", model: "text-embedding-3-small" },
  },
  search: "hybrid",
  share_config: { visibility: "users", users: ["u2"] },
} as unknown as KnowledgeBaseView;

describe("the knowledge base form", () => {
  test("a new form sends the defaults, BM25 only, private", () => {
    const built = buildKbWrite({ ...emptyKbForm(), name: " Handbook ", slug: "handbook" }, null);
    expect(built).toEqual({
      ok: true,
      write: {
        slug: "handbook",
        name: "Handbook",
        description: "",
        settings: { chunk_size: 800, chunk_overlap: 120, embedding: null },
        share_config: { visibility: "private" },
      },
    });
  });

  test("a stored knowledge base fills the form and saves back as it was, its share lists kept", () => {
    const form = formFromKnowledgeBase(stored);
    expect(form).toMatchObject({
      chunkSize: "600",
      chunkOverlap: "60",
      embedding: true,
      embeddingProvider: "openai",
      shared: false,
    });
    const built = buildKbWrite({ ...form, shared: true }, stored);
    expect(built.ok && built.write).toEqual({
      slug: "handbook",
      name: "Handbook",
      description: "Company rules",
      settings: {
        chunk_size: 600,
        chunk_overlap: 60,
        embedding: { provider: "openai", model: "text-embedding-3-small" },
      },
      share_config: { visibility: "public", users: ["u2"] },
    });
  });

  test("passage settings are checked as the server checks them", () => {
    const errors = (patch: Partial<ReturnType<typeof emptyKbForm>>) => {
      const built = buildKbWrite({ ...emptyKbForm(), ...patch }, null);
      return built.ok ? {} : built.errors;
    };
    expect(errors({ chunkSize: "abc" })).toMatchObject({ "chunk-size": "Enter a whole number." });
    expect(errors({ chunkSize: "99" })["chunk-size"]).toMatch(/100 to 4000/);
    expect(errors({ chunkSize: "4001" })["chunk-size"]).toMatch(/100 to 4000/);
    expect(errors({ chunkSize: "200", chunkOverlap: "101" })["chunk-overlap"]).toMatch(/100/);
    expect(errors({ chunkSize: "200", chunkOverlap: "100" })).toEqual({});
    expect(errors({ chunkOverlap: "-1" })["chunk-overlap"]).toBe("Enter a whole number.");
    expect(errors({ embedding: true, embeddingProvider: "openai" })).toEqual({
      "embedding-model": "Required for hybrid search.",
    });
  });

  test("server errors land at the field their payload path names", () => {
    expect(kbFieldForPath("slug")).toBe("slug");
    expect(kbFieldForPath("settings.chunk_overlap")).toBe("chunk-overlap");
    expect(kbFieldForPath("settings.embedding.model")).toBe("embedding-model");
    expect(kbFieldForPath("settings.embedding")).toBe("embedding");
    expect(kbFieldForPath("share_config.users[0]")).toBe("share");
    expect(kbFieldForPath("other")).toBeNull();
    const shown = kbErrorsFromFailure(new ApiError(409, "conflict", "slug `handbook` is taken", "slug"));
    expect(shown.fields).toEqual({ slug: "slug `handbook` is taken" });
    expect(shown.form).toMatch(/check the marked field/);
    expect(kbErrorsFromFailure(new Error("boom"))).toEqual({ fields: {}, form: "boom" });
  });

  test("editing a field clears its errors and those it decides", () => {
    const errors = { "chunk-size": "x", "chunk-overlap": "y", "embedding-model": "z", name: "n" };
    expect(clearKbEdited(errors, { chunkSize: "500" })).toEqual({ "embedding-model": "z", name: "n" });
    expect(clearKbEdited(errors, { embedding: false })).toEqual({
      "chunk-size": "x",
      "chunk-overlap": "y",
      name: "n",
    });
  });

  test("the list is by name, then slug", () => {
    const kb = (slug: string, name: string) => ({ slug, name }) as KnowledgeBaseView;
    expect(
      sortKnowledgeBases([kb("b", "Beta"), kb("a", "alpha"), kb("c", "Alpha")]).map((k) => k.slug),
    ).toEqual(["a", "c", "b"]);
  });

  test("the upload takes the formats the server reads", () => {
    for (const name of [
      "a.txt",
      "B.MD",
      "c.html",
      "d.htm",
      "e.pdf",
      "f.docx",
      "g.csv",
      "h.json",
      "差旅.markdown",
    ]) {
      expect(isAcceptedFile(name), name).toBe(true);
    }
    for (const name of ["a.doc", "b.png", "README", ".md", "c.md.zip"]) {
      expect(isAcceptedFile(name), name).toBe(false);
    }
  });
});
