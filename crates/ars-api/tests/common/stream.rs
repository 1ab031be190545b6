//! Reading an SSE stream as it comes, for streams that do not end by themselves (thread
//! events): message by message, counting keep-alive comments, noticing the end.

use std::time::Duration;

use bytes::Bytes;
use futures::StreamExt;
use futures::stream::BoxStream;
use reqwest::StatusCode;
use serde_json::Value;

use super::{SseMessage, TestApp};

pub struct LiveSse {
    body: BoxStream<'static, reqwest::Result<Bytes>>,
    /// Received text not yet split into messages.
    buffer: String,
    /// Keep-alive comment lines seen so far.
    pub comments: usize,
    /// The body ended; `Err` when it ended with a transport error rather than cleanly.
    pub ended: Option<Result<(), String>>,
}

impl LiveSse {
    /// Opens `path` with `token` (if any). A non-200 answer is `Err((status, JSON body))`.
    pub async fn open(
        app: &TestApp,
        path: &str,
        token: Option<&str>,
    ) -> Result<LiveSse, (StatusCode, Value)> {
        let mut req = app.client.get(format!("{}{path}", app.base));
        if let Some(token) = token {
            req = req.bearer_auth(token);
        }
        let res = tokio::time::timeout(Duration::from_secs(10), req.send())
            .await
            .expect("the stream answers")
            .unwrap();
        let status = res.status();
        if status != StatusCode::OK {
            let body = res.json().await.unwrap_or(Value::Null);
            return Err((status, body));
        }
        assert_eq!(res.headers()["content-type"], "text/event-stream");
        Ok(LiveSse {
            body: res.bytes_stream().boxed(),
            buffer: String::new(),
            comments: 0,
            ended: None,
        })
    }

    /// The next message within `within`; `None` once the stream has ended. Panics when
    /// nothing comes in time.
    pub async fn next_or_end(&mut self, within: Duration) -> Option<SseMessage> {
        let deadline = tokio::time::Instant::now() + within;
        loop {
            if let Some(message) = self.take_message() {
                return Some(message);
            }
            if self.ended.is_some() {
                return None;
            }
            let chunk = tokio::time::timeout_at(deadline, self.body.next())
                .await
                .unwrap_or_else(|_| panic!("no message within {within:?}"));
            match chunk {
                Some(Ok(bytes)) => self.buffer.push_str(&String::from_utf8_lossy(&bytes)),
                Some(Err(e)) => self.ended = Some(Err(e.to_string())),
                None => self.ended = Some(Ok(())),
            }
        }
    }

    /// The next message within `within`; panics on the end or a timeout.
    pub async fn next(&mut self, within: Duration) -> SseMessage {
        self.next_or_end(within)
            .await
            .expect("the stream ended early")
    }

    /// Every message up to and including the first that satisfies `done`.
    pub async fn until(
        &mut self,
        within: Duration,
        done: impl Fn(&SseMessage) -> bool,
    ) -> Vec<SseMessage> {
        let deadline = tokio::time::Instant::now() + within;
        let mut seen = Vec::new();
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let message = self.next(left).await;
            let last = done(&message);
            seen.push(message);
            if last {
                return seen;
            }
        }
    }

    /// What arrives within `period` (the stream may end meanwhile).
    pub async fn during(&mut self, period: Duration) -> Vec<SseMessage> {
        let deadline = tokio::time::Instant::now() + period;
        let mut seen = Vec::new();
        loop {
            if let Some(message) = self.take_message() {
                seen.push(message);
                continue;
            }
            if self.ended.is_some() {
                return seen;
            }
            match tokio::time::timeout_at(deadline, self.body.next()).await {
                Err(_) => return seen,
                Ok(Some(Ok(bytes))) => self.buffer.push_str(&String::from_utf8_lossy(&bytes)),
                Ok(Some(Err(e))) => self.ended = Some(Err(e.to_string())),
                Ok(None) => self.ended = Some(Ok(())),
            }
        }
    }

    /// Splits the first complete message off the buffer, counting comment-only blocks.
    fn take_message(&mut self) -> Option<SseMessage> {
        while let Some(end) = self.buffer.find("\n\n") {
            let block: String = self.buffer.drain(..end + 2).collect();
            let (mut event, mut id, mut data) = (String::from("message"), None, String::new());
            let mut fields = false;
            for line in block.lines() {
                if line.starts_with(':') {
                    self.comments += 1;
                    continue;
                }
                if line.is_empty() {
                    continue;
                }
                let (key, value) = line.split_once(':').unwrap_or((line, ""));
                let value = value.strip_prefix(' ').unwrap_or(value);
                fields = true;
                match key {
                    "event" => event = value.to_string(),
                    "id" => id = Some(value.parse().unwrap()),
                    "data" => {
                        if !data.is_empty() {
                            data.push('\n');
                        }
                        data.push_str(value);
                    }
                    other => panic!("unexpected SSE field {other:?}"),
                }
            }
            if fields {
                return Some(SseMessage {
                    event,
                    id,
                    data: serde_json::from_str(&data).unwrap(),
                });
            }
        }
        None
    }
}
