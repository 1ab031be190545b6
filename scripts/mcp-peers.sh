#!/usr/bin/env bash
# Installs the MCP peers the tests talk to — servers and a conformance client from the npm
# registry, pinned by scripts/mcp-peers/package-lock.json — into a cache folder outside the
# clone (reinstalled only when the lock changes), and prints that folder.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)/mcp-peers"
dir="${ARS_MCP_PEERS_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/ars/mcp-peers}"
mkdir -p "$dir"
if ! cmp -s "$here/package-lock.json" "$dir/package-lock.json" || [ ! -d "$dir/node_modules" ]; then
  rm -rf "$dir/node_modules"
  cp "$here/package.json" "$here/package-lock.json" "$dir/"
  (cd "$dir" && npm ci --no-audit --no-fund --loglevel=error) >&2
fi
echo "$dir"
