/**
 * "Delete X?" with Cancel and Delete: runs `onConfirm` once (the button stays disabled while it
 * runs) and shows its failure in the dialog, which then stays open.
 */

import { useTranslation } from "react-i18next";
import { useState, type ReactNode } from "react";
import { errorMessage } from "../api";
import { Dialog } from "./Dialog";

interface ConfirmDeleteDialogProps {
  title: ReactNode;
  /** What will be lost. */
  children: ReactNode;
  onConfirm: () => Promise<void>;
  onClose: () => void;
}

export function ConfirmDeleteDialog({ title, children, onConfirm, onClose }: ConfirmDeleteDialogProps) {
  const { t } = useTranslation();
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  async function confirm() {
    setBusy(true);
    try {
      await onConfirm();
    } catch (failure) {
      setError(errorMessage(failure));
      setBusy(false);
    }
  }

  return (
    <Dialog
      title={title}
      onClose={onClose}
      actions={
        <>
          <button type="button" onClick={onClose}>
            {t("common.cancel")}
          </button>
          <button
            type="button"
            className="danger"
            data-testid="confirm-delete"
            disabled={busy}
            onClick={confirm}
          >
            {t("confirmDelete.confirm")}
          </button>
        </>
      }
    >
      {children}
      {error && (
        <p className="error" role="alert">
          {error}
        </p>
      )}
    </Dialog>
  );
}
