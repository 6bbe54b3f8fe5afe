"""Option checks and guards that the Gymnasium and PettingZoo adapters share.

``PokerSquares-v0``, ``PokerShuffle-v0``, ``Soliter-v0`` and the multiplayer env take the same kinds of options
(``reward_mode``, ``illegal_action``, ``illegal_penalty``, ``render_mode``) and guard ``render()`` the same way; one
copy of each check keeps their error messages alike: every one names the bad value and what was expected.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

REWARD_MODES = ("line", "terminal")
ILLEGAL_ACTIONS = ("raise", "penalty")


def check_choice(name: str, value: Any, choices: Sequence[str]) -> str:
    """``value`` if it is one of ``choices``; otherwise a ``ValueError`` that names it and the choices."""
    if not isinstance(value, str) or value not in choices:
        quoted = [repr(c) for c in choices]
        expected = " or ".join(quoted) if len(quoted) <= 2 else "one of " + ", ".join(quoted)
        raise ValueError(f"{name}={value!r}: expected {expected}")
    return value


def check_number(name: str, value: Any) -> float:
    """``value`` as a float; a ``TypeError`` that names it unless it is a real number (``bool`` is refused), a
    ``ValueError`` if it is NaN or infinite (it would make every reward it enters NaN or infinite)."""
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{name}={value!r}: expected a number")
    try:
        number = float(value)
    except OverflowError:  # an int beyond a float's range
        raise ValueError(f"{name}={value!r}: expected a finite number (this one is too large for a float)") from None
    if not math.isfinite(number):
        raise ValueError(f"{name}={value!r}: expected a finite number")
    return number


def check_seed(seed: Any, note: str = "") -> int | None:
    """``reset``'s ``seed`` as a plain ``int`` (numpy integers too) or ``None``; a ``TypeError`` naming it for a bool,
    a float or anything else, a ``ValueError`` for a negative one (``note`` adds a gloss to the messages)."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)):
        raise TypeError(f"seed={seed!r}: expected a non-negative int or None{note}")
    if seed < 0:
        raise ValueError(f"seed={seed!r}: expected a non-negative int or None{note}")
    return int(seed)


def check_render_mode(render_mode: Any, modes: Sequence[str]) -> str | None:
    """``render_mode`` if it is ``None`` or one of the env's ``metadata["render_modes"]``; otherwise a ``ValueError``."""
    if render_mode is not None and render_mode not in modes:
        raise ValueError(f"render_mode={render_mode!r}: expected None or one of {list(modes)}")
    return render_mode


def new_renderer(render_mode: str, title: str, fps: float):
    """The :class:`pokersquares_env.render.Renderer` of ``render_mode`` (``"rgb_array"`` or ``"human"``): an
    ``ImportError`` naming the extra to install when Pillow (or, for ``"human"``, pygame) is missing.  The envs make
    the ``"human"`` one when they are made, so that a missing extra is named then, not at the first reset."""
    from pokersquares_env import render as _render

    return _render.Renderer(render_mode, title=title, fps=fps)


def check_reset_options(options: Any, allowed: Sequence[str], *, unknown: str = "error") -> Mapping[str, Any]:
    """``reset(options=...)`` as a mapping (``{}`` for ``None``); a ``TypeError`` unless it is one, a ``ValueError``
    that names every key not in ``allowed`` (``unknown="warn"``: a warning naming them, and the mapping without
    them, for envs whose API tests pass keys of their own, as PettingZoo's do)."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise TypeError(f"options={options!r}: expected None or a dict with the keys {', '.join(map(repr, allowed))}")
    extra = set(options) - set(allowed)
    if extra and unknown == "warn":
        import warnings

        warnings.warn(f"reset options {sorted(extra, key=str)} ignored: this env reads only "
                      f"{' and '.join(map(repr, allowed))}", stacklevel=3)
        return {k: v for k, v in options.items() if k in allowed}
    if extra:
        raise ValueError(f"unknown reset options {sorted(extra, key=str)}: expected only {' and '.join(map(repr, allowed))}")
    return options


def render_ready(render_mode: str | None, started: bool, modes: Sequence[str]) -> bool:
    """Whether ``render()`` has something to do: Gymnasium's warning (and ``False``) without a ``render_mode``, and
    ``gymnasium.error.ResetNeeded`` before the first ``reset()``."""
    import gymnasium

    if render_mode is None:
        hint = " or ".join(repr(m) for m in modes if m != "human")
        gymnasium.logger.warn(f"render() called without a render_mode; pass render_mode={hint} to make()")
        return False
    if not started:
        raise gymnasium.error.ResetNeeded("call reset() before render()")
    return True
