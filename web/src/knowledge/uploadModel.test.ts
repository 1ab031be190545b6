import { describe, expect, test } from "vitest";
import {
  addUploads,
  clearFinished,
  dismissUpload,
  uploadDone,
  uploadFailed,
  uploadFraction,
  uploadProgressed,
  uploadStarted,
  type UploadEntry,
} from "./uploadModel";

const files = [
  { key: "a", name: "travel.md", size: 1000 },
  { key: "b", name: "差旅 制度.TXT", size: 2000 },
  { key: "c", name: "photo.png", size: 300 },
];

function entry(list: UploadEntry[], key: string): UploadEntry {
  return list.find((e) => e.key === key)!;
}

describe("the upload list", () => {
  test("queues readable files and refuses others at once, saying why", () => {
    const { entries, queued } = addUploads([], files);
    expect(queued).toEqual(["a", "b"]);
    expect(entries.map((e) => [e.name, e.state])).toEqual([
      ["travel.md", "queued"],
      ["差旅 制度.TXT", "queued"],
      ["photo.png", "failed"],
    ]);
    expect(entry(entries, "c").error).toMatch(/cannot be read/);
    expect(uploadFraction(entry(entries, "a"))).toBe(0);
  });

  test("each file reports its own progress, then ends uploaded or refused", () => {
    let list = addUploads([], files).entries;
    list = uploadStarted(list, "a");
    list = uploadStarted(list, "b");
    list = uploadProgressed(list, "a", 250, 1000);
    expect(uploadFraction(entry(list, "a"))).toBe(0.25);
    expect(uploadFraction(entry(list, "b"))).toBe(0);
    // The request's own total (the multipart body) replaces the file's size.
    list = uploadProgressed(list, "b", 1100, 2200);
    expect(uploadFraction(entry(list, "b"))).toBe(0.5);
    // A total the browser cannot tell keeps the last known one; progress never passes it.
    list = uploadProgressed(list, "a", 5000, null);
    expect(uploadFraction(entry(list, "a"))).toBe(1);

    list = uploadDone(list, "a", "doc-1");
    list = uploadFailed(list, "b", "file too large: the limit is 1 MiB");
    expect(entry(list, "a")).toMatchObject({ state: "done", documentId: "doc-1", error: null });
    expect(uploadFraction(entry(list, "a"))).toBe(1);
    expect(entry(list, "b")).toMatchObject({ state: "failed", error: "file too large: the limit is 1 MiB" });
  });

  test("progress after an upload ended changes nothing", () => {
    let list = uploadStarted(addUploads([], files).entries, "a");
    list = uploadDone(list, "a", "doc-1");
    expect(uploadProgressed(list, "a", 10, 1000)).toEqual(list);
    expect(uploadProgressed(list, "missing", 10, 1000)).toEqual(list);
  });

  test("finished entries can be cleared or dismissed; waiting and running ones stay", () => {
    let list = addUploads([], files).entries;
    list = uploadStarted(list, "a");
    list = clearFinished(list);
    expect(list.map((e) => e.key)).toEqual(["a", "b"]);
    list = dismissUpload(list, "b");
    expect(list.map((e) => e.key)).toEqual(["a"]);
  });

  test("new files are added after the ones already listed", () => {
    const first = addUploads([], files.slice(0, 1)).entries;
    const { entries, queued } = addUploads(first, [{ key: "d", name: "notes.pdf", size: 5 }]);
    expect(entries.map((e) => e.key)).toEqual(["a", "d"]);
    expect(queued).toEqual(["d"]);
  });
});
