import { useState } from "react";
import { useTranslation } from "react-i18next";
import { errorMessage } from "../api";
import type { ShareConfig } from "../api/types";
import { isPublic, withPublic } from "../lib/sharing";
import { ShareToggle } from "./ShareToggle";

interface SharingSectionProps {
  /**
   * Names the section's parts: `<prefix>-sharing-title`, the toggle `<prefix>-share` and the
   * line saying who sees the resource, `<prefix>-visibility`.
   */
  prefix: string;
  /** The resource's words: `sharing`, `sharingFailed` and the three `visibility…` lines. */
  texts: "skills.detail" | "knowledge.detail" | "mcp.detail";
  shareConfig: ShareConfig | null | undefined;
  /** Stores the new sharing and takes the server's answer; a rejection is shown under the toggle. */
  save: (shareConfig: ShareConfig) => Promise<void>;
}

/**
 * A detail page's Sharing section: public to every user or not, saved at once. The choice being
 * saved shows immediately and the toggle waits; the stored one shows again once the server answered.
 */
export function SharingSection({ prefix, texts, shareConfig, save }: SharingSectionProps) {
  const { t } = useTranslation();
  const [error, setError] = useState<string | undefined>();
  const [pending, setPending] = useState<boolean | null>(null);
  async function change(shared: boolean) {
    setError(undefined);
    setPending(shared);
    try {
      await save(withPublic(shared, shareConfig));
    } catch (failure) {
      setError(t(`${texts}.sharingFailed`, { message: errorMessage(failure) }));
    } finally {
      setPending(null);
    }
  }
  const shared = pending ?? isPublic(shareConfig);
  return (
    <section aria-labelledby={`${prefix}-sharing-title`}>
      <h2 id={`${prefix}-sharing-title`}>{t(`${texts}.sharing`)}</h2>
      <ShareToggle
        testId={`${prefix}-share`}
        field={`${prefix}-share`}
        checked={shared}
        disabled={pending !== null}
        onChange={(shared) => void change(shared)}
        error={error}
      />
      <p className="hint" data-testid={`${prefix}-visibility`}>
        {shared
          ? t(`${texts}.visibilityPublic`)
          : shareConfig?.visibility === "users"
            ? t(`${texts}.visibilityUsers`)
            : t(`${texts}.visibilityPrivate`)}
      </p>
    </section>
  );
}
