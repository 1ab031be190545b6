import { useCallback, useEffect, useRef, useState, type DragEvent } from "react";
import { useTranslation } from "react-i18next";
import { errorMessage } from "../api";
import { deleteFile, listFiles, uploadFile, type FileEntry, type FileListing } from "../api/files";
import { ConfirmDeleteDialog } from "../components/ConfirmDeleteDialog";
import { formatBytes, formatDateTime } from "../lib/format";
import { FilePreview, saveBlob } from "./FilePreview";
import { readFile } from "../api/files";

interface FilesPanelProps {
  threadId: string;
  /** Changes whenever a run of the thread (or of a child) may have written a file. */
  refreshKey: number;
  /** A file to open (from a tool card), with a counter so the same file can open twice. */
  request: { path: string; n: number } | null;
  /** Reports the workdir as the agent sees it, so tool cards can link their paths. */
  onWorkdir: (workdir: string) => void;
}

/** How long the panel waits after a tool call before listing the workdir again. */
const REFRESH_SETTLE_MS = 250;

const depthOf = (path: string) => path.split("/").length - 1;
const parentOf = (path: string) => (path.includes("/") ? path.slice(0, path.lastIndexOf("/")) : "");

/** The conversation's shared workdir: a tree, previews, download, upload and delete. */
export function FilesPanel({ threadId, refreshKey, request, onWorkdir }: FilesPanelProps) {
  const { t } = useTranslation();
  const [listing, setListing] = useState<FileListing | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [folded, setFolded] = useState<ReadonlySet<string>>(new Set());
  const [open, setOpen] = useState<string | null>(null);
  const [deleting, setDeleting] = useState<FileEntry | null>(null);
  const [uploading, setUploading] = useState<string[]>([]);
  const [dragging, setDragging] = useState(false);
  const picker = useRef<HTMLInputElement>(null);
  const generation = useRef(0);

  const reload = useCallback(() => {
    const mine = ++generation.current;
    listFiles(threadId)
      .then((next) => {
        if (generation.current !== mine) return;
        setListing(next);
        setError(null);
        onWorkdir(next.workdir);
      })
      .catch((failure: unknown) => generation.current === mine && setError(errorMessage(failure)));
  }, [threadId, onWorkdir]);

  // Another thread lists at once; a burst of tool calls (every one bumps `refreshKey`) lists
  // the workdir once, shortly after the last of them.
  const listed = useRef<typeof reload | null>(null);
  useEffect(() => {
    const delay = listed.current === reload ? REFRESH_SETTLE_MS : 0;
    listed.current = reload;
    const timer = setTimeout(reload, delay);
    return () => clearTimeout(timer);
  }, [reload, refreshKey]);

  const [shownRequest, setShownRequest] = useState(request);
  if (request !== shownRequest) {
    setShownRequest(request);
    if (request) setOpen(request.path);
  }

  async function upload(files: readonly File[], folder = "") {
    if (files.length === 0) return;
    setError(null);
    setUploading(files.map((f) => f.name));
    const failures: string[] = [];
    for (const file of files) {
      try {
        await uploadFile(threadId, folder ? `${folder}/${file.name}` : file.name, file);
      } catch (failure) {
        failures.push(`${file.name}: ${errorMessage(failure)}`);
      }
    }
    setUploading([]);
    if (failures.length) setError(failures.join("\n"));
    reload();
  }

  function onDrop(event: DragEvent) {
    event.preventDefault();
    setDragging(false);
    void upload([...event.dataTransfer.files]);
  }

  async function download(entry: FileEntry) {
    try {
      const { blob } = await readFile(threadId, entry.path);
      saveBlob(blob, entry.name);
    } catch (failure) {
      setError(errorMessage(failure));
    }
  }

  const entries = listing?.entries ?? [];
  const hidden = (path: string) => {
    for (let p = parentOf(path); p; p = parentOf(p)) if (folded.has(p)) return true;
    return false;
  };
  const toggle = (path: string) =>
    setFolded((old) => {
      const next = new Set(old);
      if (next.has(path)) next.delete(path);
      else next.add(path);
      return next;
    });
  const openEntry = entries.find((e) => e.path === open);

  return (
    <div
      className={dragging ? "files-panel dragging" : "files-panel"}
      data-testid="files-panel"
      onDragOver={(e) => {
        e.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={onDrop}
    >
      <div className="files-head">
        <code className="files-workdir" title={listing?.workdir}>
          {listing?.workdir ?? "…"}
        </code>
        <button type="button" onClick={() => picker.current?.click()} data-testid="files-upload-button">
          {t("files.upload")}
        </button>
        <button
          type="button"
          className="icon"
          aria-label={t("files.refresh")}
          title={t("files.refresh")}
          onClick={reload}
        >
          ↻
        </button>
        <input
          ref={picker}
          type="file"
          multiple
          className="visually-hidden"
          data-testid="files-upload"
          onChange={(e) => {
            void upload([...(e.target.files ?? [])]);
            e.target.value = "";
          }}
        />
      </div>
      <p className="hint">{t("files.dropHint")}</p>
      {uploading.length > 0 && (
        <p className="loading" role="status" data-testid="files-uploading">
          {t("files.uploading", { names: uploading.join(", ") })}
        </p>
      )}
      {error && (
        <p className="error pre" role="alert" data-testid="files-error">
          {error}
        </p>
      )}
      {listing && entries.length === 0 ? (
        <p className="empty">{t("files.empty")}</p>
      ) : (
        <ul className="file-tree" aria-label={t("files.tree")}>
          {entries
            .filter((entry) => !hidden(entry.path))
            .map((entry) => (
              <li
                key={entry.path}
                data-testid="file-entry"
                data-path={entry.path}
                data-kind={entry.kind}
                style={{ paddingLeft: `${depthOf(entry.path) * 0.9}rem` }}
              >
                {entry.kind === "dir" ? (
                  <button
                    type="button"
                    className="link file-name"
                    aria-expanded={!folded.has(entry.path)}
                    onClick={() => toggle(entry.path)}
                  >
                    {folded.has(entry.path) ? "▸" : "▾"} {entry.name}/
                  </button>
                ) : (
                  <button
                    type="button"
                    className="link file-name"
                    data-testid="file-open"
                    onClick={() => setOpen(entry.path)}
                    title={entry.modified_at ? formatDateTime(entry.modified_at) : undefined}
                  >
                    {entry.name}
                  </button>
                )}
                <span className="file-meta">{entry.kind === "dir" ? "" : formatBytes(entry.size)}</span>
                {entry.kind === "file" && (
                  <button
                    type="button"
                    className="icon"
                    aria-label={t("files.downloadNamed", { name: entry.name })}
                    title={t("files.download")}
                    onClick={() => void download(entry)}
                  >
                    ⤓
                  </button>
                )}
                <button
                  type="button"
                  className="icon"
                  data-testid="file-delete"
                  aria-label={t("files.deleteNamed", { name: entry.name })}
                  title={t("common.delete")}
                  onClick={() => setDeleting(entry)}
                >
                  ×
                </button>
              </li>
            ))}
        </ul>
      )}
      {listing?.truncated && <p className="hint">{t("files.truncated")}</p>}
      {open && (
        <FilePreview
          threadId={threadId}
          path={open}
          entry={openEntry}
          onClose={() => setOpen(null)}
          onDownload={openEntry ? () => void download(openEntry) : undefined}
        />
      )}
      {deleting && (
        <ConfirmDeleteDialog
          title={t("files.deleteTitle", { name: deleting.name })}
          onClose={() => setDeleting(null)}
          onConfirm={async () => {
            await deleteFile(threadId, deleting.path, deleting.kind === "dir");
            setDeleting(null);
            reload();
          }}
        >
          <p>{deleting.kind === "dir" ? t("files.deleteDirBody") : t("files.deleteFileBody")}</p>
        </ConfirmDeleteDialog>
      )}
    </div>
  );
}
