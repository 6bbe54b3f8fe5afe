"""File helpers shared by the library's atomic writers (records, replay images, value tables) and the benchmark
scripts' JSON outputs."""

from __future__ import annotations

import json
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

__all__ = ["final_path", "object_without_repeats", "output_file_problem", "plain_temp_file", "replace_text",
           "write_json"]


def final_path(path: str) -> str:
    """The file an atomic write to ``path`` replaces: the target of a symbolic link (followed to the end), so that
    the link stays a link to the new contents instead of being replaced by a file; else ``path`` itself."""
    return os.path.realpath(path) if os.path.islink(path) else path


def plain_temp_file(folder: str, prefix: str, suffix: str, replacing: str | None = None) -> tuple[int, str]:
    """A new temporary file in ``folder`` (``tempfile.mkstemp``: its descriptor and path) that is to be renamed into
    place: given the mode of the file it replaces (``replacing``, when that exists), else of a file opened plainly
    (0666 less the umask), since mkstemp makes it private (0600).  Nothing is left behind if the mode cannot be
    set."""
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=folder)
    try:
        try:
            mode = stat.S_IMODE(os.stat(replacing).st_mode) if replacing is not None else None
        except OSError:  # none there yet (or unreadable): a new file's mode
            mode = None
        if mode is None:
            umask = os.umask(0)  # the only way to read it is to set it
            os.umask(umask)
            mode = 0o666 & ~umask
        os.chmod(tmp, mode)
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    return fd, tmp


def output_file_problem(path: str, option: str) -> str | None:
    """Make the folder of the file ``path`` (given as ``option``, e.g. ``--out``) now, before any long run; a message
    naming why it cannot take the file (a folder, a folder that cannot be made or written in), or ``None``."""
    if os.path.isdir(path):
        return f"{option} {path!r} is a folder: expected the path of a JSON file to write"
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        return f"{option} {path!r}: cannot create its folder {folder!r} ({exc.strerror or exc})"
    if not os.access(folder, os.W_OK | os.X_OK):
        return f"{option} {path!r}: cannot write in its folder {folder!r} (no permission)"
    return None


def write_json(path: str, data: Any, indent: int = 1) -> None:
    """Write ``data`` as JSON to ``path`` whole: a temporary file in the same folder, renamed into place (an
    interrupted write leaves the earlier file, or none, and no temporary file).  A file replaced keeps its mode,
    and a symbolic link stays a link (its target is replaced)."""
    path = final_path(path)
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = plain_temp_file(folder, f".{os.path.basename(path)}.", ".tmp", replacing=path)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(json.dumps(data, indent=indent) + "\n")
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise


def replace_text(path: str | os.PathLike, text: str) -> None:
    """Write ``text`` (UTF-8, line ends as given) to ``path`` whole: to ``<path>.tmp`` beside it, then renamed into
    place, so a stop mid-write leaves the earlier file.  The temporary file has a fixed name, so that folder checks
    can know it as the file's own and a later write overwrites one a kill left behind (run folders, sweeps and
    evaluations use this; :func:`write_json` is for files given by the user)."""
    tmp = Path(os.fspath(path) + ".tmp")
    tmp.write_text(text, encoding="utf-8", newline="")
    os.replace(tmp, path)


def object_without_repeats(pairs: list[tuple[str, Any]], complain: Callable[[str], Exception]) -> dict[str, Any]:
    """A JSON object from its ``(key, value)`` pairs (a ``json`` ``object_pairs_hook``), raising ``complain(key)``
    for a key given twice, which ``json`` would otherwise read as its last value, silently."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise complain(key)
        out[key] = value
    return out
