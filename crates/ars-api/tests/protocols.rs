//! The protocol adapters over real HTTP on loopback: the OpenAI-compatible API (`/v1`), the
//! LangGraph / Agent Protocol API (`/langgraph`) and A2A (`/a2a/{agent}`), each answering its
//! own wire shapes and errors over the same agents, threads, runs and permissions as `/api`.
//! The official client libraries drive them in `protocol_clients.rs`.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod common;

#[path = "protocols/openai.rs"]
mod openai;

#[path = "protocols/langgraph.rs"]
mod langgraph;

#[path = "protocols/a2a.rs"]
mod a2a;
