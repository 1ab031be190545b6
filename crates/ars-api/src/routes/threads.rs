//! Threads: a user's conversations with an agent, and their persisted history.
//!
//! **Invariant:** a thread is its owner's alone. Another user's thread answers 404 exactly like
//! a missing one — admins included, since conversations are private, not managed resources.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use utoipa::{IntoParams, ToSchema};

use ars_domain::{Thread, ThreadId};

use super::agents::visible_agent;
use crate::extract::{ApiJson, ApiQuery};
use crate::{ApiError, AppState, Auth, ErrorBody};

mod view;

pub use view::{MessageView, ThreadView};

/// Longest thread title, in characters.
const MAX_TITLE_CHARS: usize = 200;

/// The title of a thread created without one.
const DEFAULT_TITLE: &str = "New thread";

/// The body of `POST /api/threads`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct CreateThread {
    /// The agent to talk to: its id or slug. It must be visible to the caller and a normal
    /// (non-subagent) agent.
    agent_id: String,
    /// Default: `New thread`. Not blank; at most 200 characters, stored trimmed.
    #[serde(default)]
    #[schema(
        max_length = 200,
        pattern = r"[^\t\n\u000B\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]"
    )]
    title: Option<String>,
}

/// The body of `PATCH /api/threads/{id}`.
#[derive(Debug, Deserialize, ToSchema)]
#[serde(deny_unknown_fields)]
pub struct RenameThread {
    /// Not blank; at most 200 characters, stored trimmed.
    #[schema(
        max_length = 200,
        pattern = r"[^\t\n\u000B\f\r \u0085\u00A0\u1680\u2000-\u200A\u2028\u2029\u202F\u205F\u3000]"
    )]
    title: String,
}

/// A title of at most 200 characters that is not blank, trimmed; or a 422 naming `title`.
/// The length is that of the title as sent, as the OpenAPI schema states it.
fn valid_title(title: &str) -> Result<String, ApiError> {
    let too_long = title.chars().count() > MAX_TITLE_CHARS;
    let title = title.trim();
    if title.is_empty() {
        return Err(
            ApiError::unprocessable("title", "the title must not be blank")
                .because(ars_domain::ErrorReason::Blank),
        );
    }
    if too_long {
        return Err(ApiError::unprocessable(
            "title",
            format!("the title is longer than {MAX_TITLE_CHARS} characters"),
        )
        .because(
            ars_domain::Reason::new(ars_domain::ErrorReason::TooLong).with("max", MAX_TITLE_CHARS),
        ));
    }
    Ok(title.to_string())
}

/// Loads a thread the caller owns; anything else (malformed id, missing, someone else's) is a
/// 404.
pub(crate) async fn owned_thread(
    state: &AppState,
    auth: &Auth,
    id: &str,
) -> Result<Thread, ApiError> {
    let Some(id) = ThreadId::parse(id) else {
        return Err(ApiError::not_found(ars_domain::Subject::Thread));
    };
    state
        .store
        .thread(&id)
        .await?
        .filter(|t| t.user_id == auth.user.id)
        .ok_or_else(|| ApiError::not_found(ars_domain::Subject::Thread))
}

/// Starts a conversation with an agent.
#[utoipa::path(post, path = "/threads", tag = "threads", security(("bearer" = [])), request_body = CreateThread,
    responses(
        (status = 201, body = ThreadView),
        (status = 400, body = ErrorBody, description = "Malformed JSON"),
        (status = 401, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "Unknown, invisible or subagent `agent_id`"),
        (status = 422, body = ErrorBody, description = "Bad `title`"),
    ))]
pub async fn create_thread(
    State(state): State<AppState>,
    auth: Auth,
    ApiJson(body): ApiJson<CreateThread>,
) -> Result<(StatusCode, Json<ThreadView>), ApiError> {
    let title = match body.title.as_deref() {
        None => DEFAULT_TITLE.to_string(),
        Some(title) => valid_title(title)?,
    };
    let agent = match visible_agent(&state, &auth.caller(), &body.agent_id).await {
        Ok(agent) => agent,
        // The body is well-formed; what it names is not there (or not for this caller): a
        // conflict with the stored state, which no schema can state (409, not 422).
        Err(e) if e.status() == StatusCode::NOT_FOUND => {
            return Err(ApiError::Conflict {
                message: format!("no agent `{}` is visible to you", body.agent_id),
                field: Some("agent_id".into()),
            }
            .because(
                ars_domain::Reason::new(ars_domain::ErrorReason::NotFound)
                    .with("subject", ars_domain::Subject::Agent)
                    .with("name", body.agent_id.as_str()),
            ));
        }
        Err(other) => return Err(other),
    };
    if agent.is_subagent {
        return Err(ApiError::Conflict {
            message: format!(
                "`{}` is a subagent; threads are started with normal agents, which delegate to \
                 subagents themselves",
                agent.slug
            ),
            field: Some("agent_id".into()),
        });
    }
    let thread = Thread::new_root(auth.user.id, agent.id, title);
    let thread = state.store.create_thread(&thread).await?;
    Ok((StatusCode::CREATED, Json(thread.into())))
}

/// The query of `GET /api/threads`: without `limit` or a cursor, every thread; with them, one
/// page.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ThreadsQuery {
    /// At most this many threads (1-500; 100 when only a cursor is given): one page. A page
    /// shorter than `limit` is the last.
    #[param(minimum = 1, maximum = 500)]
    limit: Option<u32>,
    /// The page after the last thread of the previous page: its `updated_at`, with `before_id`.
    /// Alone, the threads updated before this time.
    before_updated_at: Option<chrono::DateTime<chrono::Utc>>,
    /// The `id` of the last thread of the previous page, with `before_updated_at`. Alone, the
    /// threads after that thread of yours as it stands now (404 when there is none).
    #[param(pattern = r"^[A-Za-z0-9_-]{1,512}$")]
    before_id: Option<String>,
}

/// The most threads one page lists, and how many a cursor without `limit` lists.
const MAX_THREAD_PAGE: u32 = 500;
const DEFAULT_THREAD_PAGE: u32 = 100;

/// The page a [`ThreadsQuery`] asks for: `None` for the whole list.
async fn thread_page(
    state: &AppState,
    auth: &Auth,
    query: ThreadsQuery,
) -> Result<Option<(u32, Option<ars_store::ThreadCursor>)>, ApiError> {
    if let Some(limit) = query.limit
        && !(1..=MAX_THREAD_PAGE).contains(&limit)
    {
        return Err(
            ApiError::unprocessable("limit", "limit must be 1-500").because(
                ars_domain::Reason::new(ars_domain::ErrorReason::OutOfRange)
                    .with("min", 1u64)
                    .with("max", u64::from(MAX_THREAD_PAGE)),
            ),
        );
    }
    let id =
        match query.before_id {
            Some(id) => Some(ThreadId::parse(&id).ok_or_else(|| {
                ApiError::unprocessable("before_id", "before_id is not a thread id")
            })?),
            None => None,
        };
    let cursor = match (query.before_updated_at, id) {
        (None, None) => None,
        (Some(updated_at), id) => Some(ars_store::ThreadCursor { updated_at, id }),
        (None, Some(id)) => {
            let thread = owned_thread(state, auth, id.as_str()).await?;
            Some(ars_store::ThreadCursor {
                updated_at: thread.updated_at,
                id: Some(thread.id),
            })
        }
    };
    Ok(match (query.limit, cursor) {
        (None, None) => None,
        (limit, cursor) => Some((limit.unwrap_or(DEFAULT_THREAD_PAGE), cursor)),
    })
}

/// The caller's top-level threads, most recently active first; `waiting` marks those where a
/// run (theirs or a subagent's) waits for the caller's decision. With `limit`, one page: the
/// next page is asked for with the last thread's `updated_at` and `id` (keyset pagination,
/// as quick deep in a long history as at its top).
#[utoipa::path(get, path = "/threads", tag = "threads", security(("bearer" = [])),
    params(ThreadsQuery),
    responses(
        (status = 200, body = [ThreadView]),
        (status = 400, body = ErrorBody, description = "Unreadable query"),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "`before_id` alone names no thread of yours"),
        (status = 422, body = ErrorBody, description = "A `limit` out of range"),
    ))]
pub async fn list_threads(
    State(state): State<AppState>,
    auth: Auth,
    ApiQuery(query): ApiQuery<ThreadsQuery>,
) -> Result<Json<Vec<ThreadView>>, ApiError> {
    let threads = match thread_page(&state, &auth, query).await? {
        None => state.store.list_threads(auth.user.id).await?,
        Some((limit, cursor)) => {
            state
                .store
                .thread_page(auth.user.id, limit, cursor.as_ref())
                .await?
        }
    };
    let waiting = state.store.waiting_threads(auth.user.id).await?;
    Ok(Json(
        threads
            .into_iter()
            .map(|thread| {
                let waits = waiting.contains(&thread.id);
                ThreadView {
                    waiting: waits,
                    ..thread.into()
                }
            })
            .collect(),
    ))
}

/// One of the caller's threads.
#[utoipa::path(get, path = "/threads/{id}", tag = "threads", security(("bearer" = [])),
    params(("id" = String, Path, description = "Thread id")),
    responses((status = 200, body = ThreadView), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody)))]
pub async fn get_thread(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<Json<ThreadView>, ApiError> {
    Ok(Json(owned_thread(&state, &auth, &id).await?.into()))
}

/// Renames a thread.
#[utoipa::path(patch, path = "/threads/{id}", tag = "threads", security(("bearer" = [])),
    params(("id" = String, Path, description = "Thread id")), request_body = RenameThread,
    responses(
        (status = 200, body = ThreadView),
        (status = 400, body = ErrorBody), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 413, body = ErrorBody), (status = 415, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "Blank or over-long `title`"),
    ))]
pub async fn rename_thread(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    ApiJson(body): ApiJson<RenameThread>,
) -> Result<Json<ThreadView>, ApiError> {
    let title = valid_title(&body.title)?;
    let thread = owned_thread(&state, &auth, &id).await?;
    Ok(Json(
        state.store.rename_thread(&thread.id, &title).await?.into(),
    ))
}

/// Deletes a thread with its messages, runs and subagent threads, and (a conversation's, not
/// a subagent thread's) the files of its workdir, which frees their space in the workspace
/// quota. Refused while a run is active: cancel it first.
#[utoipa::path(delete, path = "/threads/{id}", tag = "threads", security(("bearer" = [])),
    params(("id" = String, Path, description = "Thread id")),
    responses(
        (status = 204), (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 409, body = ErrorBody, description = "A run is active; `active_run_id` names it"),
    ))]
pub async fn delete_thread(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
) -> Result<StatusCode, ApiError> {
    let thread = owned_thread(&state, &auth, &id).await?;
    if let Some(active) = state.store.active_run(&thread.id).await? {
        return Err(ApiError::busy(active.id));
    }
    remove_thread(&state, &thread).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Deletes a thread with its child threads, messages and runs, then its files: a 404 when it
/// is already gone. Callers stop its runs first.
pub(crate) async fn remove_thread(state: &AppState, thread: &Thread) -> Result<(), ApiError> {
    if state.store.delete_thread(&thread.id).await? == ars_store::Deleted::NotFound {
        return Err(ApiError::not_found(ars_domain::Subject::Thread));
    }
    // A subagent thread shares its root's workdir, which stays with the root. The files go
    // after the thread (no view reaches them any more); a failure leaves them, logged.
    if thread.lineage.is_none() {
        let removed = match ars_runtime::thread_scope(thread) {
            Ok(scope) => state.runtime.sandbox().remove_workdir(&scope).await,
            Err(err) => Err(err),
        };
        if let Err(err) = removed {
            tracing::warn!(thread = %thread.id, %err, "cannot remove a deleted thread's files");
        }
    }
    Ok(())
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct MessagesQuery {
    /// Also list the messages a later run replaced (regenerate, edit-and-resend), each with
    /// `replaced_by_run_id`, in their places. Default `false`: the current history only.
    #[serde(default)]
    include_replaced: bool,
    /// One page: at most this many messages (1-1000), the last ones before `before_seq` (or
    /// the thread's last), still in `seq` order. Without it (and without `before_seq`), every
    /// message.
    #[param(minimum = 1, maximum = 1000)]
    limit: Option<u32>,
    /// The page before this seq: the `seq` of the first message of the page read before
    /// (100 messages unless `limit` says).
    #[param(minimum = 1)]
    before_seq: Option<i64>,
}

/// The most messages one page lists, and how many a `before_seq` without `limit` lists.
const MAX_MESSAGE_PAGE: u32 = 1000;
const DEFAULT_MESSAGE_PAGE: u32 = 100;

/// The thread's committed messages in order: user inputs, assistant messages with their tool
/// calls, tool results and notices. A tool call that never got a result and whose run has
/// ended (cut off by a stop, crash or cancel) is marked `interrupted`. Messages a later run
/// replaced (`replace_from`) are left out unless `include_replaced=true`. With `limit` or
/// `before_seq`, one page, read from the thread's end backwards: the first page is the
/// conversation's latest messages, and the page before is asked for with the `seq` of the
/// first message shown.
#[utoipa::path(get, path = "/threads/{id}/messages", tag = "threads", security(("bearer" = [])),
    params(("id" = String, Path, description = "Thread id"), MessagesQuery),
    responses(
        (status = 200, body = [MessageView]),
        (status = 400, body = ErrorBody, description = "Unreadable query"),
        (status = 401, body = ErrorBody), (status = 404, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "A `limit` or `before_seq` out of range"),
    ))]
pub async fn list_messages(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<MessagesQuery>,
) -> Result<Json<Vec<MessageView>>, ApiError> {
    if let Some(limit) = query.limit
        && !(1..=MAX_MESSAGE_PAGE).contains(&limit)
    {
        return Err(
            ApiError::unprocessable("limit", "limit must be 1-1000").because(
                ars_domain::Reason::new(ars_domain::ErrorReason::OutOfRange)
                    .with("min", 1u64)
                    .with("max", u64::from(MAX_MESSAGE_PAGE)),
            ),
        );
    }
    if let Some(seq) = query.before_seq
        && seq < 1
    {
        return Err(
            ApiError::unprocessable("before_seq", "before_seq must be at least 1").because(
                ars_domain::Reason::new(ars_domain::ErrorReason::OutOfRange).with("min", 1u64),
            ),
        );
    }
    let thread = owned_thread(&state, &auth, &id).await?;
    let active = state.store.active_run(&thread.id).await?.map(|r| r.id);
    if query.limit.is_none() && query.before_seq.is_none() {
        let mut messages = if query.include_replaced {
            state.store.all_messages(&thread.id).await?
        } else {
            state.store.messages(&thread.id).await?
        };
        ars_domain::thread::mark_interrupted_calls(&mut messages, active);
        return Ok(Json(messages.into_iter().map(MessageView::from).collect()));
    }
    let limit = query.limit.unwrap_or(DEFAULT_MESSAGE_PAGE);
    let mut page = state
        .store
        .message_page(&thread.id, limit, query.before_seq, query.include_replaced)
        .await?;
    // A call near the page's end may have its result on a later page: ask its run.
    let mut answered = std::collections::HashSet::new();
    for run in ars_domain::thread::runs_with_unanswered_calls(&page, active) {
        for call in state.store.answered_calls(run).await? {
            answered.insert((run, call));
        }
    }
    ars_domain::thread::mark_interrupted_calls_with(&mut page, active, &answered);
    Ok(Json(page.into_iter().map(MessageView::from).collect()))
}

/// The query of `GET /api/threads/search`.
#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct SearchQuery {
    /// The text to find in messages: 1-200 characters, not blank; ASCII letters match either
    /// case.
    #[param(min_length = 1, max_length = 200, pattern = r"[^\s\u0085]")]
    q: String,
    /// At most this many hits (1-100, default 20).
    #[serde(default)]
    #[param(minimum = 1, maximum = 100)]
    limit: Option<u32>,
}

/// One message that holds the text searched for.
#[derive(Debug, Serialize, ToSchema)]
pub struct MessageHit {
    #[schema(value_type = String)]
    thread_id: ThreadId,
    thread_title: String,
    #[schema(value_type = String)]
    message_id: ars_domain::MessageId,
    seq: i64,
    /// `user` or `assistant`.
    role: String,
    /// The text around the first match (`…` where it was cut).
    snippet: String,
    created_at: chrono::DateTime<chrono::Utc>,
}

/// How much of a message a snippet shows before and after the match, in characters.
const SNIPPET_BEFORE: usize = 40;
const SNIPPET_AFTER: usize = 100;

/// The text around the first match of `needle` in `text` (ASCII case ignored).
fn snippet(text: &str, needle: &str) -> String {
    let at = text
        .to_ascii_lowercase()
        .find(&needle.to_ascii_lowercase())
        .unwrap_or(0);
    let before: Vec<char> = text[..at].chars().collect();
    let start = before.len().saturating_sub(SNIPPET_BEFORE);
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    out.extend(&before[start..]);
    let mut rest = text[at..].chars();
    let keep = needle.chars().count() + SNIPPET_AFTER;
    out.extend(rest.by_ref().take(keep));
    if rest.next().is_some() {
        out.push('…');
    }
    out.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Finds text in the caller's conversations: their messages and their agents' answers in their
/// threads (not subagents' threads, not replaced messages), newest first, each with its thread
/// and the text around the match. Chinese text matches as it is written.
#[utoipa::path(get, path = "/threads/search", tag = "threads", security(("bearer" = [])),
    params(SearchQuery),
    responses(
        (status = 200, body = [MessageHit]),
        (status = 400, body = ErrorBody, description = "Unreadable query"),
        (status = 401, body = ErrorBody),
        (status = 422, body = ErrorBody, description = "A blank or over-long `q`, a `limit` out of range"),
    ))]
pub async fn search_messages(
    State(state): State<AppState>,
    auth: Auth,
    ApiQuery(query): ApiQuery<SearchQuery>,
) -> Result<Json<Vec<MessageHit>>, ApiError> {
    let text = query.q.trim();
    if text.is_empty() || query.q.chars().count() > 200 {
        return Err(
            ApiError::unprocessable("q", "q must be 1-200 characters, not blank").because(
                ars_domain::Reason::new(ars_domain::ErrorReason::Length).with("max", 200u64),
            ),
        );
    }
    let limit = query.limit.unwrap_or(20);
    if !(1..=100).contains(&limit) {
        return Err(ApiError::unprocessable("limit", "limit must be 1-100"));
    }
    let hits = state
        .store
        .search_messages(auth.user.id, text, limit)
        .await?;
    // The titles of the hits' threads only (at most `limit`), in one read.
    let mut wanted: Vec<ThreadId> = hits.iter().map(|m| m.thread_id.clone()).collect();
    wanted.sort();
    wanted.dedup();
    let titles: std::collections::HashMap<ThreadId, String> = state
        .store
        .threads(&wanted)
        .await?
        .into_iter()
        .map(|t| (t.id, t.title))
        .collect();
    Ok(Json(
        hits.into_iter()
            .map(|m| MessageHit {
                thread_title: titles.get(&m.thread_id).cloned().unwrap_or_default(),
                snippet: snippet(&m.content, text),
                thread_id: m.thread_id,
                message_id: m.id,
                seq: m.seq,
                role: m.role.as_str().to_string(),
                created_at: m.created_at,
            })
            .collect(),
    ))
}

#[cfg(test)]
mod tests {
    use super::snippet;

    #[test]
    fn a_snippet_shows_the_text_around_the_first_match_cut_on_characters() {
        assert_eq!(snippet("Hello World", "world"), "Hello World");
        let long = format!("{}翻译助手{}", "前".repeat(60), "后".repeat(200));
        let cut = snippet(&long, "翻译");
        assert!(cut.starts_with('…') && cut.ends_with('…'), "{cut}");
        assert!(cut.contains("翻译助手"));
        assert_eq!(cut.chars().filter(|c| *c == '前').count(), 40);
        assert_eq!(snippet("a\n\n  b needle", "NEEDLE"), "a b needle");
    }
}
