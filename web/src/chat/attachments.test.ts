import { beforeEach, describe, expect, test, vi } from "vitest";
import { ApiError } from "../api/errors";
import type { PutFileOptions } from "../api/files";
import i18n from "../i18n";
import {
  ATTACHMENT_LIMIT,
  refusal,
  sanitizeName,
  sendWithAttachments,
  splitAttachments,
  uniqueName,
  uploadAttachment,
  uploadFailure,
  withAttachments,
  type Attachments,
  type SendSteps,
} from "./attachments";

const puts: { path: string; options: PutFileOptions }[] = [];
let existing = new Set<string>();
vi.mock("../api/files", () => ({
  listFolder: async () => [...existing],
  putFile: async (_thread: string, path: string, _body: Blob, options: PutFileOptions) => {
    puts.push({ path, options });
    if (existing.has(path)) throw new ApiError(412, "precondition_failed", "exists");
    existing.add(path);
    return { path };
  },
}));

beforeEach(() => {
  puts.length = 0;
  existing = new Set();
});

describe("the name an attached file gets in the workdir", () => {
  test("keeps an ordinary name, Chinese included", () => {
    expect(sanitizeName("data.csv")).toBe("data.csv");
    expect(sanitizeName("差旅 制度.txt")).toBe("差旅 制度.txt");
  });

  test("is one name: no folders, controls, bidi marks or commas, never . or ..", () => {
    expect(sanitizeName("../../etc/passwd")).toBe(".._.._etc_passwd");
    expect(sanitizeName("C:\\Users\\me\\a.txt")).toBe("C:_Users_me_a.txt");
    expect(sanitizeName("a\u0000b\nc\u202Egpj.exe")).toBe("abcgpj.exe");
    expect(sanitizeName("a, b.csv")).toBe("a_ b.csv");
    expect(sanitizeName("  spaced.md  ")).toBe("spaced.md");
    expect(sanitizeName("..")).toBe("file");
    expect(sanitizeName("")).toBe("file");
  });

  test("is at most 255 bytes, its extension kept, never cut inside a character", () => {
    const long = sanitizeName(`${"报".repeat(200)}.csv`);
    expect(new TextEncoder().encode(long).length).toBeLessThanOrEqual(255);
    expect(long.endsWith("报.csv")).toBe(true);
  });

  test("a name already there gets a suffix instead of replacing it", () => {
    expect(uniqueName("a.csv", new Set())).toBe("a.csv");
    expect(uniqueName("a.csv", new Set(["a.csv"]))).toBe("a-1.csv");
    expect(uniqueName("a.csv", new Set(["a.csv", "a-1.csv"]))).toBe("a-2.csv");
    expect(uniqueName("backup.tar.gz", new Set(["backup.tar.gz"]))).toBe("backup-1.tar.gz");
    expect(uniqueName(".env", new Set([".env"]))).toBe(".env-1");
    expect(uniqueName("README", new Set(["README"]))).toBe("README-1");
  });
});

describe("the message that names the files", () => {
  test("is the text, then a line in English listing the paths", () => {
    expect(withAttachments("Sum the column", ["uploads/a.csv", "uploads/b.png"])).toBe(
      "Sum the column\n\nAttached files: uploads/a.csv, uploads/b.png",
    );
    expect(withAttachments("  ", ["uploads/a.csv"])).toBe("Attached files: uploads/a.csv");
    expect(withAttachments("just text", [])).toBe("just text");
  });

  test("is split back into the text and the files for its bubble", () => {
    expect(splitAttachments("Sum it\n\nAttached files: uploads/a.csv, uploads/b c.png")).toEqual({
      text: "Sum it",
      paths: ["uploads/a.csv", "uploads/b c.png"],
    });
    expect(splitAttachments("Attached files: uploads/a.csv")).toEqual({ text: "", paths: ["uploads/a.csv"] });
    // Text that merely mentions the words is left alone.
    expect(splitAttachments("What are Attached files: things?").paths).toEqual([]);
    expect(splitAttachments("Attached files: /etc/passwd").paths).toEqual([]);
  });
});

describe("files refused or failed", () => {
  test("a file over the limit is refused with its size and the limit, in the user's language", async () => {
    expect(refusal({ name: "ok.bin", size: ATTACHMENT_LIMIT })).toBeNull();
    expect(refusal({ name: "big.bin", size: 30 * 1024 * 1024 })).toBe(
      "big.bin is 30 MB: files over 25 MB cannot be attached.",
    );
    await i18n.changeLanguage("zh-CN");
    expect(refusal({ name: "big.bin", size: 30 * 1024 * 1024 })).toBe(
      "big.bin 大小为 30 MB：超过 25 MB 的文件无法附加。",
    );
  });

  test("a failed upload says which file and why, in one sentence", async () => {
    expect(uploadFailure("a.csv", new ApiError(0, "unreachable", "x"))).toBe(
      "a.csv could not be uploaded: The server could not be reached. Check your connection and try again.",
    );
    expect(uploadFailure("a.csv", new ApiError(413, "payload_too_large", "request body is larger"))).toBe(
      "a.csv is larger than the server accepts.",
    );
    await i18n.changeLanguage("zh-CN");
    expect(uploadFailure("a.csv", new ApiError(0, "unreachable", "x"))).toBe(
      "a.csv 上传失败：无法连接服务器。请检查网络后重试。",
    );
  });
});

describe("uploading an attached file", () => {
  const file = (name: string) => new File(["x"], name);

  test("goes under uploads/, only creating, and takes the next name when one exists", async () => {
    const taken = new Set(["a.csv"]);
    expect(await uploadAttachment("t1", file("a.csv"), taken)).toBe("uploads/a-1.csv");
    expect(puts[0]!.options.createOnly).toBe(true);
    // Written meanwhile by someone else: the server's 412 moves it on to the next name.
    existing.add("uploads/b.csv");
    expect(await uploadAttachment("t1", file("b.csv"), taken)).toBe("uploads/b-1.csv");
    expect(puts.map((p) => p.path)).toEqual(["uploads/a-1.csv", "uploads/b.csv", "uploads/b-1.csv"]);
    // Two files of one name in one message both arrive.
    expect(await uploadAttachment("t1", file("a.csv"), taken)).toBe("uploads/a-2.csv");
  });
});

describe("sending with attachments", () => {
  function steps(overrides: Partial<SendSteps> = {}) {
    const calls: string[] = [];
    const errors: string[] = [];
    const all: SendSteps = {
      create: async () => {
        calls.push("create");
        return "t-new";
      },
      start: async (id, message) => {
        calls.push(`start ${id}: ${message}`);
        return true;
      },
      discard: async (id) => {
        calls.push(`discard ${id}`);
      },
      fail: (message) => errors.push(message),
      uploaded: () => calls.push("uploaded"),
      ...overrides,
    };
    return { all, calls, errors };
  }
  const files = (upload: Attachments["upload"]): Attachments => ({ names: ["a.csv"], upload });

  test("a draft: the thread first, then the files, then the run with the message naming them", async () => {
    const { all, calls } = steps();
    const upload = vi.fn(async (id: string) => {
      calls.push(`upload ${id}`);
      return ["uploads/a.csv"];
    });
    expect(await sendWithAttachments(undefined, "look", files(upload), all)).toBe(true);
    expect(calls).toEqual([
      "create",
      "upload t-new",
      "uploaded",
      "start t-new: look\n\nAttached files: uploads/a.csv",
    ]);
  });

  test("on a thread (a running one steered too), the files go first, then the message", async () => {
    const { all, calls } = steps();
    const upload = async (id: string) => {
      calls.push(`upload ${id}`);
      return ["uploads/more.csv"];
    };
    expect(await sendWithAttachments("t1", "also this", files(upload), all)).toBe(true);
    expect(calls).toEqual([
      "upload t1",
      "uploaded",
      "start t1: also this\n\nAttached files: uploads/more.csv",
    ]);
  });

  test("a failed upload starts no run, says why and deletes the thread it created", async () => {
    const { all, calls, errors } = steps();
    const upload = async () => {
      calls.push("upload");
      throw new Error("a.csv could not be uploaded: The server could not be reached.");
    };
    expect(await sendWithAttachments(undefined, "look", files(upload), all)).toBe(false);
    expect(calls).toEqual(["create", "upload", "discard t-new"]);
    expect(errors).toEqual(["a.csv could not be uploaded: The server could not be reached."]);
  });

  test("on a thread that exists, a failed upload leaves the thread alone", async () => {
    const { all, calls, errors } = steps();
    const upload = async () => {
      throw new Error("nope");
    };
    expect(await sendWithAttachments("t1", "look", files(upload), all)).toBe(false);
    expect(calls).toEqual([]);
    expect(errors).toEqual(["nope"]);
  });

  test("a run that does not start deletes a thread created for it; no files, no upload", async () => {
    const { all, calls } = steps({ start: async () => false });
    expect(await sendWithAttachments(undefined, "hi", null, all)).toBe(false);
    expect(calls).toEqual(["create", "discard t-new"]);
  });

  test("a thread that cannot be created stops everything, with the reason", async () => {
    const upload = vi.fn(async () => []);
    const { all, calls, errors } = steps({
      create: async () => {
        throw new ApiError(0, "unreachable", "x");
      },
    });
    expect(await sendWithAttachments(undefined, "hi", files(upload), all)).toBe(false);
    expect(upload).not.toHaveBeenCalled();
    expect(calls).toEqual([]);
    expect(errors).toEqual(["The server could not be reached. Check your connection and try again."]);
  });
});
