import { useCallback, useEffect, useEffectEvent, useState } from "react";

export interface AsyncState<T> {
  data: T | undefined;
  error: unknown;
  loading: boolean;
  /** Loads again, keeping the current data on screen meanwhile. */
  reload: () => void;
  /** Replaces the data locally (after a write that answered the new value). */
  setData: (data: T) => void;
}

interface Settled<T> {
  /** The request (`key` and reload generation) this answer belongs to. */
  request: string;
  data: T | undefined;
  error: unknown;
}

/** Runs `load` when `key` changes (and on `reload`); a stale answer never overwrites a newer one. */
export function useAsync<T>(load: () => Promise<T>, key: string): AsyncState<T> {
  const [generation, setGeneration] = useState(0);
  const request = `${generation}:${key}`;
  const [settled, setSettled] = useState<Settled<T>>({ request: "", data: undefined, error: null });
  // The newest `load` is called, without re-running the effect each time it is re-created.
  const run = useEffectEvent(() => load());

  useEffect(() => {
    let live = true;
    run()
      .then((data) => live && setSettled({ request, data, error: null }))
      .catch((error: unknown) => live && setSettled((old) => ({ request, data: old.data, error })));
    return () => {
      live = false;
    };
  }, [request]);

  const reload = useCallback(() => setGeneration((g) => g + 1), []);
  const setData = useCallback((data: T) => setSettled((old) => ({ ...old, data, error: null })), []);
  return { data: settled.data, error: settled.error, loading: settled.request !== request, reload, setData };
}
