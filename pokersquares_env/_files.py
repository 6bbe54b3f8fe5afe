"""File helpers shared by the library's atomic writers (records, replay images, value tables)."""

from __future__ import annotations

import os
import tempfile

__all__ = ["plain_temp_file"]


def plain_temp_file(folder: str, prefix: str, suffix: str) -> tuple[int, str]:
    """A new temporary file in ``folder`` (``tempfile.mkstemp``: its descriptor and path), given the mode of a file
    opened plainly (0666 less the umask), since mkstemp makes it private (0600) and it is to be renamed into place.
    Nothing is left behind if the mode cannot be set."""
    fd, tmp = tempfile.mkstemp(prefix=prefix, suffix=suffix, dir=folder)
    try:
        umask = os.umask(0)  # the only way to read it is to set it
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
    except BaseException:
        os.close(fd)
        os.unlink(tmp)
        raise
    return fd, tmp
