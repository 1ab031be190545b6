import { describe, expect, test } from "vitest";
import { workdirPath } from "../api/files";
import { parseCsv, previewKind } from "./preview";

describe("workdir file previews", () => {
  test("each file gets the preview its kind allows", () => {
    expect(previewKind("notes/README.md")).toBe("markdown");
    expect(previewKind("data.csv")).toBe("csv");
    expect(previewKind("plot.png")).toBe("image");
    expect(previewKind("main.rs")).toBe("text");
    expect(previewKind("archive.zip", "application/zip")).toBe("none");
    expect(previewKind("unknown", "text/plain; charset=utf-8")).toBe("text");
  });

  test("an SVG is shown as text, never rendered, since it can carry script", () => {
    expect(previewKind("logo.svg", "image/svg+xml")).toBe("text");
  });

  test("CSV fields may be quoted, hold commas, quotes and newlines, and Chinese", () => {
    expect(parseCsv('名称,说明\n"a, b","say ""hi"""\n"two\nlines",x\n')).toEqual([
      ["名称", "说明"],
      ["a, b", 'say "hi"'],
      ["two\nlines", "x"],
    ]);
    expect(parseCsv("a\tb\n1\t2", { tab: true })).toEqual([
      ["a", "b"],
      ["1", "2"],
    ]);
    expect(parseCsv("1\n2\n3\n", { limit: 2 })).toHaveLength(2);
  });

  test("a tool's path argument maps into the workdir, or to nothing outside it", () => {
    const workdir = "/home/gem/user-data/threads/t1";
    expect(workdirPath("out/report.md", workdir)).toBe("out/report.md");
    expect(workdirPath("./out//report.md", workdir)).toBe("out/report.md");
    expect(workdirPath("/home/gem/user-data/threads/t1/a.txt", workdir)).toBe("a.txt");
    expect(workdirPath("/home/gem/user-data/threads/t10/a.txt", workdir)).toBeNull();
    expect(workdirPath("../escape.txt", workdir)).toBeNull();
    expect(workdirPath("/etc/passwd", workdir)).toBeNull();
  });
});
