#!/usr/bin/env bash
# Create .venv (if needed) and install the package with every extra.
# torch==2.13.0 goes in first, so that no later requirement pulls a CUDA build of several GB.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.pokersquares-installed
# set up again when the requirements or the torch choice change (TORCH_VERSION / TORCH_INDEX_URL are not ignored later)
want=$( (cat pyproject.toml; echo "torch=${TORCH_VERSION:-2.13.0} index=${TORCH_INDEX_URL:-}") | sha256sum | cut -c1-16)
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/python -m pip install -q --upgrade pip
  # TORCH_INDEX_URL (e.g. https://download.pytorch.org/whl/cpu) picks where torch comes from: PyPI's Linux wheels
  # are CUDA builds; on the project's machines a CPU build of 2.13.0 lies on disk and pip takes it.
  .venv/bin/python -m pip install -q "torch==${TORCH_VERSION:-2.13.0}" ${TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"}
  .venv/bin/python -m pip install -q -e ".[all,test]"
  echo "$want" > "$stamp"
fi
