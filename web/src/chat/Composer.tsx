import { useEffect, useRef, useState, type FormEvent, type KeyboardEvent } from "react";
import { useTranslation } from "react-i18next";

interface ComposerProps {
  onSend: (input: string) => Promise<boolean>;
  onStop: () => void;
  /** A run is active: a message goes into it (the page decides how), and stopping is offered. */
  active: boolean;
  disabled?: boolean;
  /** The conversation shown: the box takes the focus when it opens (and once it is usable). */
  focusKey?: string;
}

/** The message box: Enter sends, Shift+Enter breaks the line; it stays usable while a run goes. */
export function Composer({ onSend, onStop, active, disabled, focusKey }: ComposerProps) {
  const { t } = useTranslation();
  const box = useRef<HTMLTextAreaElement>(null);
  useEffect(() => {
    // No scrolling: a linked message keeps its place in the conversation.
    if (!disabled) box.current?.focus({ preventScroll: true });
  }, [focusKey, disabled]);
  const [input, setInput] = useState("");
  const [sending, setSending] = useState(false);
  const blocked = disabled || sending || !input.trim();

  async function send(event?: FormEvent) {
    event?.preventDefault();
    if (blocked) return;
    setSending(true);
    const sent = await onSend(input);
    setSending(false);
    if (sent) setInput("");
  }

  function onKeyDown(event: KeyboardEvent<HTMLTextAreaElement>) {
    if (event.key === "Enter" && !event.shiftKey && !event.nativeEvent.isComposing) {
      event.preventDefault();
      void send();
    }
  }

  return (
    <form className="composer" onSubmit={send}>
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
      />
      <div className="composer-actions">
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
