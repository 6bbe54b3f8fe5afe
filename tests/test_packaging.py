"""A built wheel holds every file of the two packages: data files (tuned tables, card images, sweep configs) too."""

from __future__ import annotations

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tracked(*folders: str) -> list[str]:
    if shutil.which("git") is None or not (ROOT / ".git").exists():
        pytest.skip("needs a git checkout to know the tracked files")
    out = subprocess.run(["git", "ls-files", *folders], cwd=ROOT, capture_output=True, text=True, check=True)
    return [name for name in out.stdout.splitlines() if (ROOT / name).is_file()]


def test_the_wheel_holds_every_tracked_file_of_the_packages(tmp_path):
    tracked = _tracked("pokersquares_env", "agents")
    assert any(not name.endswith(".py") for name in tracked)  # there are data files to check
    source = tmp_path / "source"  # the tracked files only, as in a fresh clone: no build/ or egg-info to reuse
    for name in [*tracked, "pyproject.toml", "README.md"]:
        (source / name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(ROOT / name, source / name)
    build = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "--no-build-isolation", "-q",
         "-w", str(tmp_path / "dist")],
        capture_output=True, text=True, timeout=300,
    )
    assert build.returncode == 0, build.stderr[-2000:]
    (wheel,) = (tmp_path / "dist").glob("pokersquares_env-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    missing = [name for name in tracked if name not in names]
    assert not missing, f"tracked files left out of the wheel (add them to package-data): {missing}"
    assert "pokersquares_env/py.typed" in names


def test_the_code_passes_the_linter():
    """``ruff check`` with the rules in pyproject.toml (pyflakes, pycodestyle, import order) finds nothing: undefined
    names, unused imports and the like fail here rather than in a user's hands.  ruff is in the ``test`` extra."""
    pytest.importorskip("ruff", reason="ruff is in the test extra")
    done = subprocess.run([sys.executable, "-m", "ruff", "check", "--no-cache", "pokersquares_env", "agents", "tests",
                           "benchmarks"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr
