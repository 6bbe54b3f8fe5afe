"""Confidence intervals without scipy: Student's t quantile, and the 95% intervals the harness and experiments print.

* :func:`mean_ci95`: half-width of the t interval of a mean over independent
  values (games on different deals, or per-deal differences of two agents on
  common deals);
* :func:`seed_ci95`: the same over training seeds' means (the replicates of a
  training procedure);
* :func:`welch_ci95`: Welch's interval of a difference between two
  independently trained conditions.

``tests/test_experiment.py`` checks them against scipy.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

__all__ = ["Z95", "fmt", "mean_ci95", "seed_ci95", "t975", "welch_ci95"]

Z95 = 1.959963984540054  # the normal 97.5% quantile

# Student's t, 97.5% quantile, for 1..30 degrees of freedom (beyond 30 a Cornish-Fisher expansion is within 1e-4)
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t975(df: float) -> float:
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom (a fractional ``df``, as Welch's, is
    interpolated in ``1 / df`` between the whole ones around it)."""
    if not df >= 1:
        return math.nan
    if df <= 30:
        lo = int(df)
        if lo == df or lo == 30:
            return _T975[lo - 1]
        w = (1 / lo - 1 / df) / (1 / lo - 1 / (lo + 1))
        return _T975[lo - 1] + w * (_T975[lo] - _T975[lo - 1])
    z = Z95
    return z + (z**3 + z) / (4 * df) + (5 * z**5 + 16 * z**3 + 3 * z) / (96 * df**2)


def mean_ci95(values: Sequence[float]) -> float:
    """Half-width of the 95% t interval of the mean of independent ``values`` (NaN for fewer than two)."""
    m = np.asarray(values, dtype=np.float64)
    if m.size < 2:
        return math.nan
    return t975(m.size - 1) * float(m.std(ddof=1)) / math.sqrt(m.size)


def seed_ci95(seed_means: Sequence[float]) -> float:
    """Half-width of the 95% t interval of the mean over training seeds (the replicates of a training procedure)."""
    return mean_ci95(seed_means)


def welch_ci95(a: Sequence[float], b: Sequence[float]) -> float:
    """Half-width of the 95% Welch interval of ``mean(a) - mean(b)``, ``a`` and ``b`` the seed means of two
    independently trained conditions."""
    a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if a.size < 2 or b.size < 2:
        return math.nan
    va, vb = a.var(ddof=1) / a.size, b.var(ddof=1) / b.size
    se = math.sqrt(va + vb)
    if se == 0:
        return 0.0
    df = (va + vb) ** 2 / (va**2 / (a.size - 1) + vb**2 / (b.size - 1))
    return t975(df) * se


def fmt(value: float | None, spec: str = ".2f") -> str:
    """A figure (to 2 decimals, or by ``spec``), or 'n/a' where it cannot be computed (an interval over one seed
    or one deal)."""
    return "n/a" if value is None or not math.isfinite(value) else format(value, spec)
