/**
 * A transcript that follows runs live: starts from persisted messages, applies each streamed
 * event, and (for the main chat) keeps the run's resume point in `sessionStorage` whenever
 * the transcript is settled, so a reload resumes where the persisted messages end.
 */

import { useCallback, useEffect, useRef, useState } from "react";
import { session } from "../api";
import type { RunEvent } from "../api/events";
import type { Message } from "../api/types";
import { clearResumePoint, saveResumePoint } from "../sse/resume";
import { followRun, type StreamEnd } from "../sse/followRun";
import {
  applyEvent,
  EMPTY_TRANSCRIPT,
  fromMessages,
  isSettled,
  replayFilter,
  type Transcript,
} from "./transcript";

export interface FollowOptions {
  /** Keep the resume point in `sessionStorage` (the main chat does; popups replay). */
  persist: boolean;
  /**
   * Following from the run's first event over a page that holds its assistant messages up to
   * this seq: their replayed streaming is not shown again (`replayFilter`).
   */
  shownUpTo?: number;
  onEvent?: (event: RunEvent) => void;
  onEnd?: (end: StreamEnd) => void;
}

export function useRunFollower() {
  const [transcript, setTranscriptState] = useState<Transcript>(EMPTY_TRANSCRIPT);
  const current = useRef<Transcript>(EMPTY_TRANSCRIPT);
  const follower = useRef<AbortController | null>(null);

  const setTranscript = useCallback((next: Transcript) => {
    current.current = next;
    setTranscriptState(next);
  }, []);

  const stop = useCallback(() => {
    follower.current?.abort();
    follower.current = null;
  }, []);

  useEffect(() => stop, [stop]);

  const reset = useCallback(
    (messages: readonly Message[]) => setTranscript(fromMessages(messages)),
    [setTranscript],
  );

  const follow = useCallback(
    (runId: string, after: number, options: FollowOptions) => {
      stop();
      const controller = new AbortController();
      follower.current = controller;
      const shows = replayFilter(after === 0 ? options.shownUpTo : undefined);
      void followRun({
        runId,
        after,
        token: () => session.token(),
        signal: controller.signal,
        onEvent(event) {
          if (shows(event)) setTranscript(applyEvent(current.current, event));
          if (options.persist && isSettled(current.current)) saveResumePoint(runId, event.id);
          options.onEvent?.(event);
        },
      }).then((end) => {
        if (controller.signal.aborted) return;
        if (follower.current === controller) follower.current = null;
        if (end !== "aborted") clearResumePoint(runId);
        if (end === "unauthorized") session.expire();
        options.onEnd?.(end);
      });
    },
    [setTranscript, stop],
  );

  return { transcript, setTranscript, current, reset, follow, stop };
}
