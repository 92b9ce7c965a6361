#!/usr/bin/env bash
# The scheduled check: install the NEWEST versions of every dependency pyproject.toml allows into
# a fresh virtual environment (.venv-newest) and run the whole test suite there, so a release
# that breaks us (a provider SDK dropping a setting, a model retired) is found on the day it
# ships, not by the next user. scripts/test.sh does the opposite pass (the lowest versions).
# Run it by hand or from a scheduler (cron, a CI schedule); extra arguments go to pytest.
# It prints what changed against .venv (the versions the last `scripts/test.sh` installed) and
# keeps the list it tested in .venv-newest/tested-versions.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
python3 -m venv --clear .venv-newest
.venv-newest/bin/python -m pip install -q --upgrade pip
.venv-newest/bin/python -m pip install -q --upgrade --upgrade-strategy eager -e '.[dev]'
.venv-newest/bin/python -m pip freeze --exclude-editable | sort > .venv-newest/tested-versions.txt
if [ -x .venv/bin/python ]; then
    echo "newer than .venv (left: .venv, right: .venv-newest):"
    diff <(.venv/bin/python -m pip freeze --exclude-editable | sort) \
        .venv-newest/tested-versions.txt | grep '^[<>]' || echo "  (the same versions)"
fi
.venv-newest/bin/python -m pytest -p no:cacheprovider "$@"
