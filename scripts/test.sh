#!/usr/bin/env bash
# Every check CI runs: the web UI (install, type-check and build, unit tests), formatting,
# lints and all tests of the workspace, then the browser end-to-end tests against a real
# `ars serve`, then schemathesis fuzzing the API against its own OpenAPI document.
# PostgreSQL suites run when ARS_TEST_DATABASE_URL is set (.ci/run sets it); the MCP suites
# run against the peers scripts/mcp-peers.sh installs (ARS_TEST_MCP_PEERS, set here), the
# protocol adapters against the client libraries scripts/protocol-peers.sh installs
# (ARS_TEST_PROTOCOL_PEERS, set here).
set -euo pipefail
cd "$(dirname "$0")/.."

log() { printf '\n==> %s\n' "$*"; }

log "web UI: install, build, unit tests"
(cd web && npm ci --no-audit --no-fund && npm run build && npm test)

log "MCP peers: servers and a conformance client from the npm registry, into a cache folder"
ARS_TEST_MCP_PEERS="$(bash scripts/mcp-peers.sh)"
export ARS_TEST_MCP_PEERS

log "protocol clients: openai, langgraph-sdk, deepagents and a2a-sdk from PyPI, into a cache folder"
ARS_TEST_PROTOCOL_PEERS="$(bash scripts/protocol-peers.sh)"
export ARS_TEST_PROTOCOL_PEERS

log "cargo fmt, clippy, tests"
cargo fmt --all --check
cargo clippy --workspace --all-targets --all-features -- -D warnings
cargo test --workspace --all-features

log "browser end-to-end tests (target/debug/ars serving web/dist)"
cargo build -p ars
target_dir="${CARGO_TARGET_DIR:-target}"
case "$target_dir" in /*) ;; *) target_dir="$PWD/$target_dir" ;; esac
(cd web && ARS_BIN="$target_dir/debug/ars" npm run e2e)

log "API contract: schemathesis over the served OpenAPI document (bounded)"
ST_MAX_TIME="${ST_MAX_TIME:-120}" ARS_BIN="${CARGO_TARGET_DIR:-target}/debug/ars" bash scripts/schemathesis.sh
