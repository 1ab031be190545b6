import { act, fireEvent, render, screen } from "@testing-library/react";
import { beforeEach, describe, expect, test, vi } from "vitest";
import { ApiError } from "../api/errors";
import type { PutFileOptions } from "../api/files";
import i18n from "../i18n";
import type { Attachments } from "./attachments";
import { Composer } from "./Composer";

interface Put {
  threadId: string;
  path: string;
  options: PutFileOptions;
  resolve: () => void;
  reject: (error: unknown) => void;
}
const puts: Put[] = [];
vi.mock("../api/files", () => ({
  listFolder: async () => ["notes.txt"],
  putFile: (threadId: string, path: string, _body: Blob, options: PutFileOptions) =>
    new Promise((resolve, reject) =>
      puts.push({ threadId, path, options, resolve: () => resolve({ path }), reject }),
    ),
}));

beforeEach(() => {
  puts.length = 0;
});

const file = (name: string, size = 3) => new File(["x".repeat(size)], name, { type: "text/plain" });
const pick = (files: File[]) =>
  fireEvent.change(screen.getByTestId("chat-attach-input"), { target: { files } });
const chips = () =>
  screen.queryAllByTestId("composer-file").map((chip) => `${chip.dataset.name} ${chip.dataset.state}`);
const chip = (name: string) => screen.getAllByTestId("composer-file").find((c) => c.dataset.name === name)!;
/** Lets the upload's awaits run. */
const settle = () => act(async () => await new Promise((resolve) => setTimeout(resolve, 0)));

type Send = (input: string, attachments: Attachments | null) => Promise<boolean>;

function setup(onSend: Send, active = false) {
  const sent = vi.fn(onSend);
  render(<Composer onSend={sent} onStop={() => {}} active={active} />);
  return sent;
}

describe("attaching files in the composer", () => {
  test("picked files become chips with their size; one can be removed", () => {
    setup(async () => true);
    pick([file("a.csv", 2048), file("报告.md")]);
    expect(chips()).toEqual(["a.csv ready", "报告.md ready"]);
    expect(chip("a.csv").textContent).toContain("2.0 KB");
    fireEvent.click(screen.getByRole("button", { name: "Remove a.csv" }));
    expect(chips()).toEqual(["报告.md ready"]);
  });

  test("dropped and pasted files are attached too", () => {
    setup(async () => true);
    fireEvent.drop(screen.getByTestId("composer"), {
      dataTransfer: { files: [file("dropped.png")], types: ["Files"] },
    });
    fireEvent.paste(screen.getByTestId("chat-input"), {
      clipboardData: { files: [file("image.png")], types: ["Files"] },
    });
    expect(chips()).toEqual(["dropped.png ready", "image.png ready"]);
  });

  test("a file over the limit is refused before any upload, the limit named", async () => {
    setup(async () => true);
    pick([new File([new Uint8Array(26 * 1024 * 1024)], "huge.iso"), file("ok.txt")]);
    expect(chips()).toEqual(["ok.txt ready"]);
    expect(screen.getByTestId("composer-refused").textContent).toBe(
      "huge.iso is 26 MB: files over 25 MB cannot be attached.",
    );
    await act(() => i18n.changeLanguage("zh-CN"));
    pick([new File([new Uint8Array(26 * 1024 * 1024)], "huge.iso")]);
    expect(screen.getByTestId("composer-refused").textContent).toBe(
      "huge.iso 大小为 26 MB：超过 25 MB 的文件无法附加。",
    );
  });

  test("files alone can be sent: the send button needs text or a file", () => {
    setup(async () => true);
    const send = screen.getByTestId("chat-send") as HTMLButtonElement;
    expect(send.disabled).toBe(true);
    pick([file("a.csv")]);
    expect(send.disabled).toBe(false);
  });
});

describe("sending with attached files", () => {
  test("uploads them with progress, names them in the message, then clears the box", async () => {
    let message = "";
    const sent = setup(async (input, attachments) => {
      const paths = (await attachments?.upload("t1")) ?? [];
      message = `${input} | ${paths.join(", ")}`;
      return true;
    });
    fireEvent.change(screen.getByTestId("chat-input"), { target: { value: "sum it" } });
    pick([file("a.csv", 200), file("notes.txt")]);
    fireEvent.click(screen.getByTestId("chat-send"));
    await settle();
    expect(sent.mock.calls[0]![1]!.names).toEqual(["a.csv", "notes.txt"]);
    expect(puts.map((p) => `${p.threadId} ${p.path}`)).toEqual(["t1 uploads/a.csv"]);
    expect(chips()).toEqual(["a.csv uploading", "notes.txt ready"]);
    // Files are taken off while they go: nothing to remove mid-send.
    expect(screen.queryByTestId("composer-file-remove")).toBeNull();

    act(() => puts[0]!.options.onProgress!({ loaded: 50, total: 200 }));
    expect(chip("a.csv").textContent).toContain("25");
    expect(screen.getByRole("progressbar", { name: "Upload progress of a.csv" })).toBeTruthy();

    await act(async () => puts[0]!.resolve());
    await settle();
    // `notes.txt` is already in `uploads/`: this one gets a suffix rather than replacing it.
    expect(puts.map((p) => p.path)).toEqual(["uploads/a.csv", "uploads/notes-1.txt"]);
    await act(async () => puts[1]!.resolve());
    await settle();
    expect(message).toBe("sum it | uploads/a.csv, uploads/notes-1.txt");
    expect(chips()).toEqual([]);
    expect((screen.getByTestId("chat-input") as HTMLTextAreaElement).value).toBe("");
  });

  test("a failed upload keeps the text and the files; sending again sends only what failed", async () => {
    const errors: string[] = [];
    let results: string[][] = [];
    const sent = setup(async (_input, attachments) => {
      try {
        results.push(await attachments!.upload("t1"));
        return true;
      } catch (failure) {
        errors.push((failure as Error).message);
        return false;
      }
    });
    fireEvent.change(screen.getByTestId("chat-input"), { target: { value: "look" } });
    pick([file("a.csv"), file("b.png")]);
    fireEvent.click(screen.getByTestId("chat-send"));
    await settle();
    await act(async () => puts[0]!.reject(new ApiError(0, "unreachable", "x")));
    await settle();
    await act(async () => puts[1]!.resolve());
    await settle();
    expect(sent).toHaveBeenCalledTimes(1);
    expect(errors).toEqual([
      "a.csv could not be uploaded: The server could not be reached. Check your connection and try again.",
    ]);
    expect(chips()).toEqual(["a.csv failed", "b.png done"]);
    expect((screen.getByTestId("chat-input") as HTMLTextAreaElement).value).toBe("look");
    expect(results).toEqual([]);

    results = [];
    fireEvent.click(screen.getByTestId("chat-send"));
    await settle();
    expect(puts.map((p) => p.path)).toEqual(["uploads/a.csv", "uploads/b.png", "uploads/a.csv"]);
    await act(async () => puts[2]!.resolve());
    await settle();
    expect(results).toEqual([["uploads/a.csv", "uploads/b.png"]]);
    expect(chips()).toEqual([]);
  });

  test("into another thread (a draft's thread made again), every file is sent again", async () => {
    let attempt = 0;
    setup(async (_input, attachments) => {
      attempt += 1;
      await attachments!.upload(`t${attempt}`);
      return attempt > 1;
    });
    pick([file("a.csv")]);
    fireEvent.click(screen.getByTestId("chat-send"));
    await settle();
    await act(async () => puts[0]!.resolve());
    await settle();
    expect(chips()).toEqual(["a.csv done"]);
    fireEvent.click(screen.getByTestId("chat-send"));
    await settle();
    expect(puts.map((p) => `${p.threadId} ${p.path}`)).toEqual(["t1 uploads/a.csv", "t2 uploads/a.csv"]);
  });

  test("while a run goes the files can still be attached: they are uploaded, then steer it", async () => {
    const sent = setup(async (_input, attachments) => {
      await attachments!.upload("t1");
      return true;
    }, true);
    expect(screen.getByTestId("chat-stop")).toBeTruthy();
    pick([file("more.csv")]);
    fireEvent.change(screen.getByTestId("chat-input"), { target: { value: "also this" } });
    fireEvent.click(screen.getByTestId("chat-send"));
    await settle();
    await act(async () => puts[0]!.resolve());
    await settle();
    expect(sent.mock.calls[0]![0]).toBe("also this");
    expect(chips()).toEqual([]);
  });
});

describe("the message box and the focus", () => {
  const composer = (props: { disabled?: boolean; focusKey?: string }) => (
    <>
      <input data-testid="elsewhere" />
      <Composer onSend={async () => true} onStop={() => {}} active={false} {...props} />
    </>
  );

  test("becoming usable does not take the focus from another field", () => {
    const { rerender } = render(composer({ disabled: true, focusKey: "draft" }));
    screen.getByTestId("elsewhere").focus();
    rerender(composer({ disabled: false, focusKey: "draft" }));
    expect(document.activeElement).toBe(screen.getByTestId("elsewhere"));
  });

  test("becoming usable takes the focus when nothing holds it", () => {
    const { rerender } = render(composer({ disabled: true, focusKey: "draft" }));
    rerender(composer({ disabled: false, focusKey: "draft" }));
    expect(document.activeElement).toBe(screen.getByTestId("chat-input"));
  });

  test("another conversation takes the focus from wherever it is", () => {
    const { rerender } = render(composer({ focusKey: "a" }));
    screen.getByTestId("elsewhere").focus();
    rerender(composer({ focusKey: "b" }));
    expect(document.activeElement).toBe(screen.getByTestId("chat-input"));
  });
});
