import { useEffect, useState } from "react";
import { useTranslation } from "react-i18next";

/** Copies `text()` to the clipboard and says so for two seconds. */
export function CopyButton({ text, testId, label }: { text: () => string; testId?: string; label?: string }) {
  const { t } = useTranslation();
  const [copied, setCopied] = useState(false);
  useEffect(() => {
    if (!copied) return;
    const timer = setTimeout(() => setCopied(false), 2000);
    return () => clearTimeout(timer);
  }, [copied]);
  return (
    <button
      type="button"
      className="copy-button"
      data-testid={testId}
      aria-label={label ?? t("common.copy")}
      onClick={async () => {
        try {
          await navigator.clipboard.writeText(text());
          setCopied(true);
        } catch {
          // No clipboard (an insecure origin, a denied permission): nothing to say beyond the button.
        }
      }}
    >
      {copied ? t("common.copied") : t("common.copy")}
    </button>
  );
}
