//! A server process's stderr, to the server log and nowhere else, rate-limited: a chatty or
//! hostile process cannot flood the log.

use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};
use tokio::time::Instant;

/// Lines logged per window at most; the rest are counted and the count logged.
const LINES_PER_WINDOW: u32 = 20;
/// The window.
const WINDOW: Duration = Duration::from_secs(10);
/// The longest line logged; longer ones are cut.
const MAX_LINE_CHARS: usize = 1000;

/// Reads `stderr` to its end in the background, logging its lines at `info` with the server's
/// slug.
pub(crate) fn forward<R: AsyncRead + Send + Unpin + 'static>(server: &str, stderr: R) {
    let server = server.to_owned();
    tokio::spawn(async move {
        // Split on bytes, not UTF-8 lines: a stream that is not UTF-8 is still read to its end,
        // or the process would block on a full pipe.
        let mut lines = BufReader::new(stderr).split(b'\n');
        let mut limiter = Limiter::new(Instant::now());
        while let Ok(Some(line)) = lines.next_segment().await {
            match limiter.admit(Instant::now()) {
                Verdict::Drop => continue,
                Verdict::Log { dropped_before } => {
                    if dropped_before > 0 {
                        tracing::info!(server = %server, dropped = dropped_before, "MCP server stderr: lines left out");
                    }
                }
            }
            let line: String = String::from_utf8_lossy(&line)
                .chars()
                .take(MAX_LINE_CHARS)
                .collect();
            tracing::info!(server = %server, "MCP server stderr: {line}");
        }
        if limiter.dropped > 0 {
            tracing::info!(server = %server, dropped = limiter.dropped, "MCP server stderr: lines left out");
        }
    });
}

/// Counts lines per window.
struct Limiter {
    window_start: Instant,
    logged: u32,
    dropped: u64,
}

#[derive(Debug, PartialEq, Eq)]
enum Verdict {
    /// Log the line; `dropped_before` lines of the last window were left out.
    Log {
        dropped_before: u64,
    },
    Drop,
}

impl Limiter {
    fn new(now: Instant) -> Self {
        Self {
            window_start: now,
            logged: 0,
            dropped: 0,
        }
    }

    fn admit(&mut self, now: Instant) -> Verdict {
        let mut dropped_before = 0;
        if now.duration_since(self.window_start) >= WINDOW {
            dropped_before = self.dropped;
            *self = Self::new(now);
        }
        if self.logged >= LINES_PER_WINDOW {
            self.dropped += 1;
            return Verdict::Drop;
        }
        self.logged += 1;
        Verdict::Log { dropped_before }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_most_twenty_lines_a_window_are_logged_and_the_rest_counted() {
        let start = Instant::now();
        let mut limiter = Limiter::new(start);
        let verdicts: Vec<Verdict> = (0..100).map(|_| limiter.admit(start)).collect();
        let logged = verdicts.iter().filter(|v| **v != Verdict::Drop).count();
        assert_eq!(logged, 20);
        // The next window logs again and says how many were left out.
        let later = start + WINDOW;
        assert_eq!(limiter.admit(later), Verdict::Log { dropped_before: 80 });
        assert_eq!(limiter.admit(later), Verdict::Log { dropped_before: 0 });
    }
}
