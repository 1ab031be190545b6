import { useCallback, useEffect, useState } from "react";

export interface AsyncState<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  /** Loads again, keeping the current data on screen meanwhile. */
  reload: () => void;
  /** Replaces the data locally (after a write that answered the new value). */
  setData: (data: T) => void;
}

/** Runs `load` when `key` changes (and on `reload`); a stale answer never overwrites a newer one. */
export function useAsync<T>(load: () => Promise<T>, key: string): AsyncState<T> {
  const [data, setData] = useState<T>();
  const [error, setError] = useState<unknown>(null);
  const [loading, setLoading] = useState(true);
  const [generation, setGeneration] = useState(0);

  useEffect(() => {
    let live = true;
    setLoading(true);
    load()
      .then((value) => {
        if (!live) return;
        setData(value);
        setError(null);
      })
      .catch((failure: unknown) => live && setError(failure))
      .finally(() => live && setLoading(false));
    return () => {
      live = false;
    };
    // `load` is re-created every render; `key` says when it asks for something else.
  }, [key, generation]);

  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  return { data, error, loading, reload, setData };
}
