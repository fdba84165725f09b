#!/usr/bin/env bash
# Idempotent set-up of everything rfqsim needs: a virtualenv with the pinned Python packages and
# the pinned npm tools (Anvil, solc). Each step is skipped when its inputs have not changed, so a
# re-run with everything installed takes well under a second.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON="${PYTHON:-python3}"
STAMP_DIR=.venv/.rfqsim-stamps

hash_of() { cat "$@" | sha256sum | cut -d' ' -f1; }

# A long step says what it does, how long it usually takes, and shows progress: on a terminal one
# line that updates with the package being fetched; otherwise (CI logs) pip's own lines.
show_progress() {
  if [ -t 2 ]; then
    local line count=0
    while IFS= read -r line; do
      case "$line" in
        Collecting*|Downloading*|Building*|Installing*|Successfully*)
          count=$((count + 1))
          printf '\r\033[K  [%d] %.90s' "$count" "$line" >&2 ;;
      esac
      echo "$line" >> "$STAMP_DIR/pip.log"
    done
    printf '\r\033[K' >&2
  else
    tee -a "$STAMP_DIR/pip.log" | grep -E '^(Collecting|Successfully)' >&2 || true
  fi
}

if [ ! -x .venv/bin/python ]; then
  echo "bootstrap: creating .venv with $($PYTHON --version)" >&2
  "$PYTHON" -m venv .venv
fi
mkdir -p "$STAMP_DIR"

py_hash=$(hash_of pyproject.toml)
if [ "$(cat "$STAMP_DIR/python" 2>/dev/null)" != "$py_hash" ]; then
  echo "bootstrap: installing the pinned Python packages into .venv (the first time takes about" \
    "a minute; later runs skip this until pyproject.toml changes; log: $STAMP_DIR/pip.log)" >&2
  started=$SECONDS
  : > "$STAMP_DIR/pip.log"
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip >/dev/null
  if ! .venv/bin/python -m pip install --disable-pip-version-check --progress-bar off \
      -e '.[dev]' 2>&1 | show_progress; then
    echo "bootstrap: pip failed; the last lines of $STAMP_DIR/pip.log:" >&2
    tail -n 20 "$STAMP_DIR/pip.log" >&2
    exit 1
  fi
  echo "$py_hash" > "$STAMP_DIR/python"
  echo "bootstrap: Python packages installed in $((SECONDS - started)) s" >&2
fi

npm_hash=$(hash_of package.json package-lock.json)
if [ "$(cat "$STAMP_DIR/npm" 2>/dev/null)" != "$npm_hash" ] || [ ! -d node_modules/@foundry-rs ]; then
  echo "bootstrap: installing Anvil, solc and viem from the npm registry (about 10 s)" >&2
  # `npm ci`: installs exactly what package-lock.json records and never rewrites it, so a fresh
  # clone stays clean. The lock lists every platform's optional Anvil package (npm 11 writes
  # them all), so the same lock installs on Linux, macOS and Windows, x64 and arm64.
  npm ci --no-audit --no-fund --loglevel=error
  echo "$npm_hash" > "$STAMP_DIR/npm"
fi
