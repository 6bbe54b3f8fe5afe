"""A built wheel holds every file of the two packages: data files (tuned tables, card images, sweep configs) too."""

from __future__ import annotations

import importlib.util
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


def _missing_build_requirements() -> str | None:
    """What pyproject.toml's build requirements lack in this environment (the wheel is built without isolation, so
    with what is installed here): setuptools 64 or newer, and ``bdist_wheel`` -- setuptools' own from 70.1, before
    that the ``wheel`` package's (the ``test`` extra installs both)."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        setuptools = tuple(int(part) for part in version("setuptools").split(".")[:2])
    except PackageNotFoundError:
        return "setuptools"
    if setuptools < (64,):
        return f"setuptools>=64 (installed: {version('setuptools')})"
    if setuptools < (70, 1) and importlib.util.find_spec("wheel") is None:
        return f"wheel (setuptools {version('setuptools')} has no bdist_wheel of its own)"
    return None


def test_the_wheel_holds_every_tracked_file_of_the_packages(tmp_path):
    missing = _missing_build_requirements()
    if missing:
        pytest.skip(f"building the wheel here needs {missing}: the test extra installs it (pip install -e '.[test]')")
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


def test_the_code_runs_on_the_oldest_python_it_claims():
    """pyproject.toml and the README promise Python 3.10+, while CI runs one newer Python.  vermin reads the code
    (annotations evaluated too) for every module, function and syntax newer than 3.10 -- ``tomllib``,
    ``typing.Self``, ``except*``, ``datetime.UTC`` -- and fails here instead of on a user's 3.10.  vermin is in the
    ``test`` extra."""
    pytest.importorskip("vermin", reason="vermin is in the test extra")
    requires = next(line for line in (ROOT / "pyproject.toml").read_text().splitlines()
                    if line.startswith("requires-python"))
    assert requires == 'requires-python = ">=3.10"'  # the version checked below
    done = subprocess.run([sys.executable, "-c", "import sys, vermin; sys.exit(vermin.main())", "--no-tips", "--violations", "-t=3.10-",
                           "--eval-annotations", "pokersquares_env", "agents", "tests", "benchmarks", "scripts"],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "Minimum required versions: 3.10" in done.stdout, done.stdout[-3000:]


def test_setup_installs_again_when_the_torch_choice_changes(tmp_path):
    """``scripts/setup.sh`` skips the installs while its stamp matches; the stamp covers ``TORCH_VERSION`` and
    ``TORCH_INDEX_URL`` as well as pyproject.toml, so setting them later is not silently ignored (it was)."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "setup.sh", tmp_path / "scripts" / "setup.sh")
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    (tmp_path / ".venv" / "bin").mkdir(parents=True)
    log = tmp_path / "calls.log"
    fake = tmp_path / ".venv" / "bin" / "python"  # records each pip call instead of installing anything
    fake.write_text(f'#!/bin/sh\necho "$*" >> {log}\n')
    fake.chmod(0o755)

    def setup(**env) -> list[str]:
        log.write_text("")
        subprocess.run(["bash", "scripts/setup.sh"], cwd=tmp_path, check=True,
                       env={"PATH": "/usr/bin:/bin", **env})
        return log.read_text().splitlines()

    first = setup()
    assert any("torch==2.13.0" in call for call in first) and any('-e .[all,test]' in call for call in first)
    assert setup() == []  # stamp matches: nothing installed
    again = setup(TORCH_VERSION="2.6.0")
    assert any("torch==2.6.0" in call for call in again)
    assert setup(TORCH_VERSION="2.6.0") == []
    assert any("--index-url https://example.invalid/cpu" in call
               for call in setup(TORCH_VERSION="2.6.0", TORCH_INDEX_URL="https://example.invalid/cpu"))


def test_a_subprocess_started_elsewhere_imports_this_checkout(tmp_path):
    """Tests start the CLI, scripts and notebook kernels in temporary folders; there they imported the venv's install,
    which in a second checkout sharing one venv is the other checkout's code, so its tests passed on code they did not
    test (tests/conftest.py now puts this checkout first on PYTHONPATH)."""
    code = "import agents, pokersquares_env; print(pokersquares_env.__file__); print(agents.__file__)"
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, check=True)
    for line in out.stdout.splitlines():
        assert Path(line).resolve().is_relative_to(ROOT.resolve()), (line, ROOT)


def test_the_floor_constraints_pin_every_run_time_requirement_at_its_lowest_version():
    """scripts/min_constraints.py feeds scripts/test_min_versions.sh: every run-time requirement of pyproject.toml at
    its floor, the higher floor where two lines name a package, test tools and the build system left to pip."""
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import min_constraints
    finally:
        sys.path.remove(str(ROOT / "scripts"))
    got = min_constraints.floors((ROOT / "pyproject.toml").read_text())
    assert got["gymnasium"] == "1.1" and got["numpy"] == "1.24"  # 1.0 lacked gymnasium.vector.AutoresetMode
    assert got["stable-baselines3"] == got["sb3-contrib"] == "2.6"  # the first to accept gymnasium 1.1
    # ray 2.41 is the first with tune.RunConfig and tune.report(dict), which agents/sweep.py uses
    assert got["scipy"] == "1.11" and got["ray"] == "2.41"  # the test extra's floor wins; an extra's [tune] dropped
    assert not {"pytest", "hypothesis", "setuptools", "ruff"} & set(got)
    text = '[project]\ndependencies = ["a_b>=1.2", "c>=0.9"]\n[x]\nfast = ["c>=0.10"]\ntest = ["c>=2", "d>=1"]\n'
    assert min_constraints.floors(text) == {"a-b": "1.2", "c": "2"}  # 0.10 > 0.9 as versions, not as text
    with pytest.raises(ValueError, match="no run-time 'name>=version' requirements found"):
        min_constraints.floors("[project]\nname = 'x'\n")
    done = subprocess.run([sys.executable, str(ROOT / "scripts" / "min_constraints.py"), "--except", "torch",
                           "--except", "MoviePy"], capture_output=True, text=True, check=True)
    lines = done.stdout.splitlines()
    assert lines == sorted(lines) and "numpy==1.24" in lines and "gymnasium==1.1" in lines
    assert not any(line.startswith(("torch==", "moviepy==")) for line in lines)


#: The pure game core, each with the library modules it may import (its own layer and below): README, "Architecture"
CORE_IMPORTS = {"_files": set(), "cards": set(), "scoring": {"_files", "cards"},
                "core": {"_files", "cards", "scoring"}}


@pytest.mark.parametrize("module", sorted(CORE_IMPORTS))
def test_the_core_imports_neither_gymnasium_nor_anything_above_it(module):
    """As the README says, also for imports inside functions: before, core.py read the record format from records.py
    (which builds on core) inside the check of a rules file that is a game record."""
    import ast

    tree = ast.parse((ROOT / "pokersquares_env" / f"{module}.py").read_text(encoding="utf-8"))
    imported = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            imported |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            imported.add(node.module)
    library = {name.split(".")[1] for name in imported if name.startswith("pokersquares_env.")}
    assert library <= CORE_IMPORTS[module], (module, library - CORE_IMPORTS[module])
    assert not {name for name in imported if name.split(".")[0] in ("gymnasium", "gym", "pettingzoo", "agents")}
