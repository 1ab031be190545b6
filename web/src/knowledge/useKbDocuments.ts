/**
 * A knowledge base's documents, live: listed once, then kept current by the knowledge base's
 * event stream (`event: document` for a document added or changed, `event: removed`). Each
 * connection lists the documents again (the stream's opening `snapshot` is not needed for
 * that); what the stream said while a listing was on its way is kept (see `mergeListing`).
 */

import { useCallback, useEffect, useEffectEvent, useRef, useState } from "react";
import { session } from "../api";
import { knowledgeEventsPath, listDocuments, type KbDocumentView } from "../api/knowledge";
import { followStream } from "../sse/followStream";
import { isSettled, mergeListing, removeDocument, upsertDocument } from "./documentsModel";

export interface KbDocuments {
  /** `null` until first listed. */
  documents: KbDocumentView[] | null;
  error: unknown;
  /** A document the page learnt of itself (an upload's or a retry's answer). */
  upsert: (doc: KbDocumentView) => void;
  remove: (id: string) => void;
}

/**
 * Follows the documents of knowledge base `kbId`; `onSettled` is called when a document's
 * ingestion ends or a document goes, so the page can read the knowledge base's counts again.
 */
export function useKbDocuments(kbId: string, onSettled: () => void): KbDocuments {
  const [documents, setDocuments] = useState<KbDocumentView[] | null>(null);
  const [error, setError] = useState<unknown>(null);
  // Documents changed since each listing in flight was asked for, by listing.
  const pending = useRef(new Set<Set<string>>());

  const touch = useCallback((id: string) => {
    for (const touched of pending.current) touched.add(id);
  }, []);
  const upsert = useCallback(
    (doc: KbDocumentView) => {
      touch(doc.id);
      setDocuments((old) => upsertDocument(old ?? [], doc));
    },
    [touch],
  );
  const remove = useCallback(
    (id: string) => {
      touch(id);
      setDocuments((old) => removeDocument(old ?? [], id));
    },
    [touch],
  );

  const settled = useEffectEvent(() => onSettled());
  const onMessage = useEffectEvent((event: string, data: unknown) => {
    if (event === "document") {
      const doc = data as KbDocumentView;
      upsert(doc);
      if (isSettled(doc)) settled();
    } else if (event === "removed") {
      remove((data as { id: string }).id);
      settled();
    }
  });

  useEffect(() => {
    const controller = new AbortController();
    const listings = pending.current;
    const list = () => {
      const touched = new Set<string>();
      listings.add(touched);
      listDocuments(kbId)
        .then((listing) => {
          if (controller.signal.aborted) return;
          setDocuments((old) => mergeListing(old ?? [], listing, touched));
          setError(null);
        })
        .catch((failure: unknown) => !controller.signal.aborted && setError(failure))
        .finally(() => listings.delete(touched));
    };
    list();
    void followStream({
      path: knowledgeEventsPath(kbId),
      token: () => session.token(),
      signal: controller.signal,
      // Changes made before the stream opened (since the first listing, or while it was
      // down) were not sent on it: the listing that follows says them.
      onOpen: list,
      onMessage: (event, data) => onMessage(event, data),
    }).then((end) => end === "unauthorized" && session.expire());
    return () => {
      controller.abort();
      listings.clear();
    };
  }, [kbId]);

  return { documents, error, upsert, remove };
}
