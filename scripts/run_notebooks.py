"""Run the notebooks top to bottom at their full budgets and store their outputs, so they read on GitHub as run.

    .venv/bin/python scripts/run_notebooks.py                      # all of notebooks/*.ipynb
    .venv/bin/python scripts/run_notebooks.py 01_quickstart.ipynb  # one

Each notebook runs in a fresh kernel started in ``notebooks/`` (as Jupyter starts it), without
``POKERSQUARES_TINY`` (the tests run them tiny, and tiny numbers would mislead a reader).  Progress bars are stored as
a terminal shows them at the end: consecutive stream outputs are joined and every carriage-return rewrite of a line
keeps only its last state.  Nothing else in the outputs is changed.  A notebook that raises is not written and the
script exits 1.  ``tests/test_notebooks.py`` checks what is stored (run in order, no errors, figures, no tiny run).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
NOTEBOOKS = ROOT / "notebooks"


def settle(text: str) -> str:
    """``text`` as a terminal leaves it: in each line only what follows its last carriage return."""
    lines = []
    for line in text.split("\n"):
        parts = [p for p in line.split("\r") if p]
        lines.append(parts[-1] if parts else "")
    return "\n".join(lines)


def collapse_streams(book) -> None:
    """Join consecutive stream outputs of one cell with the same name and settle their carriage returns."""
    for cell in book.cells:
        if cell.cell_type != "code":
            continue
        merged = []
        for out in cell.outputs:
            if out.output_type == "stream" and merged and merged[-1].output_type == "stream" \
                    and merged[-1].name == out.name:
                merged[-1].text += out.text
            else:
                merged.append(out)
        for out in merged:
            if out.output_type == "stream":
                out.text = settle(out.text)
        cell.outputs = merged


def run(path: Path, timeout: int) -> float:
    import nbclient
    import nbformat

    start = time.perf_counter()
    book = nbformat.read(path, as_version=4)
    client = nbclient.NotebookClient(book, timeout=timeout, kernel_name="python3",
                                     resources={"metadata": {"path": str(NOTEBOOKS)}})
    client.execute()  # raises CellExecutionError naming the cell; the stored notebook is then left as it was
    collapse_streams(book)
    nbformat.write(book, path)
    return time.perf_counter() - start


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("names", nargs="*", help="notebook file names in notebooks/ (default: all)")
    parser.add_argument("--timeout", type=int, default=3600, help="seconds a cell may run (default 3600)")
    args = parser.parse_args(argv)
    paths = [NOTEBOOKS / n for n in args.names] or sorted(NOTEBOOKS.glob("*.ipynb"))
    missing = [str(p) for p in paths if not p.is_file()]
    if missing:
        parser.error(f"no such notebook: {', '.join(missing)}")
    os.environ.pop("POKERSQUARES_TINY", None)  # the full budgets
    os.environ.pop("MPLBACKEND", None)  # the kernel's inline backend, so figures are stored
    for path in paths:
        try:
            seconds = run(path, args.timeout)
        except Exception as exc:  # noqa: BLE001 -- one line, the notebook left unchanged
            print(f"{path.name}: {type(exc).__name__}: {str(exc).strip().splitlines()[-1] if str(exc).strip() else ''}",
                  file=sys.stderr)
            return 1
        print(f"{path.name}: run and stored in {seconds:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
