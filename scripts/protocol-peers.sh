#!/usr/bin/env bash
# Installs the protocol clients the tests drive ARS with — PyPI `openai`, `langgraph-sdk`,
# `deepagents` and `a2a-sdk`, pinned with all their dependencies by
# scripts/protocol-peers/requirements.txt — into a Python venv in a cache folder outside the
# clone (rebuilt only when the requirements change or the venv is gone or broken), and prints the
# venv's folder: `"$(bash scripts/protocol-peers.sh)/bin/python"` is the interpreter.
#   ARS_PROTOCOL_PEERS_DIR  the cache folder (default ${XDG_CACHE_HOME:-~/.cache}/ars/protocol-peers)
#   PYTHON                  the interpreter to build the venv from (default python3, 3.10+)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)/protocol-peers"
dir="${ARS_PROTOCOL_PEERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ars/protocol-peers}"
venv="$dir/venv"
mkdir -p "$dir"
# Two runs at once (parallel tests) must not build the same venv together.
if command -v flock >/dev/null 2>&1; then
  exec 9>"$dir/.lock"
  flock 9
fi
if ! cmp -s "$here/requirements.txt" "$dir/requirements.txt" \
  || ! "$venv/bin/python" -c '' >/dev/null 2>&1; then
  # The copy is written only after a good install, so a failed one is retried next time.
  rm -rf "$venv" "$dir/requirements.txt"
  {
    "${PYTHON:-python3}" -m venv "$venv"
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
      -r "$here/requirements.txt"
  } >&2
  cp "$here/requirements.txt" "$dir/requirements.txt"
fi
echo "$venv"
