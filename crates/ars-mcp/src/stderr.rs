//! A server process's stderr, to the server log and nowhere else, rate-limited: a chatty or
//! hostile process cannot flood the log.

use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, BufReader};

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
        let mut window_start = tokio::time::Instant::now();
        let (mut logged, mut dropped) = (0u32, 0u64);
        loop {
            let line = match lines.next_segment().await {
                Ok(Some(line)) => line,
                Ok(None) | Err(_) => break,
            };
            if window_start.elapsed() >= WINDOW {
                if dropped > 0 {
                    tracing::info!(server = %server, dropped, "MCP server stderr: lines left out");
                }
                window_start = tokio::time::Instant::now();
                (logged, dropped) = (0, 0);
            }
            if logged >= LINES_PER_WINDOW {
                dropped += 1;
                continue;
            }
            logged += 1;
            let line: String = String::from_utf8_lossy(&line)
                .chars()
                .take(MAX_LINE_CHARS)
                .collect();
            tracing::info!(server = %server, "MCP server stderr: {line}");
        }
        if dropped > 0 {
            tracing::info!(server = %server, dropped, "MCP server stderr: lines left out");
        }
    });
}
