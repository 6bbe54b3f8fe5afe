"""Progress bars that need no extra: tqdm's when it is installed, none otherwise.

tqdm comes with the ``train`` and ``play`` extras, not with the core (gymnasium and numpy only), so long work run
from a core install (``pokersquares evaluate``, training tables) goes on without a bar instead of failing.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


def progress_bar(enabled: bool = True, **options: Any) -> Any:
    """A ``tqdm.auto`` bar made with ``options`` if ``enabled`` and tqdm is installed, else ``None``.

    Callers update and close the bar only when it is not ``None``.
    """
    if not enabled:
        return None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(**options)


def progress_iter(items: Iterable[Any], **options: Any) -> Iterable[Any]:
    """``items`` wrapped in a tqdm bar when tqdm is installed, else ``items`` as they are."""
    bar = progress_bar(True, iterable=items, **options)
    return items if bar is None else bar
