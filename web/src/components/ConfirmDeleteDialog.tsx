/**
 * "Delete X?" with Cancel and Delete: runs `onConfirm` once (the button stays disabled while it
 * runs) and shows its failure in the dialog, which then stays open.
 */

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
            Cancel
          </button>
          <button
            type="button"
            className="danger"
            data-testid="confirm-delete"
            disabled={busy}
            onClick={confirm}
          >
            Delete
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
