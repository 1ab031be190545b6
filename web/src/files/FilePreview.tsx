import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";
import { errorMessage } from "../api";
import { readFile, type FileEntry } from "../api/files";
import { Markdown } from "../chat/Markdown";
import { Dialog } from "../components/Dialog";
import { saveBlob } from "../lib/download";
import { formatBytes } from "../lib/format";
import { MAX_TEXT_PREVIEW, parseCsv, previewKind, type PreviewKind } from "./preview";

export { saveBlob };

type Loaded =
  | { kind: "text" | "markdown"; text: string }
  | { kind: "csv"; rows: string[][]; tab: boolean }
  | { kind: "image"; url: string }
  | { kind: "none"; contentType: string; tooBig: boolean };

async function load(threadId: string, path: string, size: number | undefined): Promise<Loaded> {
  const name = path.split("/").pop() ?? path;
  const guessed = previewKind(name);
  if (guessed !== "image" && guessed !== "none" && size !== undefined && size > MAX_TEXT_PREVIEW) {
    return { kind: "none", contentType: "", tooBig: true };
  }
  const { blob, contentType } = await readFile(threadId, path);
  const kind: PreviewKind = previewKind(name, contentType);
  switch (kind) {
    case "image":
      return { kind, url: URL.createObjectURL(blob) };
    case "csv":
      return {
        kind,
        rows: parseCsv(await blob.text(), { tab: name.toLowerCase().endsWith(".tsv") }),
        tab: false,
      };
    case "text":
    case "markdown":
      if (blob.size > MAX_TEXT_PREVIEW) return { kind: "none", contentType, tooBig: true };
      return { kind, text: await blob.text() };
    case "none":
      return { kind, contentType, tooBig: false };
  }
}

interface FilePreviewProps {
  threadId: string;
  path: string;
  entry: FileEntry | undefined;
  onClose: () => void;
  onDownload?: () => void;
}

/** One workdir file, shown as its kind allows, with a download. */
export function FilePreview({ threadId, path, entry, onClose, onDownload }: FilePreviewProps) {
  const { t } = useTranslation();
  const [state, setState] = useState<{ for: string; loaded?: Loaded; error?: string } | null>(null);
  const key = `${path}:${entry?.size ?? ""}:${entry?.modified_at ?? ""}`;

  useEffect(() => {
    let live = true;
    let url: string | null = null;
    load(threadId, path, entry?.size)
      .then((loaded) => {
        if (loaded.kind === "image") url = loaded.url;
        if (live) setState({ for: key, loaded });
        else if (url) URL.revokeObjectURL(url);
      })
      .catch((failure: unknown) => live && setState({ for: key, error: errorMessage(failure) }));
    return () => {
      live = false;
      if (url) URL.revokeObjectURL(url);
    };
    // `entry` is read through `key`: a new size or time means new content.
  }, [threadId, path, key, entry?.size]);

  const current = state?.for === key ? state : null;
  const loaded = current?.loaded;
  return (
    <Dialog
      title={<code>{path}</code>}
      onClose={onClose}
      testId="file-preview"
      wide
      actions={
        <>
          {onDownload && (
            <button type="button" data-testid="file-download" onClick={onDownload}>
              {t("files.download")}
            </button>
          )}
          <button type="button" onClick={onClose}>
            {t("common.close")}
          </button>
        </>
      }
    >
      {entry && <p className="hint">{formatBytes(entry.size)}</p>}
      {current?.error && (
        <p className="error" role="alert" data-testid="file-preview-error">
          {current.error}
        </p>
      )}
      {!current && <p className="loading">{t("common.loading")}</p>}
      {loaded?.kind === "markdown" && (
        <div data-testid="file-preview-markdown">
          <Markdown text={loaded.text} />
        </div>
      )}
      {loaded?.kind === "text" && (
        <pre className="code file-text" data-testid="file-preview-text">
          {loaded.text}
        </pre>
      )}
      {loaded?.kind === "image" && (
        <img className="file-image" src={loaded.url} alt={path} data-testid="file-preview-image" />
      )}
      {loaded?.kind === "csv" && (
        <div className="table-wrap">
          <table className="csv" data-testid="file-preview-csv">
            <tbody>
              {loaded.rows.map((row, i) => (
                <tr key={i}>
                  {row.map((cell, j) => (i === 0 ? <th key={j}>{cell}</th> : <td key={j}>{cell}</td>))}
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {loaded?.kind === "none" && (
        <p className="muted" data-testid="file-preview-none">
          {loaded.tooBig
            ? t("files.tooBig")
            : t("files.noPreview", { type: loaded.contentType || t("skills.detail.unknownType") })}
        </p>
      )}
    </Dialog>
  );
}
