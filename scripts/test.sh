#!/usr/bin/env bash
# Set up, then run the whole test suite (notebooks included, with tiny budgets).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
export POKERSQUARES_TINY=1
exec .venv/bin/python -m pytest -q -p no:cacheprovider "$@"
