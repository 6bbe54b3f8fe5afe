#!/usr/bin/env bash
# The main job: set up, then train a placement agent for a few minutes and evaluate it against baselines.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
exec .venv/bin/pokersquares demo "$@"
