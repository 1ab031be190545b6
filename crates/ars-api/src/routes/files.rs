//! A thread's workdir as a file browser: list, download, upload, delete.
//!
//! The workdir is the one the thread's runs work in, found by `ars_runtime::thread_scope`: a
//! child thread (a subagent's) stores its root's, so a file a subagent wrote is listed through
//! the parent and the other way round. Paths are relative to the workdir (`a/b.txt`; empty is
//! the workdir itself) and absolute ones are refused here; everything else goes to the
//! sandbox's resolver, which acts by directory handle and refuses exactly what it refuses the
//! tools — `..` out, a symlink pointing out, NUL bytes, over-long paths — as a 422
//! `path_refused`. As for the tools, a symlink may lead elsewhere in the owner's own workspace.
//! Another user's thread is a 404, like a missing one.

pub(crate) mod content;

use std::time::SystemTime;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use chrono::{DateTime, Utc};
use futures::StreamExt;
use serde::{Deserialize, Serialize};
use tokio::io::AsyncReadExt;
use tokio_util::io::ReaderStream;
use utoipa::{IntoParams, ToSchema};

use ars_domain::{ErrorReason, Reason, Subject};
use ars_sandbox::{DirEntry, EntryKind, SandboxError, Scope, TreeLimits, WriteMode};

use super::threads::owned_thread;
use crate::extract::ApiQuery;
use crate::{ApiError, AppState, Auth, ErrorBody};

/// Levels a recursive listing goes down unless asked otherwise, and at most.
const DEFAULT_DEPTH: usize = 8;
const MAX_DEPTH: usize = 16;
const MAX_DEPTH_OVER: usize = MAX_DEPTH + 1;

/// Entries one listing returns at most (a recursive one over all its levels).
const MAX_ENTRIES: usize = 2000;

/// What kind of entry a workdir listing shows.
#[derive(Debug, Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum FileKind {
    File,
    Dir,
    /// A symbolic link, shown as itself (never followed by a listing).
    Symlink,
    /// A socket, FIFO or device.
    Other,
}

/// One file or folder of a workdir.
#[derive(Debug, Serialize, ToSchema)]
pub struct FileEntry {
    /// The file name.
    pub name: String,
    /// Its path relative to the workdir, `/`-separated: what `path=` takes.
    pub path: String,
    pub kind: FileKind,
    /// Bytes (of the link itself for a symlink).
    pub size: u64,
    /// When its content last changed, where the file system tells.
    pub modified_at: Option<DateTime<Utc>>,
}

/// A folder of a workdir.
#[derive(Debug, Serialize, ToSchema)]
pub struct FileListing {
    /// The listed folder relative to the workdir (empty for the workdir itself).
    pub path: String,
    /// The workdir as the agent sees it, e.g. `/home/gem/user-data/threads/<id>`: tool calls
    /// name files relative to it or absolutely under it.
    pub workdir: String,
    /// Folders first, then files, each by name; depth first when recursive (a folder's entries
    /// follow it).
    pub entries: Vec<FileEntry>,
    /// True when entries were left out: more than 2000, or (recursive) deeper than `max_depth`.
    pub truncated: bool,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ListQuery {
    /// A folder, relative to the workdir; default: the workdir itself.
    #[serde(default)]
    path: String,
    /// List everything below the folder too, depth first.
    #[serde(default)]
    #[param(inline)]
    recursive: Option<Flag>,
    /// With `recursive`: how many levels (1-16, default 8; 1 is the folder's own entries).
    #[serde(default)]
    #[param(minimum = 1, maximum = 16)]
    max_depth: Option<usize>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct ContentQuery {
    /// A file, relative to the workdir.
    path: String,
    /// `true` (or `1`): `Content-Disposition: attachment` whatever the type.
    #[serde(default)]
    #[param(inline)]
    download: Option<Flag>,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct UploadQuery {
    /// Where to put the file, relative to the workdir; missing folders are created.
    path: String,
}

#[derive(Debug, Deserialize, IntoParams)]
#[serde(deny_unknown_fields)]
#[into_params(parameter_in = Query)]
pub struct DeleteQuery {
    /// A file, symlink or folder, relative to the workdir (not the workdir itself).
    path: String,
    /// Delete a folder with everything in it (an empty folder needs no flag).
    #[serde(default)]
    #[param(inline)]
    recursive: Option<Flag>,
}

/// A file's bytes, as downloaded or uploaded.
#[derive(ToSchema)]
#[schema(value_type = String, format = Binary)]
#[allow(dead_code)]
pub struct FileBytes(Vec<u8>);

/// A query flag: `true` or `1`, `false` or `0`.
#[derive(Clone, Copy, Debug, Deserialize, ToSchema)]
pub enum Flag {
    #[serde(rename = "true")]
    #[schema(rename = "true")]
    True,
    #[serde(rename = "false")]
    #[schema(rename = "false")]
    False,
    #[serde(rename = "1")]
    #[schema(rename = "1")]
    One,
    #[serde(rename = "0")]
    #[schema(rename = "0")]
    Zero,
}

impl Flag {
    fn on(flag: Option<Flag>) -> bool {
        matches!(flag, Some(Flag::True | Flag::One))
    }
}

/// The thread's workdir, prepared (so a thread whose runs never touched it lists as empty).
struct Workdir {
    scope: Scope,
    /// `/home/gem/user-data/<workdir>`: the prefix stripped from the sandbox's virtual paths.
    shown: String,
}

impl Workdir {
    async fn of(state: &AppState, auth: &Auth, id: &str) -> Result<Self, ApiError> {
        let thread = owned_thread(state, auth, id).await?;
        let scope = ars_runtime::thread_scope(&thread)
            .map_err(|e| ApiError::Internal(format!("thread {}: {e}", thread.id)))?;
        state
            .runtime
            .sandbox()
            .prepare(&scope)
            .await
            .map_err(|e| ApiError::Internal(format!("cannot prepare the workdir: {e}")))?;
        let shown = scope.virtual_workdir();
        Ok(Self { scope, shown })
    }

    /// A sandbox virtual path below the workdir, relative to it.
    fn relative(&self, virtual_path: &str) -> String {
        match virtual_path.strip_prefix(&self.shown) {
            Some("") => String::new(),
            Some(rest) => rest.strip_prefix('/').unwrap_or(rest).to_owned(),
            // Not below the workdir: cannot come from a relative path; shown as it is.
            None => virtual_path.to_owned(),
        }
    }

    fn entry(&self, entry: DirEntry) -> FileEntry {
        FileEntry {
            path: self.relative(&entry.path),
            name: entry.name,
            kind: match entry.kind {
                EntryKind::File => FileKind::File,
                EntryKind::Directory => FileKind::Dir,
                EntryKind::Symlink => FileKind::Symlink,
                EntryKind::Other => FileKind::Other,
            },
            size: entry.size,
            modified_at: entry.modified.map(DateTime::<Utc>::from),
        }
    }
}

/// `path` if it is relative; an absolute one is refused (the API reaches only the workdir).
fn relative_path(path: &str) -> Result<&str, ApiError> {
    if path.starts_with('/') {
        return Err(ApiError::PathRefused(format!(
            "the path `{}` is refused: paths are relative to the workdir",
            shorten(path)
        )));
    }
    Ok(path)
}

/// A caller's path for a message: at most 200 bytes, NUL bytes shown as `\0`.
fn shorten(path: &str) -> String {
    let mut end = path.len().min(200);
    while !path.is_char_boundary(end) {
        end -= 1;
    }
    let cut = if end < path.len() { "…" } else { "" };
    format!("{}{cut}", path[..end].replace('\0', "\\0"))
}

/// The answer to a sandbox refusal, in the API's words (the sandbox's are the model's).
fn file_error(err: SandboxError, path: &str) -> ApiError {
    let shown = shorten(path);
    let conflict = |message: String| ApiError::Conflict {
        message,
        field: Some("path".into()),
    };
    match err {
        SandboxError::InvalidPath { reason, .. } => {
            ApiError::PathRefused(format!("the path `{shown}` is refused: {reason}"))
        }
        SandboxError::OutsideScope { .. } | SandboxError::ReadOnly { .. } => {
            ApiError::PathRefused(format!(
                "the path `{shown}` is refused: it leads outside the workdir (`..` above it, or a \
                 symbolic link pointing out)"
            ))
        }
        SandboxError::NotFound { .. } => {
            ApiError::NotFound(format!("no file or folder `{shown}` in the workdir")).because(
                Reason::new(ErrorReason::NotFound)
                    .with("subject", Subject::File)
                    .with("name", shown.as_str()),
            )
        }
        SandboxError::IsDirectory { .. } => conflict(format!("`{shown}` is a folder, not a file")),
        SandboxError::NotDirectory { .. } => conflict(format!(
            "`{shown}` is not a folder, or a folder on its way is a file"
        )),
        SandboxError::DirectoryNotEmpty { .. } => conflict(format!(
            "the folder `{shown}` is not empty; delete it with recursive=true to delete what it \
             holds too"
        )),
        SandboxError::Exists { .. } => ApiError::PreconditionFailed(format!(
            "`{shown}` already exists; upload without `If-None-Match: *` to replace it"
        ))
        .because(Reason::new(ErrorReason::FileExists).with("path", shown.as_str())),
        quota @ SandboxError::QuotaExceeded { .. } => ApiError::Conflict {
            message: quota.to_string(),
            field: None,
        },
        other => ApiError::Internal(other.to_string()),
    }
}

/// The entries of a folder of the thread's workdir, or (recursive) of everything below it.
#[utoipa::path(get, path = "/threads/{id}/files", tag = "files", security(("bearer" = [])),
    params(("id" = String, Path, description = "Thread id (a subagent's child thread lists the same workdir)"), ListQuery),
    responses(
        (status = 200, body = FileListing),
        (status = 400, body = ErrorBody, description = "Malformed query string"),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "No such thread of yours, or no such folder"),
        (status = 409, body = ErrorBody, description = "`path` is a file"),
        (status = 422, body = ErrorBody, description = "`path` is refused (`path_refused`) or `max_depth` is out of range"),
    ))]
pub async fn list_files(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<ListQuery>,
) -> Result<Json<FileListing>, ApiError> {
    let recursive = Flag::on(query.recursive);
    let depth = match (recursive, query.max_depth) {
        (_, Some(0) | Some(MAX_DEPTH_OVER..)) => {
            return Err(ApiError::unprocessable(
                "max_depth",
                format!("must be between 1 and {MAX_DEPTH}"),
            ));
        }
        (false, _) => 1,
        (true, None) => DEFAULT_DEPTH,
        (true, Some(depth)) => depth,
    };
    let workdir = Workdir::of(&state, &auth, &id).await?;
    let path = relative_path(&query.path)?;
    // One entry more than is shown tells a plain listing cut by the count from one whose
    // folders merely hold more (which the tree reports too, and which is not truncation here).
    let limits = TreeLimits {
        max_depth: depth,
        max_entries: MAX_ENTRIES + 1,
    };
    let mut listing = state
        .runtime
        .sandbox()
        .tree(&workdir.scope, path, limits)
        .await
        .map_err(|e| file_error(e, path))?;
    let over = listing.entries.len() > MAX_ENTRIES;
    listing.entries.truncate(MAX_ENTRIES);
    listing.truncated = over || (recursive && listing.truncated);
    Ok(Json(FileListing {
        path: workdir.relative(&listing.path),
        entries: listing
            .entries
            .into_iter()
            .map(|e| workdir.entry(e))
            .collect(),
        workdir: workdir.shown,
        truncated: listing.truncated,
    }))
}

/// Downloads a file of the thread's workdir, streamed. `Content-Type` comes from the extension
/// (or, when that says nothing, from the first bytes: UTF-8 text is `text/plain`), with
/// `charset=utf-8` for text; text, images, audio, video, PDF and JSON are `inline`, anything
/// else (and everything with `download=true`) an `attachment`, named in ASCII and in UTF-8
/// (RFC 6266). Every answer carries `X-Content-Type-Options: nosniff` and a
/// `Content-Security-Policy` that runs no script and gives the document an origin of its own,
/// so an HTML or SVG file the agent wrote cannot act as the UI.
#[utoipa::path(get, path = "/threads/{id}/files/content", tag = "files", security(("bearer" = [])),
    params(("id" = String, Path, description = "Thread id"), ContentQuery),
    responses(
        (status = 200, content((FileBytes = "*/*")), description = "The file's bytes, as the `Content-Type` header says",
            headers(
                ("Content-Disposition" = String, description = "`inline` or `attachment`, with `filename` and `filename*`"),
                ("Content-Security-Policy" = String, description = "No script, no requests, a sandboxed origin"),
                ("X-Content-Type-Options" = String, description = "`nosniff`"),
            )),
        (status = 400, body = ErrorBody, description = "Malformed query string"),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "No such thread of yours, or no such file"),
        (status = 409, body = ErrorBody, description = "`path` is a folder"),
        (status = 422, body = ErrorBody, description = "`path` is refused (`path_refused`)"),
    ))]
pub async fn download_file(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<ContentQuery>,
) -> Result<Response, ApiError> {
    let workdir = Workdir::of(&state, &auth, &id).await?;
    let path = relative_path(&query.path)?;
    let file = state
        .runtime
        .sandbox()
        .open_file(&workdir.scope, path)
        .await
        .map_err(|e| file_error(e, path))?;
    let size = file.entry.size;
    // Never more than was measured: a file growing meanwhile must not break Content-Length.
    let mut reader = file.reader.take(size);
    let mut head = Vec::new();
    let presentation = if content::guess(&file.entry.name).is_some() {
        content::present(&file.entry.name, None)
    } else {
        (&mut reader)
            .take(content::SNIFF_BYTES)
            .read_to_end(&mut head)
            .await
            .map_err(|e| ApiError::Internal(format!("cannot read `{path}`: {e}")))?;
        content::present(&file.entry.name, Some(&head))
    };
    let inline = presentation.inline && !Flag::on(query.download);
    let head =
        futures::stream::once(async move { Ok::<_, std::io::Error>(bytes::Bytes::from(head)) });
    let body = Body::from_stream(head.chain(ReaderStream::new(reader)));
    let mut response = body.into_response();
    let headers = response.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_str(&presentation.content_type)
            .unwrap_or(HeaderValue::from_static("application/octet-stream")),
    );
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(size));
    headers.insert(
        header::CONTENT_DISPOSITION,
        content::disposition(&file.entry.name, inline),
    );
    headers.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    headers.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(content::FILE_CSP),
    );
    headers.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    if let Some(modified) = file.entry.modified.and_then(http_date) {
        headers.insert(header::LAST_MODIFIED, modified);
    }
    Ok(response)
}

/// `time` as an HTTP date (`Sun, 06 Nov 1994 08:49:37 GMT`).
fn http_date(time: SystemTime) -> Option<HeaderValue> {
    let text = DateTime::<Utc>::from(time)
        .format("%a, %d %b %Y %H:%M:%S GMT")
        .to_string();
    HeaderValue::from_str(&text).ok()
}

/// Uploads a file into the thread's workdir: the request body is the file's bytes, whatever its
/// type. Missing folders are created; the file appears whole (written beside and renamed into
/// place) and is charged to the workspace quota first. `If-None-Match: *` refuses to replace a
/// file that is already there (412).
#[utoipa::path(put, path = "/threads/{id}/files/content", tag = "files", security(("bearer" = [])),
    params(("id" = String, Path, description = "Thread id"), UploadQuery,
        ("If-None-Match" = Option<String>, Header, description = "`*`: only create, never replace")),
    request_body(description = "The file's bytes (any content type)", content((FileBytes = "application/octet-stream"))),
    responses(
        (status = 200, body = FileEntry, description = "Replaced"),
        (status = 201, body = FileEntry, description = "Created"),
        (status = 400, body = ErrorBody, description = "Malformed query string"),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "No such thread of yours"),
        (status = 409, body = ErrorBody, description = "`path` is a folder, a folder on its way is a file, or the workspace quota is exceeded"),
        (status = 412, body = ErrorBody, description = "`If-None-Match: *` and the file exists"),
        (status = 413, body = ErrorBody, description = "The body is over the upload limit (25 MiB unless configured otherwise); nothing is written"),
        (status = 422, body = ErrorBody, description = "`path` is refused (`path_refused`)"),
    ))]
pub async fn upload_file(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<UploadQuery>,
    headers: HeaderMap,
    body: Body,
) -> Result<(StatusCode, Json<FileEntry>), ApiError> {
    let limit = state.config.file_upload_limit;
    let too_large = || ApiError::PayloadTooLarge { limit };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    if declared.is_some_and(|n| n > limit as u64) {
        return Err(too_large());
    }
    let workdir = Workdir::of(&state, &auth, &id).await?;
    let path = relative_path(&query.path)?;
    let mode = match headers.get(header::IF_NONE_MATCH) {
        Some(value) if value.as_bytes().trim_ascii() == b"*" => WriteMode::CreateNew,
        // No entity tags are issued, so no other value can match: the write goes ahead.
        _ => WriteMode::Replace,
    };
    let mut bytes = Vec::new();
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let chunk =
            chunk.map_err(|e| ApiError::BadRequest(format!("cannot read the body: {e}")))?;
        if bytes.len() + chunk.len() > limit {
            return Err(too_large());
        }
        bytes.extend_from_slice(&chunk);
    }
    let written = state
        .runtime
        .sandbox()
        .write_bytes(&workdir.scope, path, bytes, mode)
        .await
        .map_err(|e| file_error(e, path))?;
    let status = if written.created {
        StatusCode::CREATED
    } else {
        StatusCode::OK
    };
    Ok((status, Json(workdir.entry(written.entry))))
}

/// Deletes a file, a symlink (the link, never what it points to) or a folder of the thread's
/// workdir: an empty folder as it is, one with entries only with `recursive=true`. The
/// workdir itself cannot be deleted.
#[utoipa::path(delete, path = "/threads/{id}/files", tag = "files", security(("bearer" = [])),
    params(("id" = String, Path, description = "Thread id"), DeleteQuery),
    responses(
        (status = 204, description = "Deleted"),
        (status = 400, body = ErrorBody, description = "Malformed query string or no `path`"),
        (status = 401, body = ErrorBody),
        (status = 404, body = ErrorBody, description = "No such thread of yours, or nothing at `path`"),
        (status = 409, body = ErrorBody, description = "A folder with entries, without `recursive=true`"),
        (status = 422, body = ErrorBody, description = "`path` is refused (`path_refused`): outside the workdir, or the workdir itself"),
    ))]
pub async fn delete_file(
    State(state): State<AppState>,
    auth: Auth,
    Path(id): Path<String>,
    ApiQuery(query): ApiQuery<DeleteQuery>,
) -> Result<StatusCode, ApiError> {
    let workdir = Workdir::of(&state, &auth, &id).await?;
    let path = relative_path(&query.path)?;
    state
        .runtime
        .sandbox()
        .remove(&workdir.scope, path, Flag::on(query.recursive))
        .await
        .map_err(|e| file_error(e, path))?;
    Ok(StatusCode::NO_CONTENT)
}
