//! Embeddings over the OpenAI wire format (`POST {base}/embeddings`), against a loopback
//! server: batches of at most 64 texts, vectors back in input order whatever order the server
//! answers in, retries on 429/5xx, and clear errors for refusals and malformed answers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::time::Duration;

use ars_models::ModelError;
use serde_json::{Value, json};
use support::{MockServer, fast_options, status};

/// An answer with one 2-dimensional vector per index, listed in reverse order.
fn answer(indices: std::ops::Range<usize>) -> Value {
    let data: Vec<Value> = indices
        .rev()
        .map(|i| json!({"object": "embedding", "index": i - i / 64 * 64, "embedding": [i as f32, 1.0]}))
        .collect();
    json!({"object": "list", "data": data, "model": "m", "usage": {"prompt_tokens": 1, "total_tokens": 1}})
}

#[tokio::test]
async fn texts_go_in_batches_of_64_and_come_back_in_their_order() {
    let server = MockServer::start(vec![
        status(200, answer(0..64)),
        status(200, answer(64..70)),
    ])
    .await;
    let provider = server.provider(Some("sk-test"), fast_options());
    let texts: Vec<String> = (0..70).map(|i| format!("text {i}")).collect();
    let vectors = provider
        .embed("text-embedding-3-small", &texts, Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(vectors.len(), 70);
    for (i, v) in vectors.iter().enumerate() {
        assert_eq!(v, &vec![i as f32, 1.0]);
    }
    let received = server.received();
    assert_eq!(received.len(), 2);
    assert_eq!(received[0].body["model"], "text-embedding-3-small");
    assert_eq!(received[0].body["input"].as_array().unwrap().len(), 64);
    assert_eq!(received[1].body["input"][5], "text 69");
    assert_eq!(received[0].headers["authorization"], "Bearer sk-test");
}

#[tokio::test]
async fn a_busy_server_is_asked_again() {
    let server = MockServer::start(vec![
        status(429, json!({"error": {"message": "slow down"}})),
        status(200, answer(0..2)),
    ])
    .await;
    let provider = server.provider(None, fast_options());
    let vectors = provider
        .embed("m", &["a".into(), "b".into()], Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(vectors.len(), 2);
    assert_eq!(server.received().len(), 2);
}

#[tokio::test]
async fn refusals_and_malformed_answers_are_clear_errors() {
    let server = MockServer::start(vec![status(
        404,
        json!({"error": {"message": "The model `nope` does not exist", "code": "model_not_found"}}),
    )])
    .await;
    let error = server
        .provider(None, fast_options())
        .embed("nope", &["a".into()], Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(
        matches!(error, ModelError::UnknownModel { .. }),
        "{error:?}"
    );

    let server = MockServer::start(vec![status(200, json!({"nothing": true}))]).await;
    let error = server
        .provider(None, fast_options())
        .embed("m", &["a".into()], Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("not an embeddings list"),
        "{error}"
    );

    let server = MockServer::start(vec![status(200, answer(0..1))]).await;
    let error = server
        .provider(None, fast_options())
        .embed("m", &["a".into(), "b".into()], Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(
        error.to_string().contains("1 embeddings for 2 texts"),
        "{error}"
    );
}
