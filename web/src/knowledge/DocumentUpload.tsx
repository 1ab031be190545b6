import { useEffect, useRef, useState, type DragEvent } from "react";
import { useTranslation } from "react-i18next";
import { errorMessage } from "../api";
import { uploadDocument, type KbDocumentView } from "../api/knowledge";
import { formatBytes, formatPercent } from "../lib/format";
import { DocumentStatus } from "./DocumentTable";
import { ACCEPT } from "./kbModel";
import {
  addUploads,
  clearFinished,
  dismissUpload,
  uploadDone,
  uploadFailed,
  uploadFraction,
  uploadKey,
  uploadProgressed,
  uploadStarted,
  type UploadEntry,
} from "./uploadModel";

/** Files sent at once; the others wait their turn. */
const CONCURRENT_UPLOADS = 2;

interface DocumentUploadProps {
  kbId: string;
  /** The knowledge base's documents as they are now, to show an uploaded file's ingestion. */
  documents: readonly KbDocumentView[];
  onUploaded: (doc: KbDocumentView) => void;
}

/**
 * The drop area and file picker: each file is its own request with its own progress and its
 * own refusal; once uploaded, its row follows the document's ingestion.
 */
export function DocumentUpload({ kbId, documents, onUploaded }: DocumentUploadProps) {
  const { t } = useTranslation();
  const [entries, setEntries] = useState<UploadEntry[]>([]);
  const [dragging, setDragging] = useState(false);
  const picker = useRef<HTMLInputElement>(null);
  const files = useRef(new Map<string, File>());
  const queue = useRef<string[]>([]);
  const running = useRef(0);
  const stopped = useRef(new AbortController());

  // Leaving the page abandons the uploads still going.
  useEffect(() => {
    const controller = new AbortController();
    stopped.current = controller;
    return () => controller.abort();
  }, []);

  async function send(key: string) {
    const file = files.current.get(key);
    if (!file) return;
    setEntries((old) => uploadStarted(old, key));
    try {
      const uploaded = await uploadDocument(kbId, file, {
        signal: stopped.current.signal,
        onProgress: ({ loaded, total }) => setEntries((old) => uploadProgressed(old, key, loaded, total)),
      });
      for (const doc of uploaded) onUploaded(doc);
      setEntries((old) => uploadDone(old, key, uploaded[0]?.id ?? null));
    } catch (failure) {
      if (failure instanceof DOMException && failure.name === "AbortError") return;
      setEntries((old) => uploadFailed(old, key, errorMessage(failure)));
    }
  }

  function pump() {
    while (running.current < CONCURRENT_UPLOADS && queue.current.length > 0) {
      const key = queue.current.shift()!;
      running.current += 1;
      void send(key).finally(() => {
        running.current -= 1;
        files.current.delete(key);
        pump();
      });
    }
  }

  function add(chosen: readonly File[]) {
    if (chosen.length === 0) return;
    const keyed = chosen.map((file) => ({ key: uploadKey(), name: file.name, size: file.size, file }));
    const { entries: added, queued } = addUploads([], keyed);
    for (const { key, file } of keyed) if (queued.includes(key)) files.current.set(key, file);
    setEntries((old) => [...old, ...added]);
    queue.current.push(...queued);
    pump();
  }

  function onDrop(event: DragEvent) {
    event.preventDefault();
    setDragging(false);
    add([...event.dataTransfer.files]);
  }

  const finished = entries.some((e) => e.state === "done" || e.state === "failed");
  return (
    <section className="kb-upload" aria-labelledby="kb-upload-title">
      <h2 id="kb-upload-title">{t("knowledge.upload.title")}</h2>
      <div
        className={dragging ? "drop-zone dragging" : "drop-zone"}
        data-testid="kb-drop-zone"
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={onDrop}
      >
        <span>{t("knowledge.upload.drop")}</span>
        <button type="button" className="primary" onClick={() => picker.current?.click()}>
          {t("knowledge.upload.choose")}
        </button>
        <input
          ref={picker}
          type="file"
          multiple
          accept={ACCEPT}
          className="visually-hidden"
          data-testid="kb-upload"
          tabIndex={-1}
          aria-label={t("knowledge.upload.choose")}
          onChange={(e) => {
            add([...(e.target.files ?? [])]);
            e.target.value = "";
          }}
        />
      </div>
      <p className="hint">{t("knowledge.upload.hint")}</p>
      {entries.length > 0 && (
        <>
          <ul className="upload-list" aria-label={t("knowledge.upload.list")} data-testid="kb-uploads">
            {entries.map((entry) => (
              <UploadRow
                key={entry.key}
                entry={entry}
                doc={documents.find((d) => d.id === entry.documentId) ?? null}
                onDismiss={() => setEntries((old) => dismissUpload(old, entry.key))}
              />
            ))}
          </ul>
          {finished && (
            <button type="button" className="link" onClick={() => setEntries((old) => clearFinished(old))}>
              {t("knowledge.upload.clear")}
            </button>
          )}
        </>
      )}
    </section>
  );
}

function UploadRow({
  entry,
  doc,
  onDismiss,
}: {
  entry: UploadEntry;
  doc: KbDocumentView | null;
  onDismiss: () => void;
}) {
  const { t } = useTranslation();
  const fraction = uploadFraction(entry);
  return (
    <li data-testid="kb-upload-row" data-name={entry.name} data-state={entry.state}>
      <span className="upload-name">{entry.name}</span>{" "}
      <span className="muted">{formatBytes(entry.size)}</span>{" "}
      {entry.state === "queued" && <span className="status">{t("knowledge.upload.queued")}</span>}
      {entry.state === "uploading" && (
        <span className="doc-progress">
          <span className="status pending">
            {t("knowledge.upload.uploading", { percent: formatPercent(fraction) })}
          </span>
          <progress
            max={1}
            value={fraction}
            aria-label={t("knowledge.upload.progressOf", { name: entry.name })}
          />
        </span>
      )}
      {entry.state === "done" && (
        <>
          <span className="status success">{t("knowledge.upload.done")}</span>{" "}
          {doc && <DocumentStatus doc={doc} />}
        </>
      )}
      {entry.state === "failed" && (
        <span className="error" role="alert" data-testid="kb-upload-error">
          {entry.error}
        </span>
      )}
      {(entry.state === "done" || entry.state === "failed") && (
        <button
          type="button"
          className="icon"
          aria-label={t("knowledge.upload.dismiss", { name: entry.name })}
          title={t("knowledge.upload.dismiss", { name: entry.name })}
          onClick={onDismiss}
        >
          ×
        </button>
      )}
    </li>
  );
}
