#!/usr/bin/env bash
# Set up a virtual environment (idempotent) and run every check: lint, format, types, tests, and
# the core tests once more against the lowest dependency versions pyproject.toml allows.
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k escape` (then the lowest-versions
# run is skipped).
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q -e '.[dev]'
.venv/bin/ruff check .
.venv/bin/ruff format --check .
.venv/bin/mypy
.venv/bin/python -m pytest "$@"
if [ "$#" -eq 0 ]; then
    python3 -m venv .venv-lowest
    .venv-lowest/bin/python -m pip install -q -c scripts/lowest-versions.txt \
        -e '.[render,server]' pytest hypothesis httpx
    .venv-lowest/bin/python -m pytest -q -p no:cacheprovider tests/escape tests/agimaze \
        tests/test_grid.py tests/test_cli.py
fi
