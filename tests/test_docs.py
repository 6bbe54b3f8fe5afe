"""The README and docs/ work as written: every Python example runs, every documented command line parses.

* Each file's ```python blocks run in order in one namespace, from an empty
  working folder.  A block may be left out only by an HTML comment on the line
  before its fence, ``<!-- docs-test: skip (reason) -->``, and the reason must
  be given (examples that train for minutes or need a Ray cluster).
* Every ``pokersquares ...`` and ``python benchmarks/....py ...`` command in
  the bash blocks and inline code spans is parsed by the real argument parser
  (nothing runs: parsing stops the command), and every ``--agent`` spec in it
  is checked against the agent registry.  Synopses (``a|b``, ``[...]``,
  ``<folder>``, ``...``, or placeholders such as ``S`` that do not parse) and
  bare mentions of a command are not commands and are left out.
* Every relative link and image (``[text](path#anchor)``) points to a file of
  the repository and, with an anchor, to a heading of that file as GitHub
  names it.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import io
import re
import shlex
from dataclasses import dataclass
from pathlib import Path

import pytest

from agents.registry import check_spec
from helpers import missing_extra, skip_for_a_missing_extra

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
SKIP = re.compile(r"^<!-- docs-test: skip \((.+)\) -->$")


@dataclass
class Block:
    lang: str
    line: int  # of the opening fence
    code: str
    skip: str | None  # the reason given, or None


def blocks(path: Path) -> list[Block]:
    """The fenced code blocks of a Markdown file."""
    out: list[Block] = []
    lang = None
    start, body, skip, previous = 0, [], None, ""
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            if lang is None:
                lang, start, body = line[3:].strip() or "text", number, []
                match = SKIP.match(previous.strip())
                skip = match.group(1) if match else None
            else:
                out.append(Block(lang, start, "\n".join(body) + "\n", skip))
                lang = None
        elif lang is not None:
            body.append(line)
        previous = line
    assert lang is None, f"{path.name}: the block opened at line {start} is never closed"
    return out


PYTHON_DOCS = [path for path in DOCS if any(b.lang == "python" and b.skip is None for b in blocks(path))]


@pytest.fixture(scope="module")
def table_cache(tmp_path_factory):
    """The suite's table cache, so tables an example trains (full size, about 25 s each) are trained once."""
    return tmp_path_factory.getbasetemp() / "pscache"


@pytest.mark.parametrize("path", PYTHON_DOCS, ids=[p.name for p in PYTHON_DOCS])
def test_python_examples_run(path, tmp_path, monkeypatch, table_cache):
    import agents.registry as registry

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))  # agents an example registers stay there
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("POKERSQUARES_CACHE", str(table_cache))
    namespace: dict = {"__name__": "__docs__"}
    for block in blocks(path):
        if block.lang != "python":
            continue
        if block.skip is not None:
            assert len(block.skip) > 10, f"{path.name}:{block.line}: a skipped example must say why"
            continue
        code = compile(block.code, f"{path.relative_to(ROOT)}:{block.line}", "exec")
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                exec(code, namespace)  # noqa: S102 - the documented example itself
        except ImportError as exc:  # MissingExtraError too: it names the first missing module
            skip_for_a_missing_extra(exc, f"{path.name}:{block.line}")
            raise


def test_an_example_skips_only_for_an_extra_that_is_really_missing(monkeypatch):
    """Without the train extra the training examples skip (CI, with every extra, fails on any skip); any other import
    error is the example's own and fails it."""
    import sys

    from agents.config import MissingExtraError

    monkeypatch.setitem(sys.modules, "torch", None)  # an install without the train extra
    with pytest.raises(ImportError) as hidden:
        import torch  # noqa: F401
    with pytest.raises(pytest.skip.Exception, match=r"training.md:9 needs torch, of the train extra"):
        skip_for_a_missing_extra(hidden.value, "training.md:9")
    gone = MissingExtraError('fast-ppo needs torch: pip install "pokersquares_env[train]"')
    gone.name = "torch"
    with pytest.raises(pytest.skip.Exception):
        skip_for_a_missing_extra(gone, "training.md:9")
    pytest.importorskip("PIL")
    for name in ("pokersquares_env.nothing", "PIL", None):  # the library's own module; an installed extra; no name
        assert skip_for_a_missing_extra(ModuleNotFoundError("no", name=name), "x.md:1") is None


def test_the_skip_marker_is_read(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("text\n<!-- docs-test: skip (trains for an hour) -->\n```python\nx = 1\n```\n\n```python\ny = 2\n```\n")
    found = blocks(doc)
    assert [(b.lang, b.line, b.skip) for b in found] == [("python", 3, "trains for an hour"), ("python", 7, None)]
    assert found[1].code == "y = 2\n"


# ----------------------------------------------------------------------------------------------------- commands

COMMAND = re.compile(r"(pokersquares|python (?:benchmarks|agents|scripts)/[\w/]+\.py)((?: (?!&&|\|\||;|#)\S+)*)")
PLACEHOLDER = re.compile(r"^[A-Z][A-Z_0-9]*$")


def commands(path: Path) -> list[str]:
    """The command lines of a Markdown file: bash blocks (variables set in the block expanded) and inline code."""
    text = path.read_text(encoding="utf-8")
    lines: list[str] = []
    for block in blocks(path):
        if block.lang not in ("bash", "sh"):
            continue
        variables: dict[str, str] = {}
        for line in re.sub(r"\\\n\s*", " ", block.code).splitlines():
            assignment = re.match(r'^(\w+)="([^"]*)"\s*$', line.strip())
            if assignment:
                variables[assignment.group(1)] = assignment.group(2)
                continue
            for name, value in variables.items():
                line = line.replace(f"${name}", value)
            lines.append(" ".join(line.split(" #")[0].split()))
    prose = re.sub(r"```.*?```", "", text, flags=re.S)
    lines += [" ".join(span.split()) for span in re.findall(r"`([^`]+)`", prose)]
    return [m.group(0).strip() for line in lines for m in COMMAND.finditer(line)]


class _Parsed(Exception):
    pass


def _load_script(name: str):
    spec = importlib.util.spec_from_file_location(f"docs_{Path(name).stem}", ROOT / name)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.main


def parse_command(line: str, scripts: dict) -> tuple[str, argparse.Namespace | str]:
    """``("ok", namespace)``, ``("skip", why)`` or ``("error", argparse's message)`` for one documented command."""
    argv = shlex.split(line)
    if any(t == "..." or any(c in t for c in "|[]<>") for t in argv):
        return "skip", "synopsis"
    if argv[0] == "pokersquares":
        from pokersquares_env.cli import main
        argv = argv[1:]
    else:
        if argv[1] not in scripts:
            try:
                scripts[argv[1]] = _load_script(argv[1])
            except ImportError as exc:  # a script that imports an extra at its top (numba), on an install without it
                if missing_extra(exc) is None:
                    raise
                return "skip", f"{argv[1]} needs {missing_extra(exc)}"
        main = scripts[argv[1]]
        argv = argv[2:]
    err = io.StringIO()
    original = argparse.ArgumentParser.parse_args

    def parse_only(self, args=None, namespace=None):
        raise _Parsed(original(self, args, namespace))

    argparse.ArgumentParser.parse_args = parse_only
    try:
        with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
            main(argv)
    except _Parsed as parsed:
        return "ok", parsed.args[0]
    except SystemExit as exc:
        message = (err.getvalue().strip().splitlines() or [""])[-1]
        if exc.code == 0:
            return "skip", "help"
        if any(PLACEHOLDER.match(t) for t in argv):
            return "skip", "placeholder"
        if "arguments are required" in message and not any(t.startswith("-") for t in argv):
            return "skip", "a mention of the command"
        return "error", message
    finally:
        argparse.ArgumentParser.parse_args = original
    return "error", "the command ran past its argument parsing"


def _documented_module(name: str, marker: str):
    """The docs' example module ``name`` (the python block of docs/agents.md holding ``marker``), executed: what a
    documented ``--import name`` imports."""
    import types

    code = next(b.code for b in blocks(ROOT / "docs" / "agents.md") if b.lang == "python" and marker in b.code)
    module = types.ModuleType(name)
    exec(compile(code, f"<docs/agents.md: {name}>", "exec"), module.__dict__)
    return module


def test_documented_commands_parse_and_name_real_agents(monkeypatch):
    import sys

    import agents.registry as registry

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    # what `--import myagents` is shown importing (it registers "corner")
    monkeypatch.setitem(sys.modules, "myagents", _documented_module("myagents", 'register_agent("corner"'))
    scripts: dict = {}
    bad: list[str] = []
    parsed = specs = 0
    for path in DOCS:
        for line in commands(path):
            status, result = parse_command(line, scripts)
            if status == "error":
                bad.append(f"{path.name}: {line}\n    {result}")
                continue
            if status == "skip":
                continue
            parsed += 1
            for module in getattr(result, "imports", None) or []:
                if module not in sys.modules:
                    bad.append(f"{path.name}: {line}\n    --import {module}: no documented module of that name")
            for spec in getattr(result, "agent", None) or []:
                if isinstance(spec, str) and not PLACEHOLDER.match(spec):
                    try:
                        check_spec(spec)
                        specs += 1
                    except (ValueError, ImportError) as exc:
                        bad.append(f"{path.name}: {line}\n    {exc}")
    assert not bad, "documented commands that do not parse:\n" + "\n".join(bad)
    assert parsed >= 150 and specs >= 100, (parsed, specs)  # the scan really found the docs' commands


def test_the_command_check_catches_a_wrong_flag_and_a_wrong_agent():
    scripts: dict = {}
    assert parse_command("pokersquares evaluate --agent greedy --games 10", scripts)[0] == "ok"
    status, message = parse_command("pokersquares evaluate --agent greedy --gamez 10", scripts)
    assert status == "error" and "--gamez" in message
    status, message = parse_command("python benchmarks/agents.py --agent greedy --games ten", scripts)
    assert status == "error" and "'ten'" in message
    assert parse_command("pokersquares soliter show|solve", scripts) == ("skip", "synopsis")
    assert parse_command("pokersquares evaluate", scripts) == ("skip", "a mention of the command")
    _, namespace = parse_command("pokersquares evaluate --agent mc:rolouts=64", scripts)
    with pytest.raises(ValueError, match="rolouts"):
        check_spec(namespace.agent[0])


LINK = re.compile(r"!?\[[^\]]*\]\(([^()\s]+)\)")


def slug(heading: str) -> str:
    """GitHub's anchor for a Markdown heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.strip().lower())
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """The anchors of a Markdown file's headings (outside code blocks), repeats numbered as GitHub numbers them."""
    seen: dict[str, int] = {}
    out: set[str] = set()
    fenced = False
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("```"):
            fenced = not fenced
        elif not fenced and (match := re.match(r"#{1,6} (.+)", line)):
            base = slug(match.group(1))
            count = seen.get(base, 0)
            seen[base] = count + 1
            out.add(base if count == 0 else f"{base}-{count}")
    return out


def broken_links(path: Path) -> list[str]:
    """The relative links of a Markdown file (outside code blocks) whose file or heading does not exist."""
    bad: list[str] = []
    fenced = False
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            fenced = not fenced
            continue
        if fenced:
            continue
        for target in LINK.findall(re.sub(r"`[^`]*`", "", line)):
            if re.match(r"[a-z]+:", target):
                continue  # http(s), mailto: not checked offline
            name, _, anchor = target.partition("#")
            file = (path.parent / name).resolve() if name else path
            if not file.exists():
                bad.append(f"{path.name}:{number}: {target} (no file {name})")
            elif anchor and file.suffix == ".md" and anchor not in anchors(file):
                bad.append(f"{path.name}:{number}: {target} (no heading #{anchor} in {file.name})")
    return bad


def test_relative_links_point_to_files_and_headings():
    bad = [entry for path in DOCS for entry in broken_links(path)]
    assert not bad, "broken links:\n" + "\n".join(bad)
    linked = sum(len(LINK.findall(path.read_text(encoding="utf-8"))) for path in DOCS)
    assert linked >= 10, linked  # the scan really found the docs' links


def test_the_link_check_catches_a_missing_file_and_heading(tmp_path):
    doc = tmp_path / "doc.md"
    doc.write_text("# Top: the (first) part\n\n## Top: the (first) part\n\n"
                   "[ok](#top-the-first-part) [ok2](#top-the-first-part-1) [bad](#nowhere)\n"
                   "[file](missing.md) ![img](doc.md) [web](https://example.org/x#y)\n"
                   "```\n[in code](gone.md)\n```\n", encoding="utf-8")
    bad = broken_links(doc)
    assert len(bad) == 2 and "#nowhere" in bad[0] and "missing.md" in bad[1], bad
