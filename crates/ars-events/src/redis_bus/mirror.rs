//! One instance's reading of a run's stream, shared by every subscriber of the run on it.
//!
//! A run streamed to a thousand browsers through one instance would otherwise hold a thousand
//! Redis connections, each blocked in its own `XREAD` and each decoding every event for itself.
//! A [`Mirror`] reads the stream once, on one connection, into a log in memory that its
//! followers read as the in-process bus's subscribers read theirs: an event decoded once and
//! handed to every follower as the same [`SharedEvent`].
//!
//! A mirror starts at the event its first subscriber asked to follow from and keeps what it read
//! (at most the stream's own `max_len` events), so a later subscriber starting at or after that
//! point joins it; one starting earlier reads the stream on its own connection (see
//! `Follower` in the parent module). The reader ends at the run's terminal event, at a failure
//! (every follower gets it after the events it had not read yet) or when the last follower goes:
//! dropping the last [`Mirror`] handle stops it and forgets the mirror.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, Weak};

use ars_domain::RunId;
use redis::AsyncCommands;
use redis::aio::MultiplexedConnection;
use redis::streams::{StreamReadOptions, StreamReadReply};
use tokio::sync::watch;
use tokio::task::JoinHandle;

use super::{READ_BATCH, READ_BLOCK, decode};
use crate::bus::Cursor;
use crate::{EventError, SharedEvent};

/// The mirrors of one bus (shared by its clones), by run.
#[derive(Default)]
pub(super) struct Mirrors {
    by_run: Mutex<HashMap<RunId, Weak<Mirror>>>,
}

/// A follower's handle on a mirror: the mirror reads for as long as one is held.
pub(super) struct Mirror {
    run_id: RunId,
    feed: Arc<Feed>,
    /// The mirrors it is listed in, to take itself out when the last handle goes.
    mirrors: Weak<Mirrors>,
    reader: JoinHandle<()>,
}

/// What the reader writes and the followers read.
struct Feed {
    log: Mutex<Log>,
    /// Carries nothing but "the log changed"; followers wait on it.
    changed: watch::Sender<()>,
}

struct Log {
    /// The mirror follows the events after this one: a subscriber asking for earlier ones
    /// cannot join.
    start: u64,
    /// The events read, oldest first, ids consecutive; at most `max_len`.
    events: VecDeque<SharedEvent>,
    /// The id of the last event read (`start` before the first).
    last: u64,
    /// Set once the reader stopped: at the terminal event, or why it could not go on.
    end: Option<End>,
}

#[derive(Clone)]
enum End {
    /// The terminal event was read: the log is the run's whole rest.
    Terminal,
    /// The run's stream is gone (expired) or lost the events the mirror needed next.
    NotRetained,
    /// Reading failed; the message, as each follower's last item.
    Failed(String),
}

impl End {
    fn error(&self) -> Option<EventError> {
        match self {
            Self::Terminal => None,
            Self::NotRetained => Some(EventError::NotRetained),
            Self::Failed(message) => {
                Some(EventError::backend(std::io::Error::other(message.clone())))
            }
        }
    }
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Mirrors {
    /// The run's mirror a subscriber from `after` can join, if there is one: it started at or
    /// before `after`, still holds the events right after it, and has not failed.
    pub(super) fn join(&self, run_id: RunId, after: u64) -> Option<Arc<Mirror>> {
        let mirror = lock(&self.by_run).get(&run_id).and_then(Weak::upgrade)?;
        let log = lock(&mirror.feed.log);
        let oldest = log.events.front().map_or(log.last + 1, |e| e.id);
        let joinable = log.start <= after
            && after.saturating_add(1) >= oldest
            && matches!(log.end, None | Some(End::Terminal));
        drop(log);
        joinable.then_some(mirror)
    }

    /// Starts a mirror of the run from `after`, reading on `conn`, and lists it in place of any
    /// earlier one (whose followers keep reading it to its end).
    pub(super) fn start(
        self: &Arc<Self>,
        run_id: RunId,
        key: String,
        after: u64,
        max_len: usize,
        conn: MultiplexedConnection,
    ) -> Arc<Mirror> {
        let feed = Arc::new(Feed {
            log: Mutex::new(Log {
                start: after,
                events: VecDeque::new(),
                last: after,
                end: None,
            }),
            changed: watch::channel(()).0,
        });
        let reader = tokio::spawn(read(Arc::clone(&feed), conn, key, max_len));
        let mirror = Arc::new(Mirror {
            run_id,
            feed,
            mirrors: Arc::downgrade(self),
            reader,
        });
        lock(&self.by_run).insert(run_id, Arc::downgrade(&mirror));
        mirror
    }

    /// How many runs this instance mirrors now (for tests: a run nobody follows holds
    /// nothing).
    pub(super) fn mirrored(&self) -> usize {
        lock(&self.by_run)
            .values()
            .filter(|m| m.strong_count() > 0)
            .count()
    }
}

impl Drop for Mirror {
    fn drop(&mut self) {
        self.reader.abort();
        if let Some(mirrors) = self.mirrors.upgrade() {
            let mut by_run = lock(&mirrors.by_run);
            // Only this mirror's entry: a newer mirror of the run may have replaced it.
            if by_run
                .get(&self.run_id)
                .is_some_and(|m| std::ptr::eq(m.as_ptr(), self))
            {
                by_run.remove(&self.run_id);
            }
        }
    }
}

/// The reader: the run's stream after the log's last event, into the log, until an end.
async fn read(feed: Arc<Feed>, mut conn: MultiplexedConnection, key: String, max_len: usize) {
    let options = StreamReadOptions::default()
        .block(READ_BLOCK.as_millis().try_into().unwrap_or(usize::MAX))
        .count(READ_BATCH);
    let mut last = lock(&feed.log).last;
    let end = loop {
        let reply: Option<StreamReadReply> = match conn
            .xread_options(&[&key], &[format!("0-{last}")], &options)
            .await
        {
            Ok(reply) => reply,
            Err(err) => break End::Failed(err.to_string()),
        };
        let read: Result<Vec<SharedEvent>, EventError> = reply
            .into_iter()
            .flat_map(|r| r.keys)
            .flat_map(|k| k.ids)
            .map(|entry| decode(&entry).map(SharedEvent::from))
            .collect();
        let read = match read {
            Ok(read) => read,
            Err(err) => break End::Failed(err.to_string()),
        };
        if read.is_empty() {
            // Nothing within the block time. If the run expired meanwhile nothing ever will.
            match conn.exists::<_, bool>(&key).await {
                Ok(true) => continue,
                Ok(false) => break End::NotRetained,
                Err(err) => break End::Failed(err.to_string()),
            }
        }
        let ended = append(&mut lock(&feed.log), read, max_len);
        if let Some(end) = ended {
            break end;
        }
        last = lock(&feed.log).last;
        feed.changed.send_replace(());
    };
    lock(&feed.log).end = Some(end);
    feed.changed.send_replace(());
}

/// Appends what the reader read, keeping at most `max_len` events; the end it reached, if
/// any.
fn append(log: &mut Log, read: Vec<SharedEvent>, max_len: usize) -> Option<End> {
    for event in read {
        if event.id != log.last + 1 {
            // Trimmed past what the mirror had read: the events in between are lost.
            return Some(End::NotRetained);
        }
        log.last = event.id;
        let terminal = event.kind.is_terminal();
        log.events.push_back(event);
        while log.events.len() > max_len {
            log.events.pop_front();
        }
        if terminal {
            return Some(End::Terminal);
        }
    }
    None
}

/// One subscription reading a mirror.
pub(super) struct Reading {
    mirror: Arc<Mirror>,
    changed: watch::Receiver<()>,
    cursor: Cursor,
    /// Events taken from the log and not yet delivered.
    pending: VecDeque<SharedEvent>,
}

impl Reading {
    pub(super) fn new(mirror: Arc<Mirror>, after: u64) -> Self {
        let changed = mirror.feed.changed.subscribe();
        Self {
            mirror,
            changed,
            cursor: Cursor::new(after),
            pending: VecDeque::new(),
        }
    }

    /// The next event, an error, or `None` once the terminal event was delivered.
    pub(super) async fn next(&mut self) -> Option<Result<SharedEvent, EventError>> {
        loop {
            if self.cursor.done {
                return None;
            }
            if let Some(item) = self.cursor.next_from(&mut self.pending) {
                return Some(item);
            }
            // Marked seen before the log is read: a write after the read still wakes us.
            self.changed.borrow_and_update();
            let end = {
                let log = lock(&self.mirror.feed.log);
                let oldest = log.events.front().map_or(log.last + 1, |e| e.id);
                let skip =
                    usize::try_from(self.cursor.last.saturating_add(1).saturating_sub(oldest))
                        .unwrap_or(usize::MAX);
                self.pending
                    .extend(log.events.iter().skip(skip).take(READ_BATCH).cloned());
                log.end.clone()
            };
            if self.pending.is_empty() {
                match end {
                    // Started at or past the terminal event: nothing will come.
                    Some(End::Terminal) => return None,
                    Some(end) => return end.error().map(Err),
                    None => {
                        if self.changed.changed().await.is_err() {
                            // Unreachable while we hold the mirror (which owns the sender).
                            return None;
                        }
                    }
                }
            }
        }
    }
}
