"""Direct policy search on learned value tables: the cross-entropy method on per-class value multipliers.

The self-play tables of :mod:`agents.tables` estimate what a line ends up
worth under the exploring one-ply policy that learned them.  Good estimates
are not the same thing as good decisions: the agents compare small
*differences* of those values, and systematic errors in them (values learned
while exploring, lines valued one at a time) cost points.  As in Tetris,
where the cross-entropy method on a few feature weights beats value learning
(Szita and Lorincz 2006), this module searches directly for the table that
*plays* best.

The search space is small and readable: every incomplete line abstraction
belongs to one of :data:`CLASS_NAMES` (one card; flush and straight still
possible; flush only; straight only; one pair; two pair; three of a kind;
more; dead), and the tuned value is the learned value times ``exp(theta[class,
row/column, phase bin])``.  Complete lines keep their exact points.  Each
generation samples ``population`` parameter vectors around the current mean,
plays every one with ``ply``-ply expectimax on the same ``games`` fresh deals
(common random numbers; compiled self-play, :func:`agents._fast.self_play`),
and refits the mean and spread to the ``elite`` best.

Needs the compiled kernels (numba, the ``fast`` extra): a one-ply game costs
about 25 microseconds, so a generation of 60 candidates on 20,000 deals takes
about 30 s on 2 cores.  ``pokersquares experiment tune-tables`` runs it and
measures the tuned tables on held-out deals.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from agents.lines import KEY_FLUSH, KEY_PAIRS, KEY_T, KEY_WINDOW
from agents.tables import ValueTables
from pokersquares_env._progress import progress_bar

__all__ = ["CLASS_NAMES", "TuneResult", "check_compiled", "check_options", "line_classes", "load_theta", "play_scores",
           "random_decks", "scale_values", "tune_tables", "tuned_tables", "TUNED_SYSTEMS"]

CLASS_NAMES = ("one card", "flush+straight draw", "flush draw", "straight draw", "one pair", "two pair",
               "three of a kind", "full house/four draw", "dead")


def line_classes() -> np.ndarray:
    """The class (index into :data:`CLASS_NAMES`) of every ``LINE_MASK`` key; -1 for empty and complete lines."""
    t, pairs, win, flush = KEY_T, KEY_PAIRS, KEY_WINDOW, KEY_FLUSH
    mid = (t >= 2) & (t <= 4)
    no_pair = mid & (pairs == 0)
    cls = np.full(t.shape, -1, dtype=np.int64)
    cls[t == 1] = 0
    cls[no_pair & (flush == 1) & (win > 0)] = 1
    cls[no_pair & (flush == 1) & (win == 0)] = 2
    cls[no_pair & (flush == 0) & (win > 0)] = 3
    cls[mid & (pairs == 1)] = 4
    cls[mid & (pairs == 2)] = 5
    cls[mid & (pairs == 3)] = 6
    cls[mid & (pairs >= 4)] = 7
    cls[no_pair & (flush == 0) & (win == 0)] = 8
    return cls


_CLASSES = line_classes()


def _phase_bins(phases: int, bins: int) -> np.ndarray:
    return np.minimum(np.arange(phases) * bins // phases, bins - 1)


def scale_values(values: np.ndarray, theta: np.ndarray) -> np.ndarray:
    """``values`` with every incomplete line's value multiplied by ``exp(theta[class, row/column, phase bin])``.

    ``theta`` has shape ``(len(CLASS_NAMES), 2, bins)`` (``bins`` equal slices of the table's phases) or
    ``(len(CLASS_NAMES), 2)`` (one bin).  Empty and complete lines are left as they are.
    """
    theta = np.asarray(theta, dtype=np.float64)
    given = theta.shape
    if theta.ndim == 2:
        theta = theta[:, :, None]
    if theta.ndim != 3 or theta.shape[:2] != (len(CLASS_NAMES), 2) or theta.shape[2] < 1:
        raise ValueError(f"theta of shape {given}: expected ({len(CLASS_NAMES)}, 2) or "
                         f"({len(CLASS_NAMES)}, 2, bins)")
    if not np.all(np.isfinite(theta)):
        raise ValueError("theta must be finite")
    if values.ndim not in (3, 4) or values.shape[:2] != (_CLASSES.size, 2):
        raise ValueError(f"values of shape {values.shape}: expected ({_CLASSES.size}, 2, phases[, outs])")
    phases = values.shape[2]
    scale = np.ones(values.shape[:3])
    keep = _CLASSES >= 0
    scale[keep] = np.exp(theta[_CLASSES[keep]][:, :, _phase_bins(phases, theta.shape[2])])
    return values * scale.reshape(scale.shape + (1,) * (values.ndim - 3))


def _scaled_tables(base: ValueTables, theta: np.ndarray, policy: str) -> ValueTables:
    """``base`` with its values scaled by ``theta`` (:func:`scale_values`), its other fields kept, ``policy`` new."""
    return ValueTables(scale_values(base.values, theta), base.counts, base.system, base.rules, base.games, base.seed,
                       policy)


def play_scores(values: np.ndarray, decks: np.ndarray, tables: ValueTables, ply: int = 1) -> np.ndarray:
    """Final scores of ``ply``-ply expectimax on ``values`` over ``decks`` (one row per game), no exploration."""
    from agents import _fast

    rules = tables.rules
    n = len(decks)
    _, final = _fast.self_play(values, decks, ply=ply, explore=np.zeros((n, 25), dtype=bool),
                               noise=np.zeros((n, 25)), points=tables.system.line_points_table,
                               adjacent=rules.placement == "adjacent", first_cell=rules.first_cell)
    return final.sum(1)


def random_decks(rules, n: int, seed: Any) -> np.ndarray:
    """``n`` shuffled decks of ``rules``' deck (each row a permutation of its card codes)."""
    rng = np.random.default_rng(seed)
    return np.argsort(rng.random((n, rules.deck_size)), axis=1).astype(np.int64)


def check_compiled(what: str = "tune_tables") -> None:
    """Raise a ValueError (:class:`agents.config.MissingExtraError`) saying ``what`` needs numba and how to install it,
    if numba is not installed: the search plays every candidate in the compiled kernels (:mod:`agents._fast`)."""
    from agents.config import check_installed

    check_installed(what, ("numba",))


def check_options(*, ply: int, generations: int, population: int, elite: int, games: int, sigma: float,
                  bins: int = 1) -> None:
    """Raise a ValueError naming the first bad option of :func:`tune_tables`."""
    for name, value in (("generations", generations), ("population", population), ("elite", elite),
                        ("games", games), ("bins", bins)):
        if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
            raise ValueError(f"{name}={value!r}: expected a positive integer")
    if elite > population:
        raise ValueError(f"elite={elite} is larger than population={population}")
    if isinstance(ply, bool) or not isinstance(ply, (int, np.integer)) or ply not in (1, 2):
        raise ValueError(f"ply={ply!r}: expected 1 or 2")
    if (isinstance(sigma, bool) or not isinstance(sigma, (int, float, np.integer, np.floating))
            or not (np.isfinite(sigma) and sigma > 0)):
        raise ValueError(f"sigma={sigma!r}: expected a positive number")


@dataclass
class TuneResult:
    """What :func:`tune_tables` found: the tuned ``tables``, their ``theta`` and one record per generation."""

    tables: ValueTables
    theta: np.ndarray
    history: list[dict[str, float]] = field(default_factory=list)


def load_theta(path: Any) -> np.ndarray:
    """The ``theta`` of a ``theta.json`` written by ``pokersquares experiment tune-tables``: shape ``(9, 2, bins)``
    (class, row/column, phase bin), e.g. to start :func:`tune_tables` from it (``init``).  A missing class, a
    non-number or rows and columns of different lengths raise ``ValueError`` naming the file and the entry."""
    import json
    from pathlib import Path

    try:
        data = json.loads(Path(path).read_text())
    except (OSError, ValueError) as exc:
        raise ValueError(f"theta file {str(path)!r}: cannot read it as JSON ({exc})") from None
    return _theta_from(data, path)


def _finite_float(x: int | float) -> bool:
    """Whether ``x`` is a finite float (an int too large for one is not: ``np.isfinite`` cannot even take it)."""
    try:
        return math.isfinite(float(x))
    except OverflowError:
        return False


def _theta_from(data: Any, path: Any) -> np.ndarray:
    """:func:`load_theta` on the parsed JSON ``data`` of the file ``path`` (named in the errors)."""
    if not isinstance(data, dict):
        raise ValueError(f"theta file {str(path)!r}: expected an object of classes, got {type(data).__name__}")
    missing = [name for name in CLASS_NAMES if name not in data]
    if missing:
        raise ValueError(f"theta file {str(path)!r}: classes {missing} missing; expected all of {list(CLASS_NAMES)}")
    rows = []
    for name in CLASS_NAMES:
        entry = data[name]
        pair = [entry.get(k) if isinstance(entry, dict) else None for k in ("row", "column")]
        ok = all(isinstance(v, list) and v and all(isinstance(x, (int, float)) and not isinstance(x, bool)
                                                   and _finite_float(x) for x in v) for v in pair)
        if not ok or len(pair[0]) != len(pair[1]) or (rows and len(pair[0]) != len(rows[0][0])):
            raise ValueError(f"theta file {str(path)!r}: class {name!r} is {entry!r}; expected "
                             '{"row": [numbers], "column": [numbers]} with one number per phase bin, the same '
                             "count for every class")
        rows.append(pair)
    return np.array(rows, dtype=np.float64)


TUNED_SYSTEMS = ("american", "english")  # the point systems with shipped multipliers (agents/data/tuned_*.json)


def tuned_tables(system: Any, rules: Any = None, *, games: int, phases: int, features: str,
                 cache: Any = True) -> ValueTables:
    """The default expectimax tables of ``system`` scaled by the multipliers shipped with the package (the agents'
    ``tuned=true`` option).

    The multipliers in ``agents/data/tuned_{american,english}.json`` were found by ``pokersquares experiment
    tune-tables`` on the default tables (plain rules, the agents' default ``games``, ``phases`` and ``features``,
    seed 0), which are deterministic: applied to them they rebuild that run's ``tables.npz``.  Other point systems,
    rules or table options raise ``ValueError`` saying how to tune tables for them instead.
    """
    import json
    from importlib import resources

    from agents.tables import load_or_train
    from pokersquares_env.core import Rules
    from pokersquares_env.scoring import point_system

    ps = point_system(system)
    rules = Rules.parse(rules) if rules is not None else Rules()
    name = next((n for n in TUNED_SYSTEMS if tuple(point_system(n).points) == tuple(ps.points)), None)
    how = ("tune tables for it with `pokersquares experiment tune-tables --scoring ...` and pass "
           "tables=OUT/tables.npz instead")
    if name is None:
        raise ValueError(f"tuned=true: multipliers are shipped for {' and '.join(TUNED_SYSTEMS)} only, not for point "
                         f"system {ps.name!r} {ps.as_dict()}; {how}")
    if rules != Rules():
        raise ValueError(f"tuned=true: the shipped multipliers were tuned under the plain rules, not {rules.to_json()}; "
                         f"{how}")
    with resources.as_file(resources.files("agents") / "data" / f"tuned_{name}.json") as path:
        data = json.loads(path.read_text())
        want = data["_about"]["tables"]
        theta = _theta_from(data, path)
    given = {"games": games, "phases": phases, "features": "none" if features is None else features}
    wrong = {k: v for k, v in given.items() if v != want[k]}
    if wrong:
        raise ValueError(f"tuned=true: the shipped multipliers fit the default tables ({want['games']} games, "
                         f"{want['phases']} phases, features={want['features']!r}), not {wrong}; leave those "
                         f"options out, or {how}")
    base = load_or_train(ps, rules, games=games, phases=phases, seed=int(want["seed"]), features=given["features"],
                         cache=cache)
    return _scaled_tables(base, theta, f"{base.policy}+tuned({name})")


def tune_tables(
    base: ValueTables,
    *,
    ply: int = 1,
    generations: int = 20,
    population: int = 60,
    elite: int = 12,
    games: int = 20_000,
    sigma: float = 0.3,
    bins: int = 1,
    init: np.ndarray | None = None,
    seed: int = 0,
    progress: bool = False,
    callback: Callable[[dict[str, float]], None] | None = None,
) -> TuneResult:
    """Cross-entropy search for the ``theta`` of :func:`scale_values` under which ``ply``-ply expectimax on
    ``base`` scores most; returns the tuned tables (``policy`` records the search) and each generation's record.

    Each generation draws ``population`` vectors from a normal around the current mean (the mean itself is
    always one of them), plays each on the same ``games`` fresh deals, and refits mean and standard deviation
    to the ``elite`` best (plus a small floor that shrinks over the generations, against early collapse).  A
    generation's record has ``generation``, ``base`` (the untuned tables' mean on its deals), ``mean_theta`` (the
    current mean's), ``best``, ``elite`` and ``sigma``.  ``init`` starts from a previous ``theta`` (a one-bin
    ``theta`` is spread over ``bins``).  Deterministic for a ``seed``.  Needs numba (:func:`check_compiled`).
    """
    check_options(ply=ply, generations=generations, population=population, elite=elite, games=games, sigma=sigma,
                  bins=bins)
    check_compiled()  # numba missing: said before any work
    from agents import _fast
    from agents.evaluation import check_seed

    seed = check_seed(seed)

    _fast.tables_flat(base.values)  # raises for tables the kernels cannot read
    shape = (len(CLASS_NAMES), 2, bins)
    if init is None:
        mean = np.zeros(shape)
    else:
        init = np.asarray(init, dtype=np.float64)
        given = init.shape
        if init.ndim == 2:
            init = init[:, :, None]
        if init.ndim != 3 or init.shape[:2] != shape[:2] or init.shape[2] not in (1, bins):
            raise ValueError(f"init of shape {given}: expected ({shape[0]}, 2), ({shape[0]}, 2, 1) or {shape}")
        if not np.isfinite(init).all():
            raise ValueError(f"init: {int((~np.isfinite(init)).sum())} of {init.size} values are NaN or infinite: "
                             "expected a finite theta (as load_theta reads one)")
        mean = np.broadcast_to(init, shape).copy()
    std = np.full(shape, float(sigma))
    rng = np.random.default_rng([seed, 91])
    history: list[dict[str, float]] = []
    bar = progress_bar(progress, total=generations, desc=f"tuning {base.system.name} ply={ply}", unit="gen")
    for g in range(generations):
        decks = random_decks(base.rules, games, [seed, 92, g])
        thetas = mean + std * rng.standard_normal((population,) + shape)
        thetas[0] = mean
        fitness = np.array([play_scores(scale_values(base.values, th), decks, base, ply).mean() for th in thetas])
        order = np.argsort(-fitness, kind="stable")
        chosen = thetas[order[:elite]]
        record = {"generation": g, "base": float(play_scores(base.values, decks, base, ply).mean()),
                  "mean_theta": float(fitness[0]), "best": float(fitness[order[0]]),
                  "elite": float(fitness[order[:elite]].mean())}
        mean = chosen.mean(0)
        std = chosen.std(0) + 0.02 * sigma * (1 - g / generations)
        record["sigma"] = float(std.mean())
        history.append(record)
        if callback is not None:
            callback(record)
        if bar is not None:
            bar.set_postfix(base=f"{record['base']:.2f}", tuned=f"{record['mean_theta']:.2f}")
            bar.update(1)
    if bar is not None:
        bar.close()
    tuned = _scaled_tables(base, mean, f"{base.policy}+cem(ply={ply},bins={bins},gens={generations},games={games})")
    return TuneResult(tuned, mean, history)
