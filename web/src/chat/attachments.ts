/**
 * Files attached in the composer: they are uploaded into the thread's workdir (under
 * `uploads/`) before the run starts, and the message sent names them, so the agent finds them
 * with its file tools.
 */

import { errorMessage } from "../api";
import { ApiError } from "../api/errors";
import { listFolder, putFile } from "../api/files";
import type { UploadProgress } from "../api/xhrUpload";
import i18n from "../i18n";
import { formatBytes } from "../lib/format";

/** The workdir folder attached files go to. */
export const UPLOAD_DIR = "uploads";

/**
 * The largest file the server takes (`PUT …/files/content`: 25 MiB unless configured
 * otherwise); a larger one is refused before anything is sent.
 */
export const ATTACHMENT_LIMIT = 25 * 1024 * 1024;

/** The line the message ends with, in English for the model. */
const ATTACHED_PREFIX = "Attached files: ";

/** Most bytes one path component may have in the workdir. */
const MAX_NAME_BYTES = 255;

const bytes = (text: string) => new TextEncoder().encode(text).length;

/** `text` cut to at most `max` UTF-8 bytes, never inside a character. */
function cutBytes(text: string, max: number): string {
  let out = "";
  for (const char of text) {
    if (bytes(out + char) > max) break;
    out += char;
  }
  return out;
}

/** `name` as `[stem, extension]`: `report.csv` → `report`, `.csv`; `a.tar.gz` keeps `.tar.gz`. */
function splitExtension(name: string): [string, string] {
  const double = /(\.tar\.[a-z0-9]+)$/i.exec(name);
  const at = double && double.index > 0 ? double.index : name.lastIndexOf(".");
  // A leading dot (`.env`) starts a name, not an extension; a long tail is no extension.
  if (at <= 0 || name.length - at > 16) return [name, ""];
  return [name.slice(0, at), name.slice(at)];
}

/**
 * A file name the workdir takes as one name: no folder separators, no control, bidirectional
 * or line-separator characters, no commas (the message lists names with them), not `.`/`..`,
 * and at most 255 bytes (the extension kept).
 */
export function sanitizeName(name: string): string {
  const cleaned = name
    // eslint-disable-next-line no-control-regex
    .replace(/[\u0000-\u001f\u007f-\u009f\u200e\u200f\u202a-\u202e\u2066-\u2069\u2028\u2029]/g, "")
    .replace(/[/\\,]/g, "_")
    .trim();
  if (!cleaned || /^\.+$/.test(cleaned)) return "file";
  if (bytes(cleaned) <= MAX_NAME_BYTES) return cleaned;
  const [stem, extension] = splitExtension(cleaned);
  return cutBytes(stem, MAX_NAME_BYTES - bytes(extension)) + extension;
}

/** `name` with `-n` before its extension: `a.csv` → `a-2.csv`. */
function suffixed(name: string, n: number): string {
  const [stem, extension] = splitExtension(name);
  const tail = `-${n}${extension}`;
  return cutBytes(stem, MAX_NAME_BYTES - bytes(tail)) + tail;
}

/** `name`, or the first `name-1`, `name-2`, … that is not `taken`. */
export function uniqueName(name: string, taken: ReadonlySet<string>): string {
  if (!taken.has(name)) return name;
  for (let n = 1; ; n++) {
    const candidate = suffixed(name, n);
    if (!taken.has(candidate)) return candidate;
  }
}

/** The message the agent gets: the user's text, then a line naming the attached files. */
export function withAttachments(input: string, paths: readonly string[]): string {
  if (paths.length === 0) return input;
  const line = `${ATTACHED_PREFIX}${paths.join(", ")}`;
  const text = input.trim();
  return text ? `${text}\n\n${line}` : line;
}

/** A message split back into the user's text and the files it names (for its bubble). */
export function splitAttachments(message: string): { text: string; paths: string[] } {
  const at = message.lastIndexOf(ATTACHED_PREFIX);
  const lineStart = at === 0 || message[at - 1] === "\n";
  const line = at >= 0 ? message.slice(at + ATTACHED_PREFIX.length) : "";
  if (at < 0 || !lineStart || !line.trim() || line.includes("\n")) return { text: message, paths: [] };
  const paths = line.split(", ").map((p) => p.trim());
  if (!paths.every((p) => p.startsWith(`${UPLOAD_DIR}/`))) return { text: message, paths: [] };
  return { text: message.slice(0, at).trimEnd(), paths };
}

/** Why `file` cannot be attached (it is over the limit), in the user's language; else `null`. */
export function refusal(file: Pick<File, "name" | "size">, limit = ATTACHMENT_LIMIT): string | null {
  if (file.size <= limit) return null;
  return i18n.t("composer.tooLarge", {
    name: file.name,
    size: formatBytes(file.size),
    limit: formatBytes(limit),
  });
}

/** One sentence saying why `name` was not uploaded. */
export function uploadFailure(name: string, failure: unknown): string {
  if (failure instanceof ApiError && failure.status === 413) {
    return i18n.t("composer.serverTooLarge", { name });
  }
  return i18n.t("composer.uploadFailed", { name, reason: errorMessage(failure) });
}

/** How many names are tried when others take each one first. */
const ATTEMPTS = 20;

/**
 * Uploads `file` as `uploads/<name>` without replacing anything: a name in `taken` (or one the
 * server says exists) gets a suffix. Answers the path written; `taken` gains its name.
 */
export async function uploadAttachment(
  threadId: string,
  file: File,
  taken: Set<string>,
  onProgress?: (progress: UploadProgress) => void,
): Promise<string> {
  const wanted = sanitizeName(file.name);
  for (let attempt = 0; ; attempt++) {
    const name = uniqueName(wanted, taken);
    taken.add(name);
    const path = `${UPLOAD_DIR}/${name}`;
    try {
      await putFile(threadId, path, file, { createOnly: true, onProgress });
      return path;
    } catch (failure) {
      // Someone wrote that name meanwhile: try the next one.
      if (!(failure instanceof ApiError && failure.status === 412) || attempt + 1 >= ATTEMPTS) throw failure;
    }
  }
}

/** The names already in the thread's `uploads/` folder (none for a new thread). */
export function takenNames(threadId: string): Promise<Set<string>> {
  return listFolder(threadId, UPLOAD_DIR).then((names) => new Set(names));
}

/** The composer's attached files, as the page sends them. */
export interface Attachments {
  /** The files' names, for a thread's title when the message has no text. */
  names: string[];
  /**
   * Uploads every file not yet in `threadId`'s workdir; answers the paths of all of them, or
   * throws an `Error` whose message says which file failed and why, in one sentence.
   */
  upload: (threadId: string) => Promise<string[]>;
}

export interface SendSteps {
  /** Creates the thread (a draft's first message) and answers its id. */
  create: () => Promise<string>;
  /** Starts the run (or steers the running one) with `message`; `false` when it did not. */
  start: (threadId: string, message: string) => Promise<boolean>;
  /** Deletes a thread created here whose first message could not go out. */
  discard: (threadId: string) => Promise<void>;
  /** Shows why the message did not go out. */
  fail: (message: string) => void;
  /** The files are in the workdir (the files panel lists them again). */
  uploaded?: () => void;
}

/**
 * Sends `input` with its attachments, in order: the thread (created when there is none yet),
 * then the files, then the run — so the agent finds the files from its first step. A failure
 * stops there and answers `false`: the composer keeps the text and the files, and a thread
 * created for them is deleted again, so nothing half-made is left behind.
 */
export async function sendWithAttachments(
  threadId: string | undefined,
  input: string,
  attachments: Attachments | null,
  steps: SendSteps,
): Promise<boolean> {
  let id = threadId;
  if (!id) {
    try {
      id = await steps.create();
    } catch (failure) {
      steps.fail(errorMessage(failure));
      return false;
    }
  }
  const created = !threadId;
  let message = input;
  if (attachments && attachments.names.length > 0) {
    try {
      message = withAttachments(input, await attachments.upload(id));
    } catch (failure) {
      steps.fail(errorMessage(failure));
      if (created) await steps.discard(id).catch(() => undefined);
      return false;
    }
    steps.uploaded?.();
  }
  const started = await steps.start(id, message);
  if (!started && created) await steps.discard(id).catch(() => undefined);
  return started;
}
