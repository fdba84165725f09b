#!/usr/bin/env bash
# Idempotent set-up of everything rfqsim needs: a virtualenv with the pinned Python packages and
# the pinned npm tools (Anvil, solc). Each step is skipped when its inputs have not changed, so a
# re-run with everything installed takes well under a second.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
STAMP_DIR=.venv/.rfqsim-stamps

hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

if [ ! -x .venv/bin/python ]; then
  echo "bootstrap: creating .venv with $($PYTHON --version)" >&2
  "$PYTHON" -m venv .venv
fi
mkdir -p "$STAMP_DIR"

py_hash=$(hash_of pyproject.toml)
if [ "$(cat "$STAMP_DIR/python" 2>/dev/null)" != "$py_hash" ]; then
  echo "bootstrap: installing Python packages" >&2
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip >/dev/null
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e '.[dev]'
  echo "$py_hash" > "$STAMP_DIR/python"
fi

npm_hash=$(hash_of package.json package-lock.json)
if [ "$(cat "$STAMP_DIR/npm" 2>/dev/null)" != "$npm_hash" ] || [ ! -d node_modules/@foundry-rs ]; then
  echo "bootstrap: installing Anvil and solc from the npm registry" >&2
  # `npm install`, not `npm ci`: the lock records only the platform packages npm resolved here
  # (anvil-linux-amd64), and `npm ci` refuses a lock without the other platforms' entries.
  npm install --no-audit --no-fund --loglevel=error
  echo "$npm_hash" > "$STAMP_DIR/npm"
fi
