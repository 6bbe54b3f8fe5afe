#!/usr/bin/env bash
# Set up, then run the whole test suite (notebooks included, with tiny budgets).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export POKERSQUARES_TINY=1
export POKERSQUARES_NO_SKIP=1  # every extra is installed: a skipped test fails the run (tests/conftest.py)
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
