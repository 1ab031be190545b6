#!/usr/bin/env bash
# Every check CI runs: formatting, lints, and all tests of the workspace.
# PostgreSQL suites run when ARS_TEST_DATABASE_URL is set (.ci/run sets it).
set -euo pipefail
cd "$(dirname "$0")/.."

cargo fmt --all --check
cargo clippy --workspace --all-targets --all-features -- -D warnings
cargo test --workspace --all-features
