#!/usr/bin/env bash
# Set up a virtual environment (idempotent) and run the main job on embedded defaults:
# a few Maze Escape games with a built-in policy, journaled, verified and rendered.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv .venv
.venv/bin/python -m pip install -q -e '.[render]'
.venv/bin/maze-envs demo "$@"
