"""Progress bars that need no extra: tqdm's when it is installed, none otherwise.

tqdm comes with the ``train`` and ``play`` extras, not with the core (gymnasium and numpy only), so long work run
from a core install (``pokersquares evaluate``, training tables) goes on without a bar instead of failing.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Iterable
from typing import Any

import numpy as np


def check_progress(progress: Any) -> bool:
    """``progress`` as a bool; a TypeError naming it if it is not a bool (``"no"`` would otherwise read as true)."""
    if not isinstance(progress, (bool, np.bool_)):
        raise TypeError(f"progress={progress!r}: expected True or False (a bool)")
    return bool(progress)


def _tqdm_class() -> Any:
    """tqdm's bar class: ``tqdm.auto``'s (a widget in Jupyter) when ipywidgets is installed, else the text bar.

    Without ipywidgets, ``tqdm.auto`` in a Jupyter kernel warns "IProgress not found" and falls back to the text bar
    anyway; taking the text bar directly gives the same bar without the warning.  ``None`` without tqdm.

    The class is a subclass that starts no monitor thread (``monitor_interval = 0``; the thread only re-tunes how
    often a stalled bar redraws): ``evaluate --jobs`` forks its workers while the bar is shown, and forking a
    process with a second thread can deadlock the child (Python 3.12 and later warn "This process is multi-threaded,
    use of fork() may lead to deadlocks").  tqdm's own class is left as it is for the user's bars.
    """
    try:
        if importlib.util.find_spec("ipywidgets") is not None:
            from tqdm.auto import tqdm
        else:
            from tqdm import tqdm
    except ImportError:
        return None
    return _without_monitor(tqdm)


@functools.lru_cache(maxsize=None)
def _without_monitor(tqdm: type) -> type:
    """A subclass of the bar class ``tqdm`` that starts no monitor thread (one class per base, made once)."""
    return type(tqdm.__name__, (tqdm,), {"monitor_interval": 0, "__module__": __name__})


def progress_bar(enabled: bool = True, **options: Any) -> Any:
    """A tqdm bar made with ``options`` if ``enabled`` and tqdm is installed, else ``None``.

    The bar is ``tqdm.auto``'s when ipywidgets is installed (a widget in Jupyter), else tqdm's text bar, which
    Jupyter shows as text.  Callers update and close the bar only when it is not ``None``.  ``enabled`` must be a bool
    (numpy's too), so that ``progress="no"`` is refused instead of read as true.
    """
    if not check_progress(enabled):
        return None
    tqdm = _tqdm_class()
    return None if tqdm is None else tqdm(**options)


def progress_iter(items: Iterable[Any], **options: Any) -> Iterable[Any]:
    """``items`` wrapped in a tqdm bar when tqdm is installed, else ``items`` as they are."""
    bar = progress_bar(True, iterable=items, **options)
    return items if bar is None else bar
