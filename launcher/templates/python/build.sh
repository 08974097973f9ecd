#!/usr/bin/env bash
# Builds build/plugin.wasm from app.py with componentize-py, pinned in
# requirements.lock and installed into .venv on first use (set
# COMPONENTIZE_PY to use an installed componentize-py instead).
set -euo pipefail
cd "$(dirname "$0")"
componentize="${COMPONENTIZE_PY:-}"
if [ -z "$componentize" ]; then
  if [ ! -x .venv/bin/componentize-py ]; then
    python3 -m venv .venv
    .venv/bin/pip install --quiet --disable-pip-version-check --require-hashes -r requirements.lock
  fi
  componentize=.venv/bin/componentize-py
fi
mkdir -p build
"$componentize" -d wit -w lingxi-plugin componentize -p . app -o build/plugin.wasm
