#!/usr/bin/env bash
# Installs the official Standard Webhooks libraries the webhook receivers
# (receiver.py, receiver.js) verify with, pinned, under $1 (default
# build/e2e-deps at the repository root): a Python venv and node_modules.
# Nothing here is committed. Needs python3 (with venv) and node/npm.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dest="${1:-$here/../../build/e2e-deps}"
mkdir -p "$dest"
dest="$(cd "$dest" && pwd)"

PY_STANDARDWEBHOOKS=1.1.0
NPM_STANDARDWEBHOOKS=1.1.1

if command -v python3 >/dev/null; then
  if [ ! -x "$dest/venv/bin/python" ]; then
    python3 -m venv "$dest/venv"
  fi
  "$dest/venv/bin/pip" install --quiet --disable-pip-version-check "standardwebhooks==$PY_STANDARDWEBHOOKS"
fi
if command -v npm >/dev/null; then
  mkdir -p "$dest/node"
  [ -f "$dest/node/package.json" ] || echo '{"private": true}' > "$dest/node/package.json"
  npm install --silent --no-audit --no-fund --prefix "$dest/node" "standardwebhooks@$NPM_STANDARDWEBHOOKS"
fi
echo "e2e receiver deps in $dest"
