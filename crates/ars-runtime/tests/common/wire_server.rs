//! A loopback OpenAI-compatible server written straight on TCP, so a test can break a stream
//! the way a real network does: drop the connection mid-body, send a bad chunk, or go silent
//! after the headers. It speaks the real wire format (`POST /v1/chat/completions`, chunked
//! `text/event-stream` of `data: {json}` events ending in `data: [DONE]`).

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::json;
use tokio::io::AsyncWriteExt;
use tokio::net::{TcpListener, TcpStream};

/// One canned answer; the last one of a server's list repeats.
#[derive(Clone, Debug)]
pub enum Answer {
    /// These text deltas, a `stop` finish and `[DONE]`.
    Whole(Vec<&'static str>),
    /// These text deltas, then the connection is dropped mid-body: no finish, no `[DONE]`.
    Cut(Vec<&'static str>),
    /// These text deltas, then a chunk that is not JSON.
    Malformed(Vec<&'static str>),
    /// A plain JSON response with this status.
    Status(u16, serde_json::Value),
    /// The headers of a stream, then silence.
    Silent,
}

pub struct WireServer {
    /// `http://127.0.0.1:<port>/v1`.
    pub base_url: String,
    requests: Arc<AtomicUsize>,
}

impl WireServer {
    pub async fn start(answers: Vec<Answer>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base_url = format!("http://{}/v1", listener.local_addr().unwrap());
        let requests = Arc::new(AtomicUsize::new(0));
        let answers = Arc::new(Mutex::new(answers));
        let counter = Arc::clone(&requests);
        tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                let answers = Arc::clone(&answers);
                let counter = Arc::clone(&counter);
                tokio::spawn(async move {
                    if read_request(&socket).await.is_none() {
                        return;
                    }
                    counter.fetch_add(1, Ordering::SeqCst);
                    let answer = {
                        let mut answers = answers.lock().unwrap();
                        if answers.len() > 1 {
                            answers.remove(0)
                        } else {
                            answers[0].clone()
                        }
                    };
                    answer_with(socket, answer).await;
                });
            }
        });
        Self { base_url, requests }
    }

    /// How many requests reached the server.
    pub fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

/// Reads one request's head and body; `None` if the client went away first.
async fn read_request(socket: &TcpStream) -> Option<()> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        socket.readable().await.ok()?;
        match socket.try_read(&mut chunk) {
            Ok(0) => return None,
            Ok(n) => buf.extend_from_slice(&chunk[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(_) => return None,
        }
        let text = String::from_utf8_lossy(&buf);
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| {
                    let (name, value) = l.split_once(':')?;
                    name.eq_ignore_ascii_case("content-length")
                        .then(|| value.trim().parse::<usize>().ok())?
                })
                .unwrap_or(0);
            if buf.len() >= end + 4 + length {
                return Some(());
            }
        }
    }
}

fn text_event(text: &str) -> String {
    json!({
        "id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
        "choices": [{ "index": 0, "delta": { "content": text }, "finish_reason": null }],
    })
    .to_string()
}

fn frame(data: &str) -> Vec<u8> {
    let event = format!("data: {data}\n\n");
    format!("{:x}\r\n{event}\r\n", event.len()).into_bytes()
}

const STREAM_HEAD: &[u8] = b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\n\
    transfer-encoding: chunked\r\nconnection: close\r\n\r\n";

/// The head of a stream and one event per text delta.
fn deltas(texts: Vec<&'static str>) -> Vec<u8> {
    let mut out = STREAM_HEAD.to_vec();
    for text in texts {
        out.extend(frame(&text_event(text)));
    }
    out
}

async fn answer_with(mut socket: TcpStream, answer: Answer) {
    match answer {
        Answer::Whole(texts) => {
            let mut out = deltas(texts);
            out.extend(frame(
                &json!({"id": "c", "object": "chat.completion.chunk", "created": 1, "model": "m",
                    "choices": [{ "index": 0, "delta": {}, "finish_reason": "stop" }]})
                .to_string(),
            ));
            out.extend(frame("[DONE]"));
            out.extend(b"0\r\n\r\n");
            let _ = socket.write_all(&out).await;
            let _ = socket.shutdown().await;
        }
        Answer::Cut(texts) => {
            let out = deltas(texts);
            let _ = socket.write_all(&out).await;
            let _ = socket.flush().await;
            tokio::time::sleep(Duration::from_millis(30)).await;
            // Dropping the socket mid-body: the chunked body never gets its last chunk.
            drop(socket);
        }
        Answer::Malformed(texts) => {
            let mut out = deltas(texts);
            out.extend(frame("{not json"));
            out.extend(frame("[DONE]"));
            out.extend(b"0\r\n\r\n");
            let _ = socket.write_all(&out).await;
            let _ = socket.shutdown().await;
        }
        Answer::Status(status, body) => {
            let body = body.to_string();
            let head = format!(
                "HTTP/1.1 {status} X\r\ncontent-type: application/json\r\n\
                 content-length: {}\r\nconnection: close\r\n\r\n",
                body.len()
            );
            let _ = socket.write_all(head.as_bytes()).await;
            let _ = socket.write_all(body.as_bytes()).await;
            let _ = socket.shutdown().await;
        }
        Answer::Silent => {
            let _ = socket.write_all(STREAM_HEAD).await;
            let _ = socket.flush().await;
            tokio::time::sleep(Duration::from_secs(60)).await;
        }
    }
}
