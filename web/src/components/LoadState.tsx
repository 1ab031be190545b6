/**
 * What a page shows around a load from the server (`useAsync`): the failure as an alert, the
 * "Loading…" line, and, for a page that is nothing without its data, the whole page until the
 * data is there.
 */

import type { ReactNode } from "react";
import { useTranslation } from "react-i18next";
import { Link } from "react-router-dom";
import { errorMessage } from "../api";

/** A failure, worded for the user, as an alert; nothing when there is none. */
export function ErrorNote({ error, testId }: { error: unknown; testId?: string }) {
  if (error == null) return null;
  return (
    <p className="error" role="alert" data-testid={testId}>
      {errorMessage(error)}
    </p>
  );
}

/** The line shown while something loads: "Loading…" unless the page words it itself. */
export function Loading({ text }: { text?: string }) {
  const { t } = useTranslation();
  return <p className="loading">{text ?? t("common.loading")}</p>;
}

interface LoadedPageProps<T> {
  /** The load so far: a `useAsync` state, or several combined. */
  state: { data: T | undefined; error: unknown };
  /** The way back shown under a failure. */
  back: { to: string; label: string };
  /** The failure's test id. */
  errorTestId?: string;
  /**
   * A failed reload leaves the page on screen (its data is still true enough); by default any
   * failure replaces the page, so data loaded for another address never shows under this one.
   */
  keepDataOnError?: boolean;
  children: (data: T) => ReactNode;
}

/** A page that is nothing without its data: its failure with the way back, "Loading…", or the page. */
export function LoadedPage<T>({ state, back, errorTestId, keepDataOnError, children }: LoadedPageProps<T>) {
  const { data, error } = state;
  if (error != null && !(keepDataOnError && data !== undefined)) {
    return (
      <main className="page">
        <ErrorNote error={error} testId={errorTestId} />
        <Link to={back.to}>{back.label}</Link>
      </main>
    );
  }
  if (data === undefined) {
    return (
      <main className="page">
        <Loading />
      </main>
    );
  }
  return children(data);
}
