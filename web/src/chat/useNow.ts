import { useSyncExternalStore } from "react";

/** One clock for the whole page: it ticks every second while anything watches it. */
let current = Date.now();
const listeners = new Set<() => void>();
let timer: ReturnType<typeof setInterval> | undefined;

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  // A watcher that starts now must not see the time of the last tick, perhaps minutes ago.
  current = Date.now();
  timer ??= setInterval(() => {
    current = Date.now();
    for (const l of listeners) l();
  }, 1000);
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

const still = () => () => undefined;
const snapshot = () => current;

/** The current time, ticking every second while `ticking`. */
export function useNow(ticking: boolean): number {
  return useSyncExternalStore(ticking ? subscribe : still, snapshot);
}
