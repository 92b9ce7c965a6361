#!/usr/bin/env bash
# Set up a virtual environment (once: a rerun with pyproject.toml unchanged skips pip) and run the
# main job on embedded defaults: the classical baselines of both environments through
# `maze-envs bench` (journaled, verified, tables, plots, index.html and viewer pages in out/).
# Safe to run again: it starts over its own earlier run in out/ (saying what it deletes) and
# refuses, with exit status 2, a folder holding any other run (give --out DIR, or --fresh to
# delete that run). Extra arguments go to `maze-envs bench`, e.g.
# `bash scripts/demo.sh --out /tmp/run`.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/venv.sh
install_once render,bench
.venv/bin/maze-envs bench "$@"
