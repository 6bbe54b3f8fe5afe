#!/usr/bin/env bash
# The test suite against the lowest versions pyproject.toml allows, in its own .venv-min/ (about 10 min to set up).
# Every run-time requirement is pinned to its floor (scripts/min_constraints.py), except:
#   torch     2.13.0, as everywhere (PyPI's older torch wheels for Linux are CUDA builds of several GB);
#   moviepy   not installed: every moviepy 2 needs numpy 1.25, so the video extra's tests skip here (its floor
#             is checked by its own requirement on install in the main .venv).
# and two packages the floors need older than pip would pick (constraints of those old releases, not of ours):
#   pyarrow<18  Ray's data libraries at numpy 1.24 (a newer pyarrow refuses to import: "requires NumPy 2.0");
#   ipython<9   matplotlib 3.7's notebook backend imports IPython's backend2gui, gone in IPython 9.
# Arguments go to pytest (default: the whole suite on 2 workers).  Not part of CI: run it when a floor changes.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv-min/bin/python ]; then
  "$PY" -m venv .venv-min
fi
constraints=.venv-min/constraints.txt
.venv-min/bin/python scripts/min_constraints.py --except torch --except moviepy > "$constraints"
printf 'pyarrow<18\nipython<9\n' >> "$constraints"
.venv-min/bin/python -m pip install -q --upgrade pip
.venv-min/bin/python -m pip install -q "torch==${TORCH_VERSION:-2.13.0}" ${TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"}
.venv-min/bin/python -m pip install -q -c "$constraints" \
  -e ".[train,plot,multiplayer,render,human,play,distributed,bounds,fast,test]"
echo "installed at the floors:" && .venv-min/bin/python -m pip list 2>/dev/null \
  | grep -iE "^($(cut -d'=' -f1 "$constraints" | cut -d'<' -f1 | sed 's/-/[-_]/g' | paste -sd'|')|torch) " \
  | tr -s ' ' | paste -sd',' -
export POKERSQUARES_TINY=1
# the one docs example that records a video (docs/playing.md) needs moviepy, not installed here
if [ "$#" -eq 0 ]; then set -- -n 2 tests --deselect "tests/test_docs.py::test_python_examples_run[playing.md]"; fi
exec .venv-min/bin/python -m pytest -q -p no:cacheprovider "$@"
