#!/usr/bin/env bash
# The test suite on another Python than the one CI runs (3.11), in its own .venv-py<X.Y>/ (about a minute to set up):
#   PYTHON=python3.10 bash scripts/test_python.sh              # the oldest Python pyproject.toml allows
#   PYTHON=python3.13 bash scripts/test_python.sh tests/test_env.py -x
# Every extra is installed at the newest versions pip finds for that Python, except the train extra's torch,
# stable-baselines3 and sb3-contrib: the torch this project installs is the CPU build of torch==2.13.0, which this
# machine holds for Python 3.11 only, and PyPI's Linux wheels of torch are CUDA builds of several GB.  So the tests
# that train or load a network skip (pytest's -ra lists them), unless TORCH_INDEX_URL names an index with CPU builds
# for that Python (e.g. https://download.pytorch.org/whl/cpu), when torch==${TORCH_VERSION:-2.13.0} and the whole
# train extra are installed too and nothing may skip.
# EXTRAS=test (a comma-separated list of extras) installs those extras only, in .venv-py<X.Y>-<extras>/: with
# EXTRAS=test the suite runs on the core install (gymnasium and numpy) and every test of an extra must skip.
# Arguments go to pytest (default: the whole suite on 2 workers).  Not part of CI: run it when a Python changes.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:?"set PYTHON to the interpreter to test, e.g. PYTHON=python3.10"}
version=$("$PY" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
venv=.venv-py$version${EXTRAS:+-${EXTRAS//,/-}}
if [ ! -x "$venv/bin/python" ]; then
  "$PY" -m venv "$venv"
fi
"$venv/bin/python" -m pip install -q --upgrade pip
extras=${EXTRAS:-plot,multiplayer,render,human,video,play,distributed,bounds,fast,test}
if [ -n "${TORCH_INDEX_URL:-}" ] && [ -z "${EXTRAS:-}" ]; then
  "$venv/bin/python" -m pip install -q "torch==${TORCH_VERSION:-2.13.0}" --index-url "$TORCH_INDEX_URL"
  extras=train,$extras
  export POKERSQUARES_NO_SKIP=1  # every extra is installed: a skipped test fails the run (tests/conftest.py)
fi
"$venv/bin/python" -m pip install -q -e ".[$extras]"
echo "Python $("$venv/bin/python" -c 'import platform; print(platform.python_version())'):" \
  "$("$venv/bin/python" -m pip list 2>/dev/null | grep -iE '^(gymnasium|numpy|numba|ray|scipy|matplotlib|pettingzoo|pygame|pillow|moviepy|torch|stable.baselines3|sb3.contrib) ' \
  | tr -s ' ' | paste -sd',' -)"
export POKERSQUARES_TINY=1
if [ "$#" -eq 0 ]; then set -- -n 2 tests; fi
exec "$venv/bin/python" -m pytest -q -p no:cacheprovider "$@"
