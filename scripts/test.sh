#!/usr/bin/env bash
# Set up a virtual environment (idempotent) and run every check: lint, format, types, tests.
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k escape`.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q -e '.[dev]'
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
.venv/bin/python -m pytest "$@"
