"""Learned hand-abstraction values: expected final points of abstracted partial lines, per point system.

The abstraction of a line is its ``LINE_MASK`` key (cards, jokers, rank-count
pattern, whether a straight -- royal or not -- and a flush are still
possible), whether it is a row or a column, and the game phase (how many
cards are on the board); with ``features="outs"`` also what can still come
(:func:`agents.batch.outs_index`: how many unseen cards still fit the line's
flush beyond those it needs, and how many unseen cards share a rank with
it).  Its value is the expected final points of that line.  Values are learned by Monte Carlo self-play (Neller et al.'s
"naive abstract reinforcement learning"): many games are played at once
(:class:`~agents.batch.Batch`) epsilon-greedily on the current table, every
visited line abstraction is credited with the points its line ends with,
and the table is the running average, blended towards a phase-free average
where visits are few (outs tables: towards the outs-free value of the same
phase first).

Tables are saved as ``.npz`` (values, counts and what they were trained for)
and cached per point system and rules under ``~/.cache/pokersquares/tables``
(``POKERSQUARES_CACHE`` overrides the folder).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import threading
import time
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from agents.batch import IS_COL, NUM_OUTS, NUM_OUTS_CLAIMS, NUM_OUTS_STRAIGHT, Batch
from agents.lines import NUM_KEYS, heuristic_values
from pokersquares_env._files import plain_temp_file
from pokersquares_env._progress import progress_bar
from pokersquares_env.core import Rules
from pokersquares_env.scoring import PointSystem, point_system

__all__ = ["ValueTables", "cache_dir", "check_cache", "check_tables_path", "improve_tables", "load_or_train",
           "load_tables_file", "tables_for", "train_tables"]

FORMAT = "pokersquares-value-tables"
VERSION = 2  # 2: optional outs features (cache keys of version 1 are never reused)
FEATURES = ("none", "outs", "straights", "claims")
_OUTS_SIZE = {"outs": NUM_OUTS, "straights": NUM_OUTS_STRAIGHT, "claims": NUM_OUTS_CLAIMS}
_FEATURE_OF_SIZE = {size: name for name, size in _OUTS_SIZE.items()}


def cache_dir() -> str:
    """Where trained tables are cached (``$POKERSQUARES_CACHE/tables`` or ``~/.cache/pokersquares/tables``; a ``~``
    in ``POKERSQUARES_CACHE`` is the home folder)."""
    root = os.environ.get("POKERSQUARES_CACHE") or os.path.join("~", ".cache", "pokersquares")
    return os.path.join(os.path.expanduser(root), "tables")


@dataclass
class ValueTables:
    """A trained value table ``values[key, is_col, phase]`` (``[..., outs]`` with outs features) and its training."""

    values: np.ndarray
    counts: np.ndarray
    system: PointSystem
    rules: Rules
    games: int
    seed: int
    #: how the values were learned: ``"ply=1"`` (self-play of :func:`train_tables`), then ``"+ply=2xN"`` for each
    #: round of :func:`improve_tables` (policy iteration on ``N`` games of two-ply expectimax)
    policy: str = "ply=1"

    @property
    def phases(self) -> int:
        """Number of game phases the table distinguishes."""
        return self.values.shape[2]

    @property
    def features(self) -> str:
        """The features the values are conditioned on besides the line abstraction: ``"none"``, ``"outs"`` (the
        outs buckets), ``"straights"`` (outs and the straight-window bucket) or ``"claims"`` (outs with contested
        flush draws told apart); read from the values' shape."""
        if self.values.ndim == 3:
            return "none"
        return _FEATURE_OF_SIZE[self.values.shape[3]]

    def save(self, path: str | os.PathLike) -> None:
        """Write the table to an ``.npz`` file atomically: into a temporary file of a name of its own in the same
        folder, then renamed onto ``path``, so that a reader, or another thread or process saving the same table at
        once, never sees a half-written file; nothing is left behind if writing fails.  A leading ``~`` is the home
        folder."""
        path = os.path.expanduser(os.fspath(path))
        folder = os.path.dirname(os.path.abspath(path))
        os.makedirs(folder, exist_ok=True)
        meta = {"format": FORMAT, "version": VERSION, "features": self.features, "system": self.system.to_json(),
                "rules": self.rules.to_json(), "games": self.games, "seed": self.seed, "policy": self.policy}
        fd, tmp = plain_temp_file(folder, f".{os.path.basename(path)}.", ".tmp.npz")
        try:
            with os.fdopen(fd, "wb") as fh:  # a file object: np.savez appends no ".npz" to it
                np.savez_compressed(fh, values=self.values, counts=self.counts, meta=np.array(json.dumps(meta)))
            try:
                os.replace(tmp, path)
            except OSError:
                if not self._is_saved_at(path):  # harmless only when another writer put this very table there
                    raise
        finally:
            with contextlib.suppress(FileNotFoundError):
                os.remove(tmp)

    def _is_saved_at(self, path: str) -> bool:
        """Whether ``path`` holds a valid table equal to this one (as another writer of it leaves it)."""
        try:
            other = ValueTables.load(path)
        except (OSError, ValueError):
            return False
        return (np.array_equal(other.values, self.values) and np.array_equal(other.counts, self.counts)
                and tuple(other.system.points) == tuple(self.system.points) and other.rules == self.rules
                and (other.games, other.seed, other.policy) == (self.games, self.seed, self.policy))

    @classmethod
    def load(cls, path: str | os.PathLike) -> "ValueTables":
        """Read a table written by :meth:`save` (errors name the file and what is wrong; a leading ``~`` is the home
        folder)."""
        if isinstance(path, bool) or not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"value tables path {path!r}: expected the path of a .npz file (a str or os.PathLike)")
        path = os.path.expanduser(os.fspath(path))
        if not os.path.exists(path):
            raise FileNotFoundError(f"value tables {path!r} do not exist: expected a .npz written by ValueTables.save "
                                    f"(train_tables(...).save(path) from Python, or the tables.npz of pokersquares "
                                    f"experiment tune-tables)")

        def bad(problem: str) -> ValueError:
            return ValueError(f"value tables {path!r}: {problem}")

        def invalid(why: str) -> ValueError:
            return ValueError(f"value tables {path!r} are not a valid .npz written by ValueTables.save: {why}")

        try:
            with open(path, "rb") as fh:
                head = fh.read(4)
        except OSError as exc:
            raise invalid(f"cannot read it ({exc.strerror or exc})") from None
        if head not in (b"PK\x03\x04", b"PK\x05\x06"):  # np.load would read anything else as a pickle or an array
            raise invalid("not a zip archive (an .npz is one)")
        try:
            with np.load(path, allow_pickle=False) as data:
                meta = json.loads(str(data["meta"]))
                values, counts = data["values"], data["counts"]
        except MemoryError:
            raise
        except Exception as exc:  # noqa: BLE001 - a damaged or foreign file: np.load, zipfile, zlib, json and
            # numpy's header parser each raise their own (KeyError, BadZipFile, zlib.error, EOFError, TypeError,
            # NotImplementedError for an unknown zip version, tokenize.TokenError for a broken .npy header, ...)
            # NumPy's message on object arrays advises loading them with allow_pickle: never for a file of tables
            raise invalid("it holds Python objects (pickled), not arrays of numbers" if "allow_pickle" in str(exc)
                          else f"{type(exc).__name__}: {exc}") from None
        if not isinstance(meta, dict):
            raise bad(f"meta is a JSON {type(meta).__name__}: expected an object")
        version = meta.get("version")
        if meta.get("format") == FORMAT and version != VERSION:
            whole = isinstance(version, int) and not isinstance(version, bool)
            when = ("an older version of the package wrote it" if whole and version < VERSION
                    else "a newer version of the package wrote it" if whole
                    else "missing or not a whole number")
            raise bad(f"format version {version!r} ({when}): expected version {VERSION}; retrain the tables with "
                      f"this version (agents.tables.train_tables, or delete a cached file to have it retrained)")
        if (meta.get("format") != FORMAT or values.ndim not in (3, 4) or values.shape[:2] != (NUM_KEYS, 2)
                or (values.ndim == 4 and values.shape[3] not in _FEATURE_OF_SIZE)):
            raise ValueError(f"value tables {path!r}: expected format {FORMAT!r} with values of shape "
                             f"({NUM_KEYS}, 2, phases) or ({NUM_KEYS}, 2, phases, {' or '.join(map(str, _FEATURE_OF_SIZE))}), "
                             f"got {meta.get('format')!r} {values.shape}")
        missing = [key for key in ("system", "rules", "games", "seed") if key not in meta]
        if missing:
            raise bad(f"meta lacks {', '.join(missing)}: expected what ValueTables.save writes")
        if values.shape[2] < 1:
            raise bad(f"values of shape {values.shape} have no phase: expected at least one")
        shape_features = "none" if values.ndim == 3 else _FEATURE_OF_SIZE[values.shape[3]]
        if meta.get("features") != shape_features:
            raise bad(f"meta says features={meta.get('features')!r}, but values of shape {values.shape} are those of "
                      f"features={shape_features!r}: expected the two to agree")
        if not np.issubdtype(values.dtype, np.floating):
            raise bad(f"values of dtype {values.dtype}: expected floats")
        if not np.isfinite(values).all():
            raise bad(f"{int((~np.isfinite(values)).sum())} of {values.size} values are NaN or infinite: "
                      "expected finite numbers")
        if counts.shape != values.shape or not (np.issubdtype(counts.dtype, np.floating)
                                                or np.issubdtype(counts.dtype, np.integer)):
            raise bad(f"counts of shape {counts.shape} and dtype {counts.dtype}: expected numbers of the values' "
                      f"shape {values.shape}")
        for key in ("games", "seed"):
            if isinstance(meta[key], bool) or not isinstance(meta[key], int) or meta[key] < 0:
                raise bad(f"{key}={meta[key]!r}: expected an integer >= 0")
        try:
            system = point_system(meta["system"])
        except (TypeError, ValueError, KeyError) as exc:
            raise bad(f"bad point system in meta: {exc}") from None
        try:
            rules = Rules(**meta["rules"])
        except (TypeError, ValueError) as exc:
            raise bad(f"bad rules {meta['rules']!r} in meta: {exc}: expected jokers, placement, first_cell") from None
        return cls(values, counts, system, rules, meta["games"], meta["seed"], str(meta.get("policy", "ply=1")))


def _finish(sums: np.ndarray, counts: np.ndarray, prior: np.ndarray, system: PointSystem, blend: float) -> np.ndarray:
    """Running averages, blended towards the phase-free average (then the prior) where visits are few (outs tables: towards the outs-free value of the same
phase first)."""
    if sums.ndim == 3:
        flat_s, flat_c = sums.sum(2), counts.sum(2)
        coarse = (flat_s + blend * prior) / (flat_c + blend)
    if sums.ndim == 4:  # outs: blend towards the outs-free value of the same phase
        mid = _finish(sums.sum(3), counts.sum(3), prior, system, blend)
        values = (sums + blend * mid[..., None]) / (counts + blend)
    else:
        values = (sums + blend * coarse[:, :, None]) / (counts + blend)
    complete = np.arange(NUM_KEYS) // 264 == 5  # complete lines are worth exactly their points
    values[complete] = system.line_points_table[complete].reshape((-1,) + (1,) * (values.ndim - 1))
    return values


def train_tables(
    system: Any = "american",
    rules: Rules | dict[str, Any] | None = None,
    *,
    games: int = 300_000,
    phases: int = 6,
    batch: int = 4096,
    epsilon: float = 0.5,
    epsilon_end: float = 0.02,
    blend: float = 20.0,
    seed: int = 0,
    features: str = "none",
    progress: bool = False,
) -> ValueTables:
    """Learn the hand-abstraction values for ``system`` and ``rules`` by ``games`` Monte Carlo self-play games.

    ``features``: ``"none"`` (values by key, row/column and phase),
    ``"outs"`` (also by the flush and rank outs buckets of
    :func:`agents.batch.outs_index`), ``"straights"`` (and the straight bucket) or ``"claims"`` (the outs
    buckets, with flush draws that other lines of the same kind contest told apart: see
    :data:`agents.batch.NUM_OUTS_CLAIMS`; needs numba, and self-play then runs in the compiled kernels).
    Exploration decays linearly from ``epsilon`` to ``epsilon_end``; the table
    is refreshed after every batch of ``batch`` games.
    """
    from agents.evaluation import check_positive_int, check_seed

    ps = point_system(system)
    rules = Rules.parse(rules) if rules is not None else Rules()
    games, phases, batch = (check_positive_int(games, "games"), check_phases(phases),
                            check_positive_int(batch, "batch"))
    seed = check_seed(seed)
    _check_exploration(epsilon, epsilon_end, blend)
    features = "none" if features is None else features  # specs parse "features=none" as None
    if features not in FEATURES:
        raise ValueError(f"features={features!r}: expected one of {', '.join(FEATURES)}")
    shape = (NUM_KEYS, 2, phases) + ((_OUTS_SIZE[features],) if features in _OUTS_SIZE else ())
    rng = np.random.default_rng([seed, 77])
    prior = heuristic_values(ps)
    sums = np.zeros(shape)
    counts = np.zeros(shape)
    values = np.broadcast_to(prior.reshape(prior.shape + (1,) * (len(shape) - 2)), shape).copy()
    points = ps.line_points_table
    done = 0
    bar = progress_bar(progress, total=games, desc=f"tables {ps.name}", unit="game")
    if features == "claims":
        from agents import _fast  # ImportError without numba: claims tables exist only for the compiled kernels
    while done < games:
        n = min(batch, games - done)
        eps = epsilon + (epsilon_end - epsilon) * done / games
        decks = np.argsort(rng.random((n, rules.deck_size)), axis=1)
        if features == "claims":
            add_s, add_c = _compiled_batch(_fast, values, decks, rules, points, eps, 1, rng)
            sums.reshape(-1)[:] += add_s
            counts.reshape(-1)[:] += add_c
            values = _finish(sums, counts, prior, ps, blend)
            done += n
            if bar is not None:
                bar.update(n)
            continue
        add_s, add_c = _numpy_batch(values, decks, rules, points, eps, rng)
        sums.reshape(-1)[:] += add_s
        counts.reshape(-1)[:] += add_c
        values = _finish(sums, counts, prior, ps, blend)
        done += n
        if bar is not None:
            bar.update(n)
    if bar is not None:
        bar.close()
    return ValueTables(values, counts, ps, rules, games, seed)


MAX_PHASES = 26  # one phase per number of cards placed (0-25) at most: more would leave phases no game visits


def check_phases(phases: Any) -> int:
    """``phases`` as an int from 1 to :data:`MAX_PHASES`, or a ValueError naming it."""
    from agents.evaluation import check_count

    return check_count(phases, "phases", MAX_PHASES, f"expected an integer from 1 to {MAX_PHASES} (a phase per number "
                                                     f"of cards placed at most; more phases would never be visited)")


def _check_exploration(epsilon: Any, epsilon_end: Any, blend: Any) -> None:
    """A ``ValueError`` naming them unless ``0 <= epsilon, epsilon_end <= 1`` and ``blend`` is a finite number > 0
    (``blend=0`` would divide unvisited entries' zero sums by zero counts: NaN tables)."""
    def number(x: Any) -> bool:
        return not isinstance(x, bool) and isinstance(x, (int, float, np.integer, np.floating)) and np.isfinite(x)

    if not (number(epsilon) and number(epsilon_end) and number(blend) and 0.0 <= epsilon <= 1.0
            and 0.0 <= epsilon_end <= 1.0 and blend > 0):
        raise ValueError(f"epsilon={epsilon!r}, epsilon_end={epsilon_end!r}, blend={blend!r}: expected numbers with "
                         "0 <= epsilon, epsilon_end <= 1 and blend > 0")


def _numpy_batch(values, decks, rules, points, eps, rng):
    """One batch of numpy self-play (:meth:`agents.batch.Batch.play_out`, one ply) on ``decks``, exploring with
    probability ``eps``: the flat sums of final line points and the visit counts it adds to a table of ``values``'
    shape, as :func:`_compiled_batch` gives them (``tests/test_fast.py`` plays both greedily on the same decks)."""
    phases = values.shape[2]
    b = Batch(len(decks), placement=rules.placement, first_cell=rules.first_cell)
    record: list = []
    b.play_out(decks, values, rng=rng, epsilon=eps, record=record)
    final = points[b.keys()]  # (n, 10)
    idx = []
    for entry in record:
        ph, keys = entry[0], entry[1]
        i = (keys * 2 + IS_COL) * phases + ph
        idx.append(i * values.shape[-1] + entry[2] if len(entry) == 3 else i)
    return _credit(np.concatenate(idx).ravel(), np.tile(final, (len(record), 1)).ravel(), values.size)


def _credit(idx: np.ndarray, weights: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """The sums of ``weights`` (final line points) and the visit counts per flat table entry ``idx``."""
    return np.bincount(idx, weights=weights, minlength=size), np.bincount(idx, minlength=size)


def _compiled_batch(fast, values, decks, rules, points, eps, ply, rng):
    """One batch of compiled self-play (:func:`agents._fast.self_play`) on ``decks``, exploring with probability
    ``eps``: the flat sums of final line points and the visit counts it adds to a table of ``values``' shape."""
    n = len(decks)
    rec, final = fast.self_play(values, decks, ply=ply, explore=rng.random((n, 25)) < eps, noise=rng.random((n, 25)),
                                points=points, adjacent=rules.placement == "adjacent", first_cell=rules.first_cell)
    return _credit(rec.ravel(), np.repeat(final[:, None, :], 25, axis=1).ravel(), values.size)


def improve_tables(
    base: ValueTables,
    *,
    games: int = 200_000,
    ply: int = 2,
    epsilon: float = 0.5,
    epsilon_end: float = 0.02,
    blend: float = 20.0,
    batch: int = 2048,
    seed: int = 1,
    progress: bool = False,
) -> ValueTables:
    """One round of policy iteration: re-learn ``base``'s values from ``games`` games of ``ply``-ply expectimax on it.

    :func:`train_tables` learns what a line is worth when the *one-ply* greedy policy plays on; the agents then
    search two plies deep, so they act on values of a weaker player than themselves.  Here ``games`` games are
    played by ``ply``-ply expectimax on ``base`` (a random legal cell with a probability decaying linearly from
    ``epsilon`` to ``epsilon_end``, as in :func:`train_tables`), every visited
    line abstraction is credited with the points its line ends with, and the new value is the average of those,
    blended towards ``base``'s value with weight ``blend`` games where visits are few.  Complete lines keep their
    exact points.  Needs numba (the ``fast`` extra): games run in compiled loops on every core
    (:func:`agents._fast.self_play`); about 2 ms a game per core for ``ply=2``.
    """
    from agents import _fast
    from agents.evaluation import check_positive_int, check_seed

    games, batch = check_positive_int(games, "games"), check_positive_int(batch, "batch")
    seed = check_seed(seed)
    if isinstance(ply, bool) or not isinstance(ply, (int, np.integer)) or ply not in (1, 2):
        raise ValueError(f"ply={ply!r}: expected 1 or 2")
    _check_exploration(epsilon, epsilon_end, blend)
    values = base.values
    _fast.tables_flat(values)  # raises for tables the kernels cannot read (features=straights)
    rules = base.rules
    rng = np.random.default_rng([seed, 78])
    sums = np.zeros(values.size)
    counts = np.zeros(values.size)
    points = base.system.line_points_table
    bar = progress_bar(progress, total=games, desc=f"policy iteration {base.system.name} ply={ply}", unit="game")
    done = 0
    while done < games:
        n = min(batch, games - done)
        eps = epsilon + (epsilon_end - epsilon) * done / games
        decks = np.argsort(rng.random((n, rules.deck_size)), axis=1)
        add_s, add_c = _compiled_batch(_fast, values, decks, rules, points, eps, ply, rng)
        sums += add_s
        counts += add_c
        done += n
        if bar is not None:
            bar.update(n)
    if bar is not None:
        bar.close()
    sums = sums.reshape(values.shape)
    counts = counts.reshape(values.shape)
    new = (sums + blend * values) / (counts + blend)
    complete = np.arange(NUM_KEYS) // 264 == 5
    new[complete] = values[complete]
    return ValueTables(new, counts, base.system, rules, games, seed, f"{base.policy}+ply={ply}x{games}")


def _digits_hint(value: Any, what: str) -> str:
    """A hint for a number given where a path was expected: specs read ``cache=123`` as the number 123."""
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return f" (a spec reads a name of digits as a number: give ./{value} for a {what} of that name)"
    return ""


def check_cache(cache: Any, name: str = "cache") -> str | os.PathLike | bool | None:
    """``cache`` if it is what :func:`load_or_train` takes (``True``, ``False``/``None`` or a folder as a ``str`` or
    ``os.PathLike``), else a ``ValueError`` naming it (``name``: what the message calls the option)."""
    if cache is None or isinstance(cache, (bool, str, os.PathLike)):
        return cache
    raise ValueError(f"{name}={cache!r}: expected true, false or a folder{_digits_hint(cache, 'folder')}")


def check_tables_path(tables: Any, name: str = "tables") -> str | os.PathLike | None:
    """``tables`` if it is ``None`` or the path of a tables file (``str`` or ``os.PathLike``), else a ``ValueError``
    naming it (``name``: what the message calls the option)."""
    if tables is None or isinstance(tables, (str, os.PathLike)):
        return tables
    raise ValueError(f"{name}={tables!r}: expected the path of a .npz written by ValueTables.save, or none"
                     f"{_digits_hint(tables, 'file')}")


def _cache_name(system: PointSystem, rules: Rules, games: int, phases: int, seed: int, features: str) -> str:
    # the points as floats: equal systems (2 and 2.0: a PointSystem built from ints, and point_system's floats) share
    # one cache file
    ident = json.dumps({"points": [float(p) for p in system.points], "rules": rules.to_json(), "games": games,
                        "phases": phases, "seed": seed, "features": features, "v": VERSION}, sort_keys=True)
    digest = hashlib.sha1(ident.encode()).hexdigest()[:16]
    safe = "".join(ch if ch.isalnum() or ch in "-_" else "_" for ch in system.name)[:40]
    return f"{safe}-{digest}.npz"


#: Tables trained in this process that no cache file holds (``cache=False``, or a folder that could not take them),
#: by the name their cache file has (point system and its values, rules, size, phases, seed, features): evaluation
#: builds a fresh agent for every chunk of deals, and each would train them again.  At most ``_TRAINED_MAX``, the
#: oldest dropped first.
_TRAINED: dict[str, ValueTables] = {}
_TRAINED_MAX = 4
_TRAINED_LOCK = threading.Lock()


def _copy_tables(tables: ValueTables) -> ValueTables:
    """``tables`` with copies of its arrays (what :data:`_TRAINED` keeps and hands out: a caller may write to them)."""
    return ValueTables(tables.values.copy(), tables.counts.copy(), tables.system, tables.rules, tables.games,
                       tables.seed, tables.policy)


def _save_or_warn(tables: ValueTables, path: str, folder: str) -> bool:
    """Save ``tables`` at ``path`` (in the cache ``folder``); whether it worked (else a ``RuntimeWarning`` says why)."""
    try:
        tables.save(path)
    except OSError as exc:  # an unwritable cache costs the caching, not the training just done
        warnings.warn(f"could not cache the value tables in {folder!r} ({type(exc).__name__}: {exc}): they are "
                      f"used uncached (kept in memory for this process only) and will be trained again by the next "
                      f"one; set POKERSQUARES_CACHE (or cache=) to a writable folder", RuntimeWarning, stacklevel=3)
        return False
    return True


def load_or_train(
    system: Any = "american",
    rules: Rules | dict[str, Any] | None = None,
    *,
    games: int = 300_000,
    phases: int = 6,
    seed: int = 0,
    features: str = "none",
    cache: str | os.PathLike | None | bool = True,
    progress: bool = False,
) -> ValueTables:
    """Cached tables for this point system and rules, trained (and cached) on first use.

    ``cache``: ``True`` for :func:`cache_dir`, a folder (a leading ``~`` is the home folder), or ``False`` for no
    file.  A cache entry that cannot be
    read (damaged, truncated, empty) or that holds tables trained for anything else than asked (another point system,
    rules, size, seed or features: a file copied there) is retrained and overwritten.  If the folder cannot take the
    new file (read-only, or a file of that name), a ``RuntimeWarning`` says so and the tables are returned uncached.
    Tables no file holds (``cache=False``, or an unwritable folder) are kept in memory for the rest of the process
    (the last few): asked for again, they are not retrained (a cache folder asked for then is offered them again).
    """
    ps = point_system(system)
    rules = Rules.parse(rules) if rules is not None else Rules()
    from agents.evaluation import check_positive_int, check_seed

    games, phases = check_positive_int(games, "games"), check_phases(phases)  # before the cache name
    seed = check_seed(seed)
    cache = check_cache(cache)
    features = "none" if features is None else features  # specs parse "features=none" as None
    if features not in FEATURES:
        raise ValueError(f"features={features!r}: expected one of {', '.join(FEATURES)}")
    folder = cache_dir() if cache is True else (os.path.expanduser(os.fspath(cache)) if cache else None)
    path = os.path.join(folder, _cache_name(ps, rules, games, phases, seed, features)) if folder else None
    why = ""
    if path and os.path.exists(path):
        try:
            cached = ValueTables.load(path)
        except ValueError as exc:  # a damaged cache entry is retrained and replaced
            why = f"; the cached file cannot be read ({exc}), so it is replaced"
        else:
            want = {"points": tuple(map(float, ps.points)), "rules": rules.to_json(), "phases": phases,
                    "features": features, "games": games, "seed": seed}
            got = {"points": tuple(map(float, cached.system.points)), "rules": cached.rules.to_json(),
                   "phases": cached.phases, "features": cached.features, "games": cached.games, "seed": cached.seed}
            wrong = [f"{key} {got[key]!r} (not {want[key]!r})" for key in want if got[key] != want[key]]
            if not wrong:
                return cached
            why = (f"; the cached file {path!r} holds tables trained for other {', '.join(wrong)}, so it is "
                   f"replaced")
    key = _cache_name(ps, rules, games, phases, seed, features)
    with _TRAINED_LOCK:
        kept = None if why else _TRAINED.get(key)
    if kept is not None:  # no cache file holds them, but this process trained them already
        tables = _copy_tables(kept)
        if path:  # a file holds them now too; the kept copy stays for later calls without a cache
            _save_or_warn(tables, path, folder)
        return tables

    print(f"training value tables for point system {ps.name!r}, rules {rules.to_json()}, features {features!r}, "
          f"{phases} phases ({games} self-play games)"
          + (f"; caching them in {folder}" if folder else "") + why, file=sys.stderr)
    start = time.perf_counter()
    tables = train_tables(ps, rules, games=games, phases=phases, seed=seed, features=features, progress=progress)
    tables.train_seconds = time.perf_counter() - start  # type: ignore[attr-defined]
    if not (path and _save_or_warn(tables, path, folder)):  # no file holds them: kept for this process
        kept = _copy_tables(tables)
        with _TRAINED_LOCK:
            _TRAINED.pop(key, None)
            _TRAINED[key] = kept
            while len(_TRAINED) > _TRAINED_MAX:
                del _TRAINED[next(iter(_TRAINED))]
    return tables


def load_tables_file(system: Any, rules: Any, path: Any, name: str = "tables") -> ValueTables:
    """The tables saved at ``path``, checked for a game of ``system`` and ``rules``: tables of other point values are
    a ``ValueError``; tables trained under other jokers than the game's a ``RuntimeWarning`` (their joker lines were
    rarely or never trained).  ``name`` is what the messages call the file's option."""
    path = check_tables_path(path, name)
    if path is None:
        raise ValueError(f"{name}=None: expected the path of a .npz written by ValueTables.save")
    system = point_system(system)
    vt = ValueTables.load(path)
    if tuple(vt.system.points) != tuple(system.points):
        raise ValueError(
            f"{name} {path!r} were trained for point system {vt.system.name!r} "
            f"{vt.system.as_dict()}, but the game uses {system.name!r} {system.as_dict()}"
        )
    jokers = Rules.parse(rules).jokers if rules is not None else 0
    if vt.rules.jokers != jokers:  # the joker states of the lines were never (or differently) trained
        warnings.warn(f"{name} {path!r} were trained with jokers={vt.rules.jokers}, but the game has "
                      f"jokers={jokers}: lines holding jokers are valued by entries that training saw rarely or "
                      f"never; train tables under the game's jokers for real play", RuntimeWarning, stacklevel=3)
    return vt


def tables_for(system: Any, rules: Any, *, tables: str | None, games: int, phases: int, features: str,
               cache: Any, tuned: Any = False, name: str = "tables",
               defaults: dict[str, Any] | None = None) -> "ValueTables":
    """The value tables an agent plays ``system`` with: the file ``tables`` (:func:`load_tables_file`: it must have
    been trained for the same point values), the shipped tuned tables (``tuned=True``,
    :func:`agents.tuning.tuned_tables`), or else :func:`load_or_train` with the other options.  ``name`` is what errors
    call the ``tables`` option; a ``tables`` or ``cache`` of another type (``tables=5``) is a ``ValueError`` naming it.

    With a file, ``games``, ``phases``, ``features`` and ``cache`` choose nothing: one given (not its value in
    ``defaults``, by default the ``expectimax`` agent's) that disagrees with the file (``features``, ``phases`` or
    ``games`` other than the file's; any ``cache``) is a ``ValueError`` naming it rather than silently ignored."""
    tables, cache = check_tables_path(tables, name), check_cache(cache)
    if not isinstance(tuned, bool):
        raise ValueError(f"tuned={tuned!r}: expected true or false")
    if tuned:
        if tables is not None:
            raise ValueError(f"tuned=true and {name}={tables!r}: give one or the other (tuned=true scales the "
                             "default tables by the shipped multipliers)")
        from agents.tuning import tuned_tables

        return tuned_tables(system, rules, games=games, phases=phases, features=features, cache=cache)
    if tables is None:
        return load_or_train(system, rules, games=games, phases=phases, features=features, cache=cache)
    if defaults is None:
        from agents.expectimax import DEFAULT_FEATURES, DEFAULT_GAMES, DEFAULT_PHASES

        defaults = {"games": DEFAULT_GAMES, "phases": DEFAULT_PHASES, "features": DEFAULT_FEATURES, "cache": True}
    vt = load_tables_file(system, rules, tables, name)
    given = {"games": games, "phases": phases, "features": "none" if features is None else features, "cache": cache}
    of_file = {"games": vt.games, "phases": vt.phases, "features": vt.features}
    refused = [f"{key}={value!r}" for key, value in given.items()
               if value != defaults.get(key, value) and (key == "cache" or value != of_file[key])]
    if refused:
        raise ValueError(
            f"{', '.join(refused)} with {name}={tables!r}: those options choose the tables trained when no file is "
            f"given, and the file holds tables of features={vt.features!r}, {vt.phases} phases, {vt.games} games "
            f"(nothing is trained or cached for it): drop them, or drop {name} to train tables with them")
    return vt
