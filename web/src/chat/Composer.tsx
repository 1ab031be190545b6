import {
  useEffect,
  useRef,
  useState,
  type ClipboardEvent,
  type DragEvent,
  type FormEvent,
  type KeyboardEvent,
} from "react";
import { useTranslation } from "react-i18next";
import { errorMessage } from "../api";
import { Icon } from "../components/Icon";
import { formatBytes, formatPercent } from "../lib/format";
import { refusal, takenNames, uploadAttachment, uploadFailure, type Attachments } from "./attachments";

interface ComposerProps {
  /**
   * Sends the text with the attached files (`null`: none). `true` when it went out: the box and
   * the files are cleared; `false` keeps both, to send again.
   */
  onSend: (input: string, attachments: Attachments | null) => Promise<boolean>;
  onStop: () => void;
  /** A run is active: a message goes into it (the page decides how), and stopping is offered. */
  active: boolean;
  disabled?: boolean;
  /** The conversation shown: the box takes the focus when it opens (and once it is usable). */
  focusKey?: string;
}

/** A file attached to the message being written. */
interface Attached {
  key: number;
  file: File;
  state: "ready" | "uploading" | "done" | "failed";
  /** Bytes sent so far, while it uploads. */
  loaded: number;
  /** Where it went, and into which thread's workdir (a retry does not send it twice). */
  uploaded?: { threadId: string; path: string };
}

let nextKey = 0;

/**
 * The message box: Enter sends, Shift+Enter breaks the line; it stays usable while a run goes.
 * Files attached (the paperclip, dropped on the box or pasted) are uploaded into the thread's
 * workdir when the message is sent, and the message names them.
 */
export function Composer({ onSend, onStop, active, disabled, focusKey }: ComposerProps) {
  const { t } = useTranslation();
  const box = useRef<HTMLTextAreaElement>(null);
  const picker = useRef<HTMLInputElement>(null);
  // A conversation opened (mounted, or another one shown) takes the focus from wherever it is;
  // the same one merely become usable (the agents arrived) takes it only if nothing else holds
  // it: a person may already be typing elsewhere, in the thread list's search say.
  const shownFor = useRef<string | undefined>(undefined);
  useEffect(() => {
    const opened = shownFor.current !== focusKey;
    shownFor.current = focusKey;
    if (disabled) return;
    const held = document.activeElement;
    const free = held === null || held === document.body || held === box.current;
    // No scrolling: a linked message keeps its place in the conversation.
    if (opened || free) box.current?.focus({ preventScroll: true });
  }, [focusKey, disabled]);
  const [input, setInput] = useState("");
  const [sending, setSending] = useState(false);
  const [attached, setAttached] = useState<Attached[]>([]);
  const [refused, setRefused] = useState<string[]>([]);
  const [dragging, setDragging] = useState(false);
  // The upload reads the newest list (with what a retry already sent), not a render's copy:
  // the ref is the list, the state shows it.
  const current = useRef(attached);
  const commit = (next: Attached[]) => {
    current.current = next;
    setAttached(next);
  };
  const update = (key: number, patch: Partial<Attached>) =>
    commit(current.current.map((item) => (item.key === key ? { ...item, ...patch } : item)));
  const blocked = disabled || sending || (!input.trim() && attached.length === 0);

  function attach(files: readonly File[]) {
    if (disabled || sending || files.length === 0) return;
    const refusals: string[] = [];
    const accepted: Attached[] = [];
    for (const file of files) {
      const why = refusal(file);
      if (why) refusals.push(why);
      else accepted.push({ key: nextKey++, file, state: "ready", loaded: 0 });
    }
    setRefused(refusals);
    if (accepted.length) commit([...current.current, ...accepted]);
  }

  const remove = (key: number) => commit(current.current.filter((item) => item.key !== key));

  /** Uploads the files not yet in `threadId`'s workdir, one after the other. */
  async function upload(threadId: string): Promise<string[]> {
    let taken: Set<string> | null = null;
    const paths: string[] = [];
    let failed: string | null = null;
    for (const item of current.current) {
      if (item.uploaded?.threadId === threadId) {
        paths.push(item.uploaded.path);
        continue;
      }
      update(item.key, { state: "uploading", loaded: 0, uploaded: undefined });
      try {
        taken ??= await takenNames(threadId).catch((failure: unknown) => {
          throw new Error(errorMessage(failure));
        });
        const path = await uploadAttachment(threadId, item.file, taken, ({ loaded }) =>
          update(item.key, { loaded }),
        );
        update(item.key, { state: "done", loaded: item.file.size, uploaded: { threadId, path } });
        paths.push(path);
      } catch (failure) {
        update(item.key, { state: "failed" });
        failed ??= uploadFailure(item.file.name, failure);
      }
    }
    if (failed) throw new Error(failed);
    return paths;
  }

  async function send(event?: FormEvent) {
    event?.preventDefault();
    if (blocked) return;
    setSending(true);
    setRefused([]);
    const files = current.current;
    const sent = await onSend(
      input,
      files.length ? { names: files.map((item) => item.file.name), upload } : null,
    );
    setSending(false);
    if (sent) {
      setInput("");
      commit([]);
    }
  }

  function onKeyDown(event: KeyboardEvent<HTMLTextAreaElement>) {
    if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      void send();
    }
  }

  function onPaste(event: ClipboardEvent<HTMLTextAreaElement>) {
    const files = [...event.clipboardData.files];
    if (files.length === 0) return;
    event.preventDefault();
    attach(files);
  }

  const carriesFiles = (event: DragEvent) => [...event.dataTransfer.types].includes("Files");

  return (
    <form
      className={dragging ? "composer dragging" : "composer"}
      data-testid="composer"
      onSubmit={send}
      onDragOver={(event) => {
        if (!carriesFiles(event) || disabled) return;
        event.preventDefault();
        setDragging(true);
      }}
      onDragLeave={() => setDragging(false)}
      onDrop={(event) => {
        if (!carriesFiles(event)) return;
        event.preventDefault();
        setDragging(false);
        attach([...event.dataTransfer.files]);
      }}
    >
      <div className="composer-input">
        {refused.length > 0 && (
          <p className="error" role="alert" data-testid="composer-refused">
            {refused.join(" ")}
          </p>
        )}
        {attached.length > 0 && (
          <ul className="composer-files" aria-label={t("composer.attachedFiles")}>
            {attached.map((item) => (
              <AttachmentChip
                key={item.key}
                item={item}
                onRemove={sending ? undefined : () => remove(item.key)}
              />
            ))}
          </ul>
        )}
        <label htmlFor="chat-input" className="visually-hidden">
          {t("composer.label")}
        </label>
        <textarea
          id="chat-input"
          ref={box}
          data-testid="chat-input"
          rows={2}
          placeholder={active ? t("composer.placeholderActive") : t("composer.placeholder")}
          value={input}
          disabled={disabled}
          onChange={(e) => setInput(e.target.value)}
          onKeyDown={onKeyDown}
          onPaste={onPaste}
        />
      </div>
      <div className="composer-actions">
        <button
          type="button"
          className="icon composer-attach"
          data-testid="chat-attach"
          aria-label={t("composer.attach")}
          title={t("composer.attachHint")}
          disabled={disabled || sending}
          onClick={() => picker.current?.click()}
        >
          <Icon name="paperclip" />
        </button>
        <input
          ref={picker}
          type="file"
          multiple
          className="visually-hidden"
          tabIndex={-1}
          aria-hidden="true"
          data-testid="chat-attach-input"
          onChange={(e) => {
            attach([...(e.target.files ?? [])]);
            e.target.value = "";
          }}
        />
        {active && (
          <button type="button" className="danger" data-testid="chat-stop" onClick={onStop}>
            {t("composer.stop")}
          </button>
        )}
        <button type="submit" className="primary" data-testid="chat-send" disabled={blocked}>
          {t("composer.send")}
        </button>
      </div>
    </form>
  );
}

/** One attached file: its name and size, its upload's progress, and a way to take it off. */
function AttachmentChip({ item, onRemove }: { item: Attached; onRemove?: () => void }) {
  const { t } = useTranslation();
  const { name, size } = item.file;
  const fraction = size > 0 ? Math.min(1, item.loaded / size) : item.state === "done" ? 1 : 0;
  return (
    <li
      className={`composer-file ${item.state}`}
      data-testid="composer-file"
      data-name={name}
      data-state={item.state}
      title={item.uploaded?.path}
    >
      <span className="composer-file-name">{name}</span>
      <span className="muted">{formatBytes(size)}</span>
      {item.state === "uploading" && (
        <>
          <progress max={1} value={fraction} aria-label={t("composer.progressOf", { name })} />
          <span className="muted">{formatPercent(fraction)}</span>
        </>
      )}
      {item.state === "done" && <span className="status success">{t("composer.uploaded")}</span>}
      {item.state === "failed" && <span className="status error">{t("composer.notUploaded")}</span>}
      {onRemove && (
        <button
          type="button"
          className="icon"
          data-testid="composer-file-remove"
          aria-label={t("composer.remove", { name })}
          title={t("composer.remove", { name })}
          onClick={onRemove}
        >
          <Icon name="close" />
        </button>
      )}
    </li>
  );
}
