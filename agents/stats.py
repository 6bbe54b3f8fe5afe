"""Confidence intervals without scipy: Student's t quantile, and the 95% intervals the harness and experiments print.

* :func:`mean_ci95`: half-width of the t interval of a mean over independent
  values (games on different deals, or per-deal differences of two agents on
  common deals);
* :func:`seed_ci95`: the same over training seeds' means (the replicates of a
  training procedure);
* :func:`welch_ci95`: Welch's interval of a difference between two
  independently trained conditions.

``tests/test_stats.py`` checks them against scipy (the quantile to 1e-9, fractional degrees of freedom too).
"""

from __future__ import annotations

import functools
import math
from collections.abc import Sequence

import numpy as np

__all__ = ["Z95", "fmt", "mean_ci95", "seed_ci95", "t975", "welch_ci95"]

Z95 = 1.959963984540054  # the normal 97.5% quantile


# Student's t, 97.5% quantile, for 1..30 degrees of freedom, to 3 decimals (the printed table the harness has always
# used for whole degrees of freedom: within 5e-4 of the exact values, so the figures it printed stay as they were)
_T975 = (12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
         2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042)


def t975(df: float) -> float:
    """The 97.5% quantile of Student's t with ``df`` degrees of freedom (NaN below 1).

    Whole ``df`` up to 30 read the 3-decimal table; any other ``df`` (a fractional one, as Welch's, or one above 30)
    is computed without scipy as the root of the t tail probability (the regularized incomplete beta function), to
    about 1e-12 relative, and beyond 10**4 by the Cornish-Fisher expansion, exact there to the same precision.
    (Before, a fractional ``df`` was interpolated between the table's whole ones: 7.104 for 1.5 against 6.017.)"""
    if not df >= 1:
        return math.nan
    if df <= 30 and df == int(df):
        return _T975[int(df) - 1]
    return _t975(float(df))


@functools.lru_cache(maxsize=1024)
def _t975(df: float) -> float:
    if df == 1:
        return math.tan(math.pi * 0.475)
    if df == 2:
        return 0.95 / math.sqrt(2 * 0.975 * 0.025)
    if df > 1e4:
        return _cornish_fisher(df)
    lo, hi = Z95, math.tan(math.pi * 0.475)  # the quantile falls as df grows: between df=inf (z) and df=1
    t = min(max(_cornish_fisher(df), lo), hi)
    log_norm = math.lgamma((df + 1) / 2) - math.lgamma(df / 2) - 0.5 * math.log(df * math.pi)
    for _ in range(100):  # Newton on the tail probability, kept inside the bracket (bisection when it would leave)
        f = _t_tail(t, df) - 0.025
        if f > 0:
            lo = t
        else:
            hi = t
        density = math.exp(log_norm - (df + 1) / 2 * math.log1p(t * t / df))
        step = t + f / density
        t_new = step if lo < step < hi else (lo + hi) / 2
        if abs(t_new - t) <= 1e-13 * t:
            return t_new
        t = t_new
    return t


def _cornish_fisher(df: float) -> float:
    """The t quantile by the Cornish-Fisher expansion in 1/df (Abramowitz and Stegun 26.7.5), to the 4th order."""
    z = Z95
    if math.isinf(df):
        return z
    g1 = (z**3 + z) / 4
    g2 = (5 * z**5 + 16 * z**3 + 3 * z) / 96
    g3 = (3 * z**7 + 19 * z**5 + 17 * z**3 - 15 * z) / 384
    g4 = (79 * z**9 + 776 * z**7 + 1482 * z**5 - 1920 * z**3 - 945 * z) / 92160
    return z + g1 / df + g2 / df**2 + g3 / df**3 + g4 / df**4


def _t_tail(t: float, df: float) -> float:
    """P(T > t) for t >= 0: half the regularized incomplete beta I_x(df/2, 1/2) at x = df / (df + t^2)."""
    return 0.5 * _betainc(df / 2, 0.5, df / (df + t * t))


def _betainc(a: float, b: float, x: float) -> float:
    """The regularized incomplete beta function I_x(a, b) by its continued fraction (Lentz's method)."""
    if x <= 0:
        return 0.0
    if x >= 1:
        return 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1) / (a + b + 2):
        return front * _beta_fraction(a, b, x) / a
    return 1 - front * _beta_fraction(b, a, 1 - x) / b


def _beta_fraction(a: float, b: float, x: float) -> float:
    tiny = 1e-300
    c, d = 1.0, 1 - (a + b) * x / (a + 1)
    d = 1 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 20000):
        for num in (m * (b - m) * x / ((a + 2 * m - 1) * (a + 2 * m)),
                    -(a + m) * (a + b + m) * x / ((a + 2 * m) * (a + 2 * m + 1))):
            d = 1 + num * d
            d = 1 / (d if abs(d) > tiny else tiny)
            c = 1 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1) < 1e-15:
            break
    return h


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
