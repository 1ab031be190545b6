/**
 * Where to resume each run's event stream after a page reload, kept per tab in
 * `sessionStorage`. The stored id is the last event after which the rendered transcript equals
 * the persisted messages (see `chat/transcript.ts`), so a reloaded page, which starts from the
 * persisted messages, resumes exactly where they end.
 */

const PREFIX = "ars.run-resume.";

export function loadResumePoint(runId: string): number {
  const stored = Number(window.sessionStorage.getItem(PREFIX + runId));
  return Number.isSafeInteger(stored) && stored > 0 ? stored : 0;
}

export function saveResumePoint(runId: string, eventId: number): void {
  window.sessionStorage.setItem(PREFIX + runId, String(eventId));
}

export function clearResumePoint(runId: string): void {
  window.sessionStorage.removeItem(PREFIX + runId);
}
