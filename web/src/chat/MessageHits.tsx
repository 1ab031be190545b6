/** The "in messages" section of the thread search: message hits that open their thread. */

import { useTranslation } from "react-i18next";
import { Link } from "react-router-dom";
import { errorMessage } from "../api";
import type { Agent, Thread } from "../api/types";
import { formatDateTime } from "../lib/format";
import { highlightParts, MAX_QUERY_CHARS, messageLink, type MessageHit } from "./messageSearch";
import { useMessageSearch } from "./useMessageSearch";

interface MessageHitsProps {
  query: string;
  /** To name the agent that wrote an answer. */
  threads: readonly Thread[];
  agents: readonly Agent[];
  onOpen: () => void;
}

/** A hit's snippet as text (never parsed as HTML), the searched text marked. */
export function HitSnippet({ snippet, query }: { snippet: string; query: string }) {
  return (
    <span className="hit-snippet" data-testid="message-hit-snippet">
      {highlightParts(snippet, query).map((part, i) =>
        part.match ? <mark key={i}>{part.text}</mark> : <span key={i}>{part.text}</span>,
      )}
    </span>
  );
}

/**
 * The "in messages" part of the thread search: the messages (the user's and their agents'
 * answers) that hold the query, newest first; each opens its thread at that message.
 */
export function MessageHits({ query, threads, agents, onOpen }: MessageHitsProps) {
  const { t } = useTranslation();
  const search = useMessageSearch(query);
  if (search.status === "off") return null;

  const names = new Map(agents.map((agent) => [agent.id, agent.name]));
  const agentOf = new Map(threads.map((thread) => [thread.id, thread.agent_id]));
  const author = (hit: MessageHit) =>
    hit.role === "user"
      ? t("threads.hitFromYou")
      : (names.get(agentOf.get(hit.thread_id) ?? "") ?? t("threads.hitFromAgent"));

  return (
    <section className="message-hits" aria-labelledby="message-hits-title" data-testid="message-hits">
      <h2 id="message-hits-title" className="small-label">
        {t("threads.inMessages")}
      </h2>
      {search.status === "tooLong" && (
        <p className="empty">{t("threads.searchTooLong", { max: MAX_QUERY_CHARS })}</p>
      )}
      {search.status === "loading" && (
        <p className="loading" role="status">
          {t("threads.searchingMessages")}
        </p>
      )}
      {search.status === "failed" && (
        <p className="error" role="alert">
          {errorMessage(search.error)}
        </p>
      )}
      {search.status === "done" && search.hits.length === 0 && (
        <p className="empty" role="status" data-testid="message-hits-empty">
          {t("threads.noMessageMatch", { query: search.text })}
        </p>
      )}
      {search.status === "done" && search.hits.length > 0 && (
        <ul className="thread-list" aria-labelledby="message-hits-title">
          {search.hits.map((hit) => (
            <li
              key={hit.message_id}
              data-testid="message-hit"
              data-thread-id={hit.thread_id}
              data-message-id={hit.message_id}
            >
              <Link to={messageLink(hit.thread_id, hit.message_id)} className="thread-link" onClick={onOpen}>
                <span className="thread-title" data-testid="message-hit-title">
                  {hit.thread_title}
                </span>
                <HitSnippet snippet={hit.snippet} query={search.text} />
                <span className="thread-meta">
                  <span data-testid="message-hit-author">{author(hit)}</span>
                  {" · "}
                  <time dateTime={hit.created_at}>{formatDateTime(hit.created_at)}</time>
                </span>
              </Link>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
