import { act, fireEvent, render, screen } from "@testing-library/react";
import { beforeEach, describe, expect, test, vi } from "vitest";
import { ApiError } from "../api/errors";
import type { KbDocumentView, UploadOptions } from "../api/knowledge";
import { DocumentUpload } from "./DocumentUpload";

interface Call {
  file: File;
  options: UploadOptions;
  resolve: (docs: KbDocumentView[]) => void;
  reject: (error: unknown) => void;
}
const calls: Call[] = [];
vi.mock("../api/knowledge", () => ({
  uploadDocument: (_kbId: string, file: File, options: UploadOptions) =>
    new Promise<KbDocumentView[]>((resolve, reject) => calls.push({ file, options, resolve, reject })),
}));

const doc = (id: string, name: string, status: KbDocumentView["status"], progress = 0) =>
  ({ id, name, status, progress, error: null }) as KbDocumentView;

function pick(files: File[]) {
  fireEvent.change(screen.getByTestId("kb-upload"), { target: { files } });
}
const row = (name: string) => screen.getAllByTestId("kb-upload-row").find((r) => r.dataset.name === name)!;

beforeEach(() => {
  calls.length = 0;
});

describe("the upload area", () => {
  test("sends each file on its own, two at a time, with its own progress and outcome", async () => {
    const uploaded: KbDocumentView[] = [];
    const { rerender } = render(
      <DocumentUpload kbId="kb1" documents={[]} onUploaded={(d) => uploaded.push(d)} />,
    );
    pick([
      new File(["# Travel"], "travel.md"),
      new File(["差旅"], "差旅 制度.txt"),
      new File(["{}"], "rules.json"),
      new File(["x"], "photo.png"),
    ]);
    expect(calls.map((c) => c.file.name)).toEqual(["travel.md", "差旅 制度.txt"]);
    expect(row("rules.json").dataset.state).toBe("queued");
    expect(row("photo.png").dataset.state).toBe("failed");
    expect(row("photo.png").textContent).toMatch(/cannot be read/);

    act(() => calls[0]!.options.onProgress!({ loaded: 50, total: 200 }));
    expect(row("travel.md").textContent).toContain("uploading 25%");

    await act(async () => calls[0]!.resolve([doc("d1", "travel.md", "pending")]));
    expect(uploaded.map((d) => d.id)).toEqual(["d1"]);
    expect(row("travel.md").dataset.state).toBe("done");
    // The next file waiting starts once one is done.
    expect(calls.map((c) => c.file.name)).toEqual(["travel.md", "差旅 制度.txt", "rules.json"]);

    // An uploaded file's row follows its document's ingestion.
    rerender(
      <DocumentUpload
        kbId="kb1"
        documents={[doc("d1", "travel.md", "processing", 0.5)]}
        onUploaded={() => {}}
      />,
    );
    expect(row("travel.md").textContent).toContain("reading 50%");

    await act(async () =>
      calls[1]!.reject(new ApiError(413, "payload_too_large", "a document may be at most 20 MiB")),
    );
    expect(row("差旅 制度.txt").dataset.state).toBe("failed");
    expect(row("差旅 制度.txt").textContent).toContain("at most 20 MiB");

    fireEvent.click(screen.getByText("Clear finished uploads"));
    expect(screen.getAllByTestId("kb-upload-row").map((r) => r.dataset.name)).toEqual(["rules.json"]);
  });

  test("files dropped on the area are uploaded like picked ones", () => {
    render(<DocumentUpload kbId="kb1" documents={[]} onUploaded={() => {}} />);
    const zone = screen.getByTestId("kb-drop-zone");
    fireEvent.dragOver(zone);
    expect(zone.className).toContain("dragging");
    fireEvent.drop(zone, { dataTransfer: { files: [new File(["a"], "notes.md")] } });
    expect(zone.className).not.toContain("dragging");
    expect(calls.map((c) => c.file.name)).toEqual(["notes.md"]);
  });
});
