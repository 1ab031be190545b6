/** What a workdir file is shown as: text, Markdown, an image, a CSV table, or nothing. */

export type PreviewKind = "markdown" | "text" | "image" | "csv" | "none";

const TEXT_EXTENSIONS = new Set([
  "txt",
  "log",
  "json",
  "jsonl",
  "yaml",
  "yml",
  "toml",
  "ini",
  "cfg",
  "conf",
  "xml",
  "html",
  "htm",
  "css",
  "js",
  "mjs",
  "ts",
  "tsx",
  "jsx",
  "py",
  "rs",
  "go",
  "java",
  "c",
  "h",
  "cpp",
  "hpp",
  "sh",
  "bash",
  "sql",
  "rb",
  "php",
  "swift",
  "kt",
  "lua",
  "r",
  "tex",
  "env",
  "gitignore",
  "dockerfile",
]);
const IMAGE_EXTENSIONS = new Set(["png", "jpg", "jpeg", "gif", "webp", "bmp", "ico", "avif"]);

/** Largest file previewed as text; bigger ones are offered as a download. */
export const MAX_TEXT_PREVIEW = 1024 * 1024;

function extension(name: string): string {
  const base = name.split("/").pop() ?? name;
  const dot = base.lastIndexOf(".");
  return dot < 0 ? base.toLowerCase() : base.slice(dot + 1).toLowerCase();
}

/** The preview for a file, from its name and (when known) the type the server answered. */
export function previewKind(name: string, contentType = ""): PreviewKind {
  const ext = extension(name);
  if (ext === "md" || ext === "markdown") return "markdown";
  if (ext === "csv" || ext === "tsv") return "csv";
  // SVG is an image that can hold script: shown as text, never rendered in the page.
  if (IMAGE_EXTENSIONS.has(ext) || (contentType.startsWith("image/") && !contentType.includes("svg"))) {
    return "image";
  }
  if (TEXT_EXTENSIONS.has(ext) || ext === "svg" || contentType.startsWith("text/")) return "text";
  if (contentType.includes("json")) return "text";
  return "none";
}

/**
 * Rows of a CSV (RFC 4180: quoted fields, doubled quotes, newlines inside quotes), or TSV when
 * `tab`; at most `limit` rows.
 */
export function parseCsv(text: string, { tab = false, limit = 500 } = {}): string[][] {
  const sep = tab ? "\t" : ",";
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length && rows.length < limit; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"';
        i++;
      } else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"' && field === "") quoted = true;
    else if (c === sep) {
      row.push(field);
      field = "";
    } else if (c === "\n" || c === "\r") {
      if (c === "\r" && text[i + 1] === "\n") i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = "";
    } else field += c;
  }
  if ((field !== "" || row.length > 0) && rows.length < limit) {
    row.push(field);
    rows.push(row);
  }
  return rows;
}
