#!/usr/bin/env bash
# The README's run command: build the web UI when it is missing or stale, then run the server
# (release build, which embeds web/dist). Arguments go to `ars serve`.
set -euo pipefail
cd "$(dirname "$0")/.."

# npm writes node_modules/.package-lock.json on every install: older than the lockfile means
# the dependencies changed since.
if [ ! -f web/node_modules/.package-lock.json ] || [ web/package-lock.json -nt web/node_modules/.package-lock.json ]; then
  echo "==> installing the web UI's dependencies (npm ci)"
  (cd web && npm ci --no-audit --no-fund)
fi

# Rebuild when any input of the build is newer than the last build's index.html.
inputs=(web/src web/public web/index.html web/package.json web/package-lock.json web/vite.config.ts web/tsconfig*.json)
existing=()
for input in "${inputs[@]}"; do
  [ -e "$input" ] && existing+=("$input")
done
if [ ! -f web/dist/index.html ] || [ -n "$(find "${existing[@]}" -newer web/dist/index.html -print -quit)" ]; then
  echo "==> building the web UI (npm run build)"
  (cd web && npm run build)
fi

exec cargo run --release -p ars -- serve "$@"
