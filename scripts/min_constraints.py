"""Print pip constraints that pin every run-time requirement of pyproject.toml to its lowest allowed version.

Used by ``scripts/test_min_versions.sh`` to check that the floors (``>=``) pyproject.toml declares really work.
Run-time requirements are the package's ``dependencies`` and the extras other than ``test``; the test tools
(pytest, hypothesis, ...) and the build system's are left to pip.  A package named twice takes the higher floor
(scipy: 1.9 in ``bounds``, 1.11 in ``test``, whose reference checks need the newer one).  ``--except NAME`` leaves a
package unpinned.

    python scripts/min_constraints.py [--pyproject FILE] [--except torch ...]
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

# a requirement string of pyproject.toml: "name>=1.2" or "name[extra]>=1.2" (upper bounds and markers are not used)
_REQUIREMENT = re.compile(r'"([A-Za-z0-9_.-]+)(?:\[[^\]]*\])?\s*>=\s*([0-9][0-9A-Za-z.]*)\s*"')


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", version))


def _key(name: str) -> str:
    return name.lower().replace("_", "-")


def floors(text: str) -> dict[str, str]:
    """``{name: lowest version}`` of every run-time ``"name>=X"`` requirement in the text of a pyproject.toml (one
    requirement list per line, as ours are written): the highest floor any line gives it, the ``test`` line
    included, for packages some other line (not the build system's ``requires``) names."""
    everything: dict[str, str] = {}
    runtime: set[str] = set()
    for line in text.splitlines():
        found = _REQUIREMENT.findall(line)
        setting = line.split("=", 1)[0].strip()
        for name, version in found:
            key = _key(name)
            if key not in everything or _version_key(version) > _version_key(everything[key]):
                everything[key] = version
            if setting not in ("test", "requires"):
                runtime.add(key)
    if not runtime:
        raise ValueError("no run-time 'name>=version' requirements found: expected the text of a pyproject.toml")
    return {name: everything[name] for name in runtime}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pyproject", default=str(Path(__file__).resolve().parents[1] / "pyproject.toml"))
    parser.add_argument("--except", dest="skip", action="append", default=[], metavar="NAME",
                        help="leave this package unpinned (repeatable)")
    args = parser.parse_args(argv)
    skip = {_key(name) for name in args.skip}
    for name, version in sorted(floors(Path(args.pyproject).read_text()).items()):
        if name not in skip:
            print(f"{name}=={version}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
