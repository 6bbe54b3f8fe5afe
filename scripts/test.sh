#!/usr/bin/env bash
# Set up, then run the whole test suite (notebooks included, with tiny budgets).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export POKERSQUARES_TINY=1
export POKERSQUARES_NO_SKIP=1  # every extra is installed: a skipped test fails the run (tests/conftest.py)
# Two pytest-xdist worker processes (PYTEST_WORKERS to change; 0 runs in this process, as plain pytest does): on the
# project's 2-core machines the suite took 7 min 16 s on two against 12-14 min in one process (docs/testing.md).
exec .venv/bin/python -m pytest -q -p no:cacheprovider -n "${PYTEST_WORKERS:-2}" "$@"
