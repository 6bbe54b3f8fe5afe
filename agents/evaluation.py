"""Common-deal evaluation of agents: the Python API behind ``pokersquares evaluate``.

Design (so that other back ends plug in):

1. Deal ``i`` of seed ``S`` is the deck drawn from ``numpy.random.default_rng([S, i])``
   (:func:`deal_deck`); every agent plays the same deals (common random numbers),
   and the agent's own generator is re-seeded per deal from ``[S, i, 1]``, so a
   game's result does not depend on how deals are split over processes.
2. Work is cut into chunks; each chunk is the pure function
   :func:`run_chunk` ``(agent_spec, deals, config) -> list of per-game records``,
   which builds the agent itself (so it runs in any process or on any Ray worker).
3. A back end maps chunks to records: ``"local"`` runs them in this process
   (``jobs=1``) or in a pool of worker processes (``concurrent.futures``: a worker that dies stops the evaluation
   with :class:`WorkerLostError`, where ``multiprocessing.Pool`` waited forever).  :func:`register_backend` adds
   others (``"ray"`` is looked up in ``agents.distributed:run_chunks`` when asked for;
   it streams records game by game through :func:`iter_chunk`).
4. :class:`EvaluationResult` computes every figure from the records alone.

A game that raises is recorded with ``"error"`` (the message and the deal);
the agent goes on with the next deal and the other agents are unaffected.
"""

from __future__ import annotations

import contextlib
import csv
import importlib
import inspect
import io
import json
import math
import os
import sys
import time
import traceback
import warnings
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from agents.stats import fmt as figure
from agents.stats import mean_ci95
from pokersquares_env._files import replace_text
from pokersquares_env._progress import check_progress, progress_bar
from pokersquares_env.core import PokerSquaresGame, Rules
from pokersquares_env.scoring import (
    CATEGORY_KEYS,
    POINT_SYSTEMS,
    PointSystem,
    add_points,
    point_system,
    points_level,
)

__all__ = [
    "EvalConfig",
    "EvaluationResult",
    "ameritish_points",
    "check_out_dir",
    "check_positive_int",
    "check_seed",
    "deal_deck",
    "evaluate",
    "PPSResult",
    "PlotsSkippedWarning",
    "clear_outputs",
    "evaluate_pps",
    "iter_chunk",
    "local_workers",
    "usable_cpus",
    "WorkerLostError",
    "make_chunks",
    "JOURNAL",
    "resumable_games",
    "refuse_journal",
    "refuse_other_kind",
    "pps_systems",
    "register_backend",
    "run_chunk",
    "summarize",
]


# --------------------------------------------------------------------------- deals and chunks


@dataclass(frozen=True)
class EvalConfig:
    """Everything a chunk needs besides the agent spec: JSON-ready, so it crosses process boundaries."""

    seed: int = 0
    scoring: Any = "american"  # a point-system spec; stored as its JSON form
    rules: dict[str, Any] = field(default_factory=dict)

    def game(self) -> PokerSquaresGame:
        """The game these deals are played in."""
        return PokerSquaresGame(Rules(**self.rules), point_system(self.scoring))


def deal_deck(seed: int, index: int, rules: Rules | dict[str, Any] | None = None) -> tuple[int, ...]:
    """The deck of deal ``index`` under ``seed`` (identical for every agent and every back end)."""
    rules = Rules(**rules) if isinstance(rules, dict) else (rules or Rules())
    return PokerSquaresGame(rules).deal(np.random.default_rng([int(seed), int(index)]))


def _agent_seed(seed: int, index: int) -> int:
    return int(np.random.SeedSequence([int(seed), int(index), 1]).generate_state(1)[0])


def run_chunk(agent_spec: str, deals: Sequence[int], config: EvalConfig | dict[str, Any]) -> list[dict[str, Any]]:
    """Play ``agent_spec`` on the given deal indices; one record per deal (pure: depends on its arguments only).

    A record holds ``agent, deal, deck, placements, score, scores {american,
    english}, hands, seconds`` and, when the game raised, ``error``.
    """
    return list(iter_chunk(agent_spec, deals, config))


def iter_chunk(agent_spec: str, deals: Sequence[int], config: EvalConfig | dict[str, Any]) -> Iterator[dict[str, Any]]:
    """:func:`run_chunk` one record at a time, each yielded as soon as its game ends (for streaming back ends)."""
    from agents.registry import make_agent
    from pokersquares_env.env import encode_observation, mask_array

    if isinstance(config, dict):
        config = EvalConfig(**config)
    game = config.game()
    try:
        agent = make_agent(agent_spec, system=game.system, rules=game.rules, seed=config.seed)
    except Exception as exc:  # noqa: BLE001 - reported per deal, other agents go on
        msg = f"could not build agent {agent_spec!r}: {type(exc).__name__}: {exc}"
        for i in deals:
            yield _error_record(agent_spec, i, deal_deck(config.seed, i, game.rules), [], msg, 0.0)
        return
    for i in deals:
        deck = deal_deck(config.seed, i, game.rules)
        state = game.init(deck, validate=False)
        start = time.perf_counter()
        try:
            agent.seed(_agent_seed(config.seed, i))
            agent.reset()
            while not state.terminal:
                mask = game.legal_mask(state)
                obs = encode_observation(game, state) if agent.uses_obs else None
                info = {"action_mask": mask_array(mask), "card": state.card}
                cell = agent.act(obs, info, game, state.copy())
                game.apply(state, int(cell) if isinstance(cell, (int, np.integer)) else cell)
        except Exception as exc:  # noqa: BLE001
            tb = traceback.extract_tb(exc.__traceback__)
            where = f" at {tb[-1].filename}:{tb[-1].lineno}" if tb else ""
            msg = f"{type(exc).__name__}: {exc}{where} (deal {i}, move {state.num_placed + 1})"
            yield _error_record(agent_spec, i, deck, state.placements, msg, time.perf_counter() - start)
            continue
        seconds = time.perf_counter() - start
        yield (
            {
                "agent": agent_spec,
                "deal": int(i),
                "deck": list(deck),
                "placements": list(state.placements),
                "score": game.score(state),
                "scores": {"american": game.score(state, "american"), "english": game.score(state, "english")},
                "hands": game.hands(state),
                "seconds": seconds,
            }
        )


def _game_record(game: PokerSquaresGame, seed: int, r: dict[str, Any]) -> dict[str, Any]:
    """The game-record JSON form of one evaluation record (what ``games.jsonl`` and the journal hold)."""
    from pokersquares_env.records import GameRecord

    meta = {"deal": r["deal"], "seconds": r["seconds"], "eval_seed": seed}
    if "error" in r:
        meta["error"] = r["error"]
    return GameRecord(game.rules, game.system, list(r["deck"]), list(r["placements"]), seed=None, agent=r["agent"],
                      meta=meta).to_dict()


def _error_record(agent: str, i: int, deck: Sequence[int], placements: Sequence[int], msg: str, secs: float) -> dict:
    return {"agent": agent, "deal": int(i), "deck": list(deck), "placements": list(placements), "error": msg,
            "seconds": secs}


def make_chunks(agent_specs: Sequence[str], games: int, chunk_size: int,
                done: Iterable[tuple[str, int]] = ()) -> list[tuple[str, list[int]]]:
    """``(agent_spec, deal indices)`` work units of at most ``chunk_size`` deals covering every agent and deal, but
    the ``(agent_spec, deal)`` pairs in ``done``."""
    done = set(done)
    out = []
    for spec in agent_specs:
        deals = [i for i in range(games) if (spec, i) not in done]
        for lo in range(0, len(deals), chunk_size):
            out.append((spec, deals[lo:lo + chunk_size]))
    return out


# --------------------------------------------------------------------------- back ends

ChunkTask = tuple[str, list[int], dict[str, Any]]
Backend = Callable[..., Iterator[list[dict[str, Any]]]]
_BACKENDS: dict[str, Any] = {"ray": "agents.distributed:run_chunks"}


def register_backend(name: str, target: str | Backend) -> None:
    """Add a back end: ``target(tasks, *, jobs) -> iterator of record lists`` (``"module:function"`` or a callable).

    ``tasks`` is a list of ``(agent_spec, deal indices, config dict)``; each
    must be run through :func:`run_chunk`.  Results may come in any order.
    """
    _BACKENDS[name] = target


class WorkerLostError(RuntimeError):
    """A back end lost the process (or Ray worker) playing a chunk and gave up on its deals: the evaluation stopped.
    The local back end gives up at once (its pool cannot replay a chunk); the Ray one after its retries."""


def _call_chunk(task: ChunkTask) -> list[dict[str, Any]]:
    return run_chunk(*task)


def _local(tasks: list[ChunkTask], *, jobs: int = 1) -> Iterator[list[dict[str, Any]]]:
    if jobs <= 1 or len(tasks) <= 1:
        for task in tasks:
            with _one_torch_thread():  # as a pool worker plays (_one_thread_each): seconds per game are one core's
                records = _call_chunk(task)
            yield records
        return
    import multiprocessing as mp
    from concurrent.futures import ProcessPoolExecutor, as_completed, wait
    from concurrent.futures.process import BrokenProcessPool

    ctx = mp.get_context("spawn" if os.name == "nt" else "fork")
    workers = min(jobs, len(tasks))
    # Not multiprocessing.Pool: a Pool replaces a worker that dies (killed for memory, crashed) and waits forever
    # for the chunk it held; an executor reports the loss (BrokenProcessPool).
    pool = ProcessPoolExecutor(max_workers=workers, mp_context=ctx, initializer=_one_thread_each)
    finished = False
    try:
        futures = {pool.submit(_call_chunk, task): task for task in tasks}
        for future in as_completed(futures):
            try:
                records = future.result()
            except BrokenProcessPool:
                wait(futures)  # the executor fails every chunk left once a worker is lost
                lost = [futures[f] for f in futures if f.exception() is not None]
                raise WorkerLostError(_lost_workers_message(lost, workers)) from None
            yield records
        finished = True
    finally:
        if not finished:  # stopped early (an error, Ctrl-C, a lost worker): stop the workers, as Pool's exit did
            _terminate_workers(pool)
        pool.shutdown(wait=True, cancel_futures=True)


def _terminate_workers(pool: Any) -> None:
    """Stop the worker processes of a ``ProcessPoolExecutor`` now (their chunks are not waited for)."""
    terminate = getattr(pool, "terminate_workers", None)  # Python 3.14
    if callable(terminate):
        terminate()
        return
    for proc in list((getattr(pool, "_processes", None) or {}).values()):
        try:
            proc.terminate()
        except (OSError, ValueError):  # already gone, or closed
            pass


def _deal_ranges(deals: Iterable[int]) -> str:
    """Deal indices as ranges: ``0-49, 100-149, 200``."""
    out: list[list[int]] = []
    for d in sorted({int(d) for d in deals}):
        if out and out[-1][1] == d - 1:
            out[-1][1] = d
        else:
            out.append([d, d])
    return ", ".join(str(lo) if lo == hi else f"{lo}-{hi}" for lo, hi in out)


def _lost_workers_message(lost: list[ChunkTask], workers: int) -> str:
    """Why a local evaluation stopped: a worker process died; the agents and deals that got no records."""
    deals: dict[str, list[int]] = {}
    for spec, chunk, _config in lost:
        deals.setdefault(spec, []).extend(chunk)
    which = "; ".join(f"agent {spec!r} deals {_deal_ranges(d)}" for spec, d in deals.items())
    return (f"a worker process of the local back end ({workers} workers) died before its chunk ended (killed, e.g. "
            f"for lack of memory, or crashed), so the evaluation stopped with no records for {which}: run it with "
            f"fewer jobs (each worker holds its own agent and its tables in memory) or on a machine with more memory")


def _one_thread_each() -> None:
    """Start a pool worker: one torch thread, if this process has torch.

    A forked child inherits the parent's OpenMP/MKL thread pool in a broken state: once the parent has run a
    threaded torch operation (building a ``ppo:`` agent initialises its weights with a threaded QR), the child's
    next one waits forever for threads it does not have.  One thread per worker also keeps ``jobs`` workers from
    oversubscribing the cores, and keeps seconds per game per core.
    """
    import signal

    # a forked worker inherits the command's SIGTERM handler (agents/evaluate.py turns SIGTERM into a stop that
    # keeps the finished games); a worker is stopped by SIGTERM (_terminate_workers), so it takes the default again
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
    else:  # a spawned worker (Windows): torch, if an agent loads it, reads these when it is imported
        os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = "1"


@contextlib.contextmanager
def _one_torch_thread() -> Iterator[None]:
    """Play in this process on one torch thread, as a pool worker does (:func:`_one_thread_each`), and give torch its
    thread count back after (an error too).

    Torch's default, one thread per core, makes a learned agent's small forward passes many times slower once the
    cores are busy, so ``jobs=1`` timed more than one core's work.  Torch is not imported here: where no agent has
    loaded it there is nothing to set.
    """
    torch = sys.modules.get("torch")
    before = torch.get_num_threads() if torch is not None and hasattr(torch, "set_num_threads") else 1
    if before != 1:
        torch.set_num_threads(1)
    try:
        yield
    finally:
        if before != 1:
            torch.set_num_threads(before)


def check_backend_name(name: str) -> None:
    """A ``ValueError`` naming ``name`` unless it is ``local`` or a registered back end (nothing is imported)."""
    if name != "local" and name not in _BACKENDS:
        raise ValueError(f"unknown backend {name!r}: expected one of {', '.join(['local', *_BACKENDS])}")


def _backend(name: str) -> Backend:
    if not isinstance(name, str):
        raise TypeError(f"backend={name!r}: expected the name of a back end, one of "
                        f"{', '.join(['local', *_BACKENDS])}")
    if name == "local":
        return _local
    check_backend_name(name)
    target = _BACKENDS[name]
    if callable(target):
        return target
    module, func = target.split(":")
    try:
        return getattr(importlib.import_module(module), func)
    except (ImportError, AttributeError) as exc:
        raise ImportError(
            f"backend {name!r} ({target}) is not available: {exc}; for Ray: pip install \"pokersquares_env[distributed]\""
        ) from exc


# --------------------------------------------------------------------------- results


def _stats(values: Sequence[float]) -> dict[str, float]:
    a = np.asarray(values, dtype=np.float64)
    n = a.size
    if n == 0:
        return {"mean": math.nan, "std": math.nan, "ci95": math.nan, "min": math.nan, "max": math.nan}
    std = float(a.std(ddof=1)) if n > 1 else math.nan  # one value has no spread to estimate (JSON null)
    return {
        "mean": float(a.mean()),
        "std": std,
        "ci95": mean_ci95(a),
        "min": float(a.min()),
        "max": float(a.max()),
    }


def summarize(records: Iterable[dict[str, Any]], agent: str, system: Any) -> dict[str, Any]:
    """The summary row of one agent's records under ``system`` (the point system the games were played for)."""
    ps = point_system(system)
    recs = [r for r in records if r["agent"] == agent]
    ok = [r for r in recs if "error" not in r]
    scores = [r["score"] for r in ok]
    row: dict[str, Any] = {"agent": agent, "games": len(ok), "errors": len(recs) - len(ok), "scoring": ps.name}
    row.update(_stats(scores))
    thr = ps.win_threshold
    row["win_rate"] = float(np.mean(ps.won(np.asarray(scores, dtype=np.float64)))) if scores and thr is not None \
        else math.nan
    row["seconds_per_game"] = float(np.mean([r["seconds"] for r in ok])) if ok else math.nan
    for name in ("american", "english"):
        st = _stats([r["scores"][name] for r in ok])
        row[f"mean_{name}"] = st["mean"]
        row[f"ci95_{name}"] = st["ci95"]
    return row


class _FilePlots:
    """The part of ``matplotlib.pyplot`` our saved plots use, without pyplot's global state.

    ``subplots`` makes a :class:`matplotlib.figure.Figure` that is not registered with pyplot,
    so saving plots neither switches the process's backend (a notebook's inline plots keep
    working after :func:`evaluate` or ``train``) nor opens a window or leaks a figure."""

    def __init__(self, matplotlib: Any) -> None:
        import matplotlib.cm
        import matplotlib.figure

        self._figure = matplotlib.figure.Figure
        self.cm = matplotlib.cm
        self.rcParams = matplotlib.rcParams

    def subplots(self, nrows: int = 1, ncols: int = 1, *, figsize: Any = None, layout: str | None = None,
                 **kwargs: Any) -> tuple[Any, Any]:
        fig = self._figure(figsize=figsize, layout=layout)
        return fig, fig.subplots(nrows, ncols, **kwargs)

    @staticmethod
    def close(fig: Any) -> None:
        """Nothing to do: the figure is not held by pyplot, and goes with its last reference."""


def pyplot(what: str = "plots") -> Any:
    """File-only figures (``subplots``, ``close``, ``cm``, ``rcParams``), or an ImportError naming the ``plot`` extra.

    The process's matplotlib backend is left as it is (see :class:`_FilePlots`)."""
    try:
        import matplotlib
    except ImportError as exc:
        raise ImportError(f'{what} need matplotlib: pip install "pokersquares_env[plot]"') from exc
    return _FilePlots(matplotlib)


def _mean_counting_failures(row: dict[str, Any], failed: float) -> float:
    """The mean score of a summary ``row`` over every deal, each game that raised counted at ``failed``."""
    games, errors = row["games"], row["errors"]
    if not errors:
        return row["mean"]
    return ((row["mean"] * games if games else 0.0) + failed * errors) / (games + errors)


class PlotsSkippedWarning(UserWarning):
    """:meth:`EvaluationResult.save` wrote every result but the plots, which need matplotlib (the ``plot`` extra)."""


@contextlib.contextmanager
def plots_skipped_said_by(command: str) -> Iterator[None]:
    """Within it, a :class:`PlotsSkippedWarning` is one line on stderr, ``"{command}: warning: ..."`` (the command
    line's way to say plots were skipped without matplotlib); other warnings show as usual."""
    shown = warnings.showwarning

    def show(message, category, filename, lineno, file=None, line=None):  # as warnings.showwarning
        if issubclass(category, PlotsSkippedWarning):
            print(f"{command}: warning: {message}", file=sys.stderr)
        else:
            shown(message, category, filename, lineno, file, line)

    with warnings.catch_warnings():  # restores the filters and showwarning on the way out
        warnings.simplefilter("always", PlotsSkippedWarning)
        warnings.showwarning = show
        yield


@dataclass
class EvaluationResult:
    """Per-game records of an evaluation and every figure computed from them."""

    agents: list[str]
    records: list[dict[str, Any]]
    config: dict[str, Any]
    games: int
    #: how many of the games were reused from the output folder (``resume=True``) rather than played
    resumed: int = 0

    @property
    def system(self):
        """The point system the games were played for."""
        return point_system(self.config["scoring"])

    @property
    def summary(self) -> list[dict[str, Any]]:
        """One row per agent: agent, games, errors, scoring, mean, std, ci95, min, max, win_rate,
        seconds_per_game, mean_american, ci95_american, mean_english, ci95_english."""
        return [summarize(self.records, a, self.system) for a in self.agents]

    @property
    def errors(self) -> list[dict[str, Any]]:
        """``{agent, deal, error}`` of every game that raised."""
        return [{"agent": r["agent"], "deal": r["deal"], "error": r["error"]} for r in self.records if "error" in r]

    def _score_system(self, system: str | None) -> str | None:
        """``system`` as a key of a record's ``scores`` (``'american'``/``'english'``, in any case), or None for the
        played system (None or its name); a ValueError naming the choices for anything else."""
        if system is None:
            return None
        if isinstance(system, str):
            key = system.lower()
            if key in ("american", "english"):
                return key
            if key == self.system.name.lower():
                return None
        raise ValueError(f"system={system!r}: expected None or {self.system.name!r} (the played system), "
                         f"'american' or 'english'")

    def scores(self, agent: str, system: str | None = None) -> dict[int, float]:
        """Deal index -> score of ``agent`` (under the played system, or ``'american'``/``'english'``)."""
        key = self._score_system(system)
        return {
            r["deal"]: (r["score"] if key is None else r["scores"][key])
            for r in self.records
            if r["agent"] == agent and "error" not in r
        }

    def hand_frequencies(self) -> dict[str, dict[str, dict[str, float]]]:
        """Per agent, per line kind (``rows``, ``columns``, ``all``): share of lines ending in each hand category."""
        out: dict[str, dict[str, dict[str, float]]] = {}
        for agent in self.agents:
            counts = {kind: dict.fromkeys(CATEGORY_KEYS, 0) for kind in ("rows", "columns", "all")}
            n = 0
            for r in self.records:
                if r["agent"] != agent or "error" in r:
                    continue
                n += 1
                for i, hand in enumerate(r["hands"]):
                    counts["rows" if i < 5 else "columns"][hand] += 1
                    counts["all"][hand] += 1
            out[agent] = {
                kind: {h: (c / (n * (10 if kind == "all" else 5)) if n else math.nan) for h, c in cnt.items()}
                for kind, cnt in counts.items()
            }
        return out

    def paired(self, system: str | None = None) -> list[dict[str, Any]]:
        """Mean score difference of every pair of agents on their common deals, with a 95% CI."""
        key = self._score_system(system)
        out = []
        for i, a in enumerate(self.agents):
            for b in self.agents[i + 1:]:
                sa, sb = self.scores(a, key), self.scores(b, key)
                common = sorted(set(sa) & set(sb))
                d = np.array([sa[k] - sb[k] for k in common], dtype=np.float64)
                st = _stats(d)
                # who did better: scores compared to 9 decimals, as ties and wins are everywhere (points_level)
                sign = np.sign([points_level(sa[k]) - points_level(sb[k]) for k in common])
                out.append({
                    "a": a, "b": b, "deals": len(common), "scoring": key or self.system.name,
                    "mean_diff": st["mean"], "std_diff": st["std"], "ci95": st["ci95"],
                    "a_better": int((sign > 0).sum()), "ties": int((sign == 0).sum()),
                    "b_better": int((sign < 0).sum()),
                })
        return out

    # ---- output --------------------------------------------------------------
    def table(self, fmt: str = "markdown") -> str:
        """The summary as a Markdown table (``fmt="markdown"``) or CSV (``fmt="csv"``)."""
        rows = self.summary
        cols = ["agent", "games", "errors", "scoring", "mean", "std", "ci95", "min", "max", "win_rate",
                "seconds_per_game", "mean_american", "ci95_american", "mean_english", "ci95_english"]
        if fmt == "csv":
            buf = io.StringIO()
            w = csv.DictWriter(buf, fieldnames=cols, extrasaction="ignore", lineterminator="\n")
            w.writeheader()
            w.writerows(rows)
            return buf.getvalue()
        if fmt != "markdown":
            raise ValueError(f"fmt={fmt!r}: expected 'markdown' or 'csv'")

        def cell(v: Any) -> str:  # 'n/a' for a figure that cannot be computed (the std of one game; CSV keeps nan)
            return figure(v, ".3f") if isinstance(v, float) else str(v)

        lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
        lines += ["| " + " | ".join(cell(r[c]) for c in cols) + " |" for r in rows]
        return "\n".join(lines) + "\n"

    def brief(self) -> str:
        """One line per agent: ``AGENT: MEAN +- CI95 (S s a game, N errors)``, for scripts that print a result."""
        return "".join(f"{r['agent']}: {figure(r['mean'])} +- {figure(r['ci95'])} "
                       f"({figure(r['seconds_per_game'], '.3f')} s a game, {r['errors']} errors)\n" for r in self.summary)

    def json_lines(self) -> str:
        """One JSON object per agent (the summary rows), one per line."""
        return "".join(json.dumps(_jsonable(r)) + "\n" for r in self.summary)

    def game_records(self) -> Iterator[dict[str, Any]]:
        """Per-game records in the package's game-record JSON form (plus ``deal``, ``seconds`` and ``eval_seed`` in
        ``meta``)."""
        game = EvalConfig(**self.config).game()
        for r in sorted(self.records, key=lambda r: (self.agents.index(r["agent"]), r["deal"])):
            yield _game_record(game, self.config["seed"], r)

    def save(self, out_dir: str | os.PathLike, *, plots: bool = True) -> list[str]:
        """Write records (JSONL), summary (Markdown, CSV, JSON), hand frequencies, paired comparisons and plots,
        after :data:`MARKER` (``evaluation.json``: the agents, games, seed, point system and rules).

        An earlier evaluation's outputs in ``out_dir`` are removed first (:func:`clear_outputs`: only the files and
        ``--pps`` per-system folders an evaluation writes, so none of an earlier run is left beside this one's).
        Without matplotlib the plots are skipped with a :class:`PlotsSkippedWarning` naming the extra to install."""
        clear_outputs(out_dir)
        os.makedirs(out_dir, exist_ok=True)
        written = [_write_marker(out_dir, {"agents": self.agents, "games": self.games, **self.config})]

        def write(name: str, text: str) -> None:
            path = os.path.join(out_dir, name)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
            written.append(path)

        # the played system's comparisons, then American and English where they are other systems (not twice)
        paired = self.paired() + [p for s in ("american", "english") if s != self.system.name
                                  for p in self.paired(s)]
        texts = {
            "games.jsonl": lambda: "".join(json.dumps(d, ensure_ascii=False) + "\n" for d in self.game_records()),
            "summary.md": lambda: self.table("markdown"),
            "summary.csv": lambda: self.table("csv"),
            "summary.json": lambda: json.dumps(_jsonable(self.summary), indent=2) + "\n",
            "hands.json": lambda: json.dumps(_jsonable(self.hand_frequencies()), indent=2) + "\n",
            "hands.csv": self._hands_csv,
            "paired.json": lambda: json.dumps(_jsonable(paired), indent=2) + "\n",
            "errors.json": lambda: json.dumps(self.errors, indent=2) + "\n",
        }
        for name in RESULT_FILES:  # the names check_out_dir recognises as an evaluation's own
            write(name, texts[name]())
        if plots:
            try:
                written += self.plot(out_dir)
            except ImportError as exc:  # the results are written: the plots are an extra
                warnings.warn(PlotsSkippedWarning(f"{' and '.join(PLOT_FILES)} not written: {exc}"), stacklevel=2)
        return written

    def _hands_csv(self) -> str:
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(["agent", "lines", *CATEGORY_KEYS])
        for agent, kinds in self.hand_frequencies().items():
            for kind, freq in kinds.items():
                w.writerow([agent, kind, *(f"{freq[h]:.5f}" for h in CATEGORY_KEYS)])
        return buf.getvalue()

    def plot(self, out_dir: str | os.PathLike) -> list[str]:
        """Save ``scores.png`` (score distribution per agent) and ``hands.png`` (hand frequencies)."""
        paths = []
        for name, fig in ((SCORES_PLOT, self.scores_figure()), (HANDS_PLOT, self.hands_figure())):
            paths.append(os.path.join(out_dir, name))
            fig.savefig(paths[-1], dpi=100)
        return paths

    def scores_figure(self) -> Any:
        """The figure of ``scores.png``: each agent's scores as a histogram, the agents' legend below the axes."""
        played = [(agent, d) for agent in self.agents if (d := list(self.scores(agent).values()))]
        labels = [f"{agent} (mean {np.mean(d):.1f})" for agent, d in played]
        fig, ax = figure_with_legend_below((8, 4.5), labels)
        lo = min((min(d) for _, d in played), default=0)
        hi = max((max(d) for _, d in played), default=1)
        bins = np.linspace(lo, hi + 1, 40)
        for (_, d), label in zip(played, labels, strict=True):
            ax.hist(d, bins=bins, alpha=0.5, label=legend_label(label))
        ax.set_xlabel(f"score ({self.system.name})")
        ax.set_ylabel("games")
        ax.set_title(f"Score distribution, {self.games} common deals, seed {self.config['seed']}")
        if played:
            legend_below(fig, ax)
        return fig

    def hands_figure(self) -> Any:
        """The figure of ``hands.png``: each agent's share of lines per hand category, the legend below the axes."""
        freqs = self.hand_frequencies()
        fig, ax = figure_with_legend_below((10, 4.5), list(self.agents))
        cats = list(CATEGORY_KEYS)
        width = 0.8 / max(1, len(self.agents))
        x = np.arange(len(cats))
        shares = [[freqs[agent]["all"][c] for c in cats] for agent in self.agents]
        for j, (agent, share) in enumerate(zip(self.agents, shares, strict=True)):
            ax.bar(x + j * width, share, width, label=legend_label(agent))
        ax.set_xticks(x + 0.4 - width / 2, [c.replace("_", " ") for c in cats], rotation=30, ha="right")
        ax.set_ylabel("share of lines")
        if any(v > 0 for share in shares for v in share):  # every game raised: nothing to put on a log scale
            ax.set_yscale("log")
        ax.set_title("Hand frequencies per line")
        legend_below(fig, ax)
        return fig


#: the longest line of a legend entry in the evaluation plots; a longer agent spec (a tables path, say) is folded
LEGEND_WIDTH = 60


def legend_label(text: str, width: int = LEGEND_WIDTH) -> str:
    """``text`` folded onto lines of at most ``width`` characters, after a ',', '/', ':' or space where one falls
    within the line (else at the width), so that a long agent spec does not push the plot off its figure."""
    lines = []
    while len(text) > width:
        cut = max(text.rfind(sep, 0, width) for sep in ",/: ")
        cut = cut + 1 if cut > 0 else width
        lines.append(text[:cut].rstrip())
        text = text[cut:].lstrip()
    return "\n".join([*lines, text])


def _legend_columns(labels: list[str]) -> int:
    """Columns of a legend below the axes: three short labels a row, one long one."""
    return 1 if any(len(t) > LEGEND_WIDTH // 2 for t in labels) else max(1, min(3, len(labels)))


def figure_with_legend_below(size: tuple[float, float], labels: list[str]) -> tuple[Any, Any]:
    """A figure of ``size`` (inches) plus the height its legend of ``labels`` takes below the axes (constrained
    layout: the axes keep their size however many agents, and however long their specs, the legend lists)."""
    columns = _legend_columns(labels)
    rows = [labels[i:i + columns] for i in range(0, len(labels), columns)]
    lines = sum(max(legend_label(t).count("\n") + 1 for t in row) for row in rows)
    return pyplot().subplots(figsize=(size[0], size[1] + 0.2 + 0.22 * lines), layout="constrained")


def legend_below(fig: Any, ax: Any) -> None:
    """The axes' legend, outside them at the bottom of ``fig`` (it covers no bar and no tick label)."""
    handles, labels = ax.get_legend_handles_labels()
    fig.legend(handles, labels, loc="outside lower center", ncols=_legend_columns(labels), fontsize=9, frameon=False)


#: the files :meth:`EvaluationResult.save` writes besides :data:`MARKER`, in order, and :meth:`EvaluationResult.plot`'s
#: plots; :meth:`PPSResult.save` adds one such folder per point system (without the plots) and its two tables.
#: ``check_out_dir`` takes a folder holding only these (as an ``evaluate`` wrote before :data:`MARKER` existed) as an
#: evaluation's own.
RESULT_FILES = ("games.jsonl", "summary.md", "summary.csv", "summary.json", "hands.json", "hands.csv", "paired.json",
                "errors.json")
SCORES_PLOT, HANDS_PLOT = PLOT_FILES = ("scores.png", "hands.png")
PPS_TABLE, PPS_JSON = PPS_FILES = ("pps.md", "pps.json")


def _jsonable(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, (float, np.floating)):
        return None if math.isnan(x) else float(x)
    if isinstance(x, np.integer):
        return int(x)
    return x


# --------------------------------------------------------------------------- entry point


#: The most games one evaluation plays: it keeps every game's record in memory (about a kilobyte each), so more would
#: exhaust any machine's memory long before it finished; asked for more, it would sit silent while its deal indices
#: filled the memory.
MAX_GAMES = 10**8


def check_games(games: Any) -> int:
    """``games`` as an int: a positive integer up to :data:`MAX_GAMES`, else a ValueError naming it."""
    return check_count(games, "games", MAX_GAMES, f"expected at most {MAX_GAMES:,} (an evaluation keeps every game's "
                                                  f"record in memory)")


def check_count(value: Any, name: str, most: int, expected: str) -> int:
    """``value`` as a positive int up to ``most``, else a ValueError naming it (``expected``: what the message says
    above the bound)."""
    value = check_positive_int(value, name)
    if value > most:
        raise ValueError(f"{name}={value}: {expected}")
    return value


def check_positive_int(value: Any, name: str) -> int:
    """``value`` as an int, or a ValueError naming it: a count such as ``games`` or ``jobs`` (>= 1)."""
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < 1:
        raise ValueError(f"{name}={value!r}: expected a positive integer")
    return int(value)


def check_seed(seed: Any, name: str = "seed") -> int:
    """``seed`` as an int, or a ValueError naming it: deal seeds are integers >= 0 (what NumPy accepts)."""
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"{name}={seed!r}: expected an integer >= 0")
    return int(seed)


def _check_backend_options(name: str, run_tasks: Backend, options: Any) -> dict[str, Any]:
    """``options`` as a dict, or an error naming each option back end ``name`` does not take and those it does."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise TypeError(f"backend_options={options!r}: expected None or a dict of options for backend {name!r}")
    try:
        params = list(inspect.signature(run_tasks).parameters.values())
    except (TypeError, ValueError):  # no signature: let the call decide
        return dict(options)
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params):
        return dict(options)
    accepted = [p.name for p in params[1:]  # the first parameter is the task list
                if p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                and p.name != "jobs"]  # evaluate's own jobs= sets it
    unknown = [k for k in options if k not in accepted]
    if unknown:
        raise ValueError(f"backend_options: unknown option(s) {', '.join(map(repr, unknown))} for backend {name!r}, "
                         f"which takes {', '.join(accepted) if accepted else 'no options'} (jobs is evaluate's own)")
    return dict(options)


def _build_or_raise(spec: str, system: PointSystem, rules: dict[str, Any], seed: int, *, name_system: bool = False
                    ) -> None:
    """Build ``spec`` once, raising ``ValueError`` that names it (and the point system with ``name_system``) if it
    cannot be built (``ImportError`` as is)."""
    from agents.registry import make_agent

    try:
        make_agent(spec, system=system, rules=rules, seed=seed)
    except ImportError:
        raise
    except Exception as exc:  # noqa: BLE001 - any failure to build is a bad spec: no game could be played
        from agents.registry import without_spec

        message = without_spec(spec, str(exc))
        under = f" for point system {system.name!r}" if name_system else ""
        raise ValueError(f"agent spec {spec!r} cannot be built{under}: {type(exc).__name__}: {message}") from exc


def _connect_backend(run_tasks: Backend, specs: list[str], jobs: int, options: dict[str, Any]) -> None:
    """Let the back end check what it can before any agent is built or folder made: a back end (function) with a
    ``prepare(specs, *, jobs, **options)`` attribute is asked to (Ray connects here, so a bad address is named before
    the tables are trained, and refuses an agent its workers could not build)."""
    prepare = getattr(run_tasks, "prepare", None)
    if callable(prepare):
        prepare(list(specs), jobs=int(jobs), **options)


def _check_specs(agent_specs: Any, name: str = "agent_specs") -> list[str]:
    """The agent specs as a list, each naming an agent with known options and, for a saved model, an existing path:
    a ``ValueError`` (``TypeError``) naming the first that does not (builds nothing).  ``name``: what the repeat
    messages call the specs (``"--agent"`` for the command's option)."""
    from agents.registry import check_model_path, check_spec, spec_key

    if not isinstance(agent_specs, (str, Iterable)):
        raise TypeError(f"agent_specs={agent_specs!r}: expected an agent spec such as 'greedy' or a list of specs")
    specs = [agent_specs] if isinstance(agent_specs, str) else list(agent_specs)
    if not specs:
        raise ValueError("agent_specs is empty: expected at least one agent spec")
    for spec in specs:  # before the repeat check, which hashes them
        if not isinstance(spec, str):
            raise TypeError(f"agent_specs: {spec!r} ({type(spec).__name__}) is not an agent spec: expected a string "
                            f"such as 'greedy' or 'mc:rollouts=64'")
    cli = name.startswith("-")
    if len(set(specs)) != len(specs):
        twice = next(spec for spec in specs if specs.count(spec) > 1)
        raise ValueError(f"{name} {twice!r} is given twice: each agent must be named once" if cli else
                         f"{name} {specs} repeat a spec: each agent must be named once")
    for spec in specs:
        check_spec(spec)  # fail early on unknown names and options
        check_model_path(spec)  # and on a saved model that is not there
    seen: dict[Any, str] = {}
    for spec in specs:  # 'greedy' and 'Greedy ' (names are read in lower case), or options in another order
        key = spec_key(spec)
        if key in seen:
            where = f"{name} {seen[key]!r} and {name} {spec!r}" if cli else \
                f"{name} {specs} repeat an agent: {seen[key]!r} and {spec!r}"
            raise ValueError(f"{where} name the same agent (names are read in lower case, options in any order): "
                             f"each agent must be named once")
        seen[key] = spec
    return specs


def usable_cpus() -> int:
    """The CPUs this process may run on: its CPU affinity (``os.sched_getaffinity``, which ``taskset`` and container
    cpusets narrow) where the platform has it, else ``os.cpu_count()``; at least 1.  The one count behind the local
    ``--jobs`` cap, the sweep's check of ``cpus_per_trial`` and the demo's torch threads."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # no affinity on this platform (macOS, Windows)
        return max(1, os.cpu_count() or 1)


def local_workers(jobs: int) -> int:
    """The worker processes the ``local`` back end runs for ``jobs``: at most one per usable CPU
    (:func:`usable_cpus`), since more only compete for the same cores; the results do not depend on it."""
    return max(1, min(int(jobs), usable_cpus()))


def evaluate(
    agent_specs: str | Sequence[str],
    *,
    games: int = 100,
    seed: int = 0,
    scoring: Any = "american",
    rules: dict[str, Any] | None = None,
    jobs: int = 1,
    out_dir: str | os.PathLike | None = None,
    progress: bool = True,
    backend: str = "local",
    chunk_size: int | None = None,
    backend_options: dict[str, Any] | None = None,
    resume: bool = False,
) -> EvaluationResult:
    """Play every agent on the same ``games`` seeded deals; the records and summaries.

    ``scoring`` is the point system the agents play for (every game is also
    scored under American and English); ``rules`` holds ``Rules`` fields
    (``jokers``, ``placement``, ``first_cell``) as a mapping, a ``Rules``, or a spec such as
    ``"jokers=2,placement=adjacent"`` (:meth:`pokersquares_env.core.Rules.parse`).  ``jobs`` processes share the
    work (the ``local`` back end runs at most one per CPU: :func:`local_workers`; the records are the same for any
    ``jobs``); ``out_dir`` saves every output (see :meth:`EvaluationResult.save`).  Every agent is built once before any
    game: a spec that cannot be built (a bad option value, missing tables) raises ``ValueError`` naming it, and
    nothing is played or written; an agent that raises during a game is reported with its deal in
    :attr:`EvaluationResult.errors`, and the other games and agents go on.  A worker process that dies (killed for
    lack of memory, crashed) stops the evaluation with :class:`WorkerLostError` naming the agents and deals left
    without records (the Ray back end first resubmits them).
    ``chunk_size`` is the deals per work unit (``None``: automatic); ``backend_options`` go to the back end
    (``backend="ray"``: ``address``, see :mod:`agents.distributed`).

    With ``out_dir``, every game's record is appended to :data:`JOURNAL` in it as its chunk ends, so an evaluation
    that stops (Ctrl-C, a lost worker, a time limit, a kill) keeps its finished games; the journal is removed once
    the outputs are written.  ``resume=True`` reuses the games ``out_dir`` holds (an unfinished run's journal, a
    finished run's ``games.jsonl``, or both) and plays only the agent-deal pairs missing: the records are those an
    uninterrupted run gives (each deal's deck and each agent's seed depend on ``seed`` and the deal alone), so it
    also adds deals (a larger ``games``) or agents to a finished evaluation.  Games that raised are played again.
    The folder's games must have the same ``seed``, point system and rules, and be of agents and deals asked for,
    else a ``ValueError`` names the first that is not and nothing is played or changed.  Without ``resume``, a folder
    holding a journal is refused, naming it, so that a restart cannot overwrite finished games.
    """
    return _evaluate(agent_specs, games=games, seed=seed, scoring=scoring, rules=rules, jobs=jobs, out_dir=out_dir,
                     progress=progress, backend=backend, chunk_size=chunk_size, backend_options=backend_options,
                     resume=resume)


def _evaluate(
    agent_specs: str | Sequence[str],
    *,
    games: int,
    seed: int,
    scoring: Any,
    rules: dict[str, Any] | None,
    jobs: int,
    out_dir: str | os.PathLike | None,
    progress: bool,
    backend: str,
    chunk_size: int | None,
    backend_options: dict[str, Any] | None,
    build: bool = True,
    resume: bool = False,
    reused: list[dict[str, Any]] | None = None,
    save: bool = True,
) -> EvaluationResult:
    """:func:`evaluate`; ``build=False`` when the caller has built every agent for this system already
    (:func:`evaluate_pps`).  :func:`evaluate_pps` also
    passes each system's ``reused`` games (read and checked before any system is played) and ``save=False``: the
    journal in ``out_dir`` then stays, holding every game, until the caller has written the outputs."""
    specs = _check_specs(agent_specs)
    games, jobs, seed = check_games(games), check_positive_int(jobs, "jobs"), check_seed(seed)
    progress = check_progress(progress)
    if chunk_size is not None:
        chunk_size = check_positive_int(chunk_size, "chunk_size")
    run_tasks = _backend(backend)  # an unknown back end too
    backend_options = _check_backend_options(backend, run_tasks, backend_options)  # and its options
    if out_dir is not None:
        check_out_dir(out_dir)  # and an --out that is a file, before agents are built (tables trained)
        check_output_entries(out_dir)  # and a folder where a file is written
    if backend == "local":
        jobs = local_workers(jobs)  # and the chunk size follows the workers there are
    rules = dict(Rules.parse(rules if rules is not None else {}).to_json())
    system = point_system(scoring)
    config = {"seed": int(seed), "scoring": system.to_json(), "rules": rules}
    _check_resume(resume, out_dir)
    if out_dir is not None:
        refuse_journal(out_dir, resume=bool(resume))
    # the folder's games, checked against this evaluation before any agent is built (tables trained)
    if reused is None:
        if resume:
            refuse_other_kind(out_dir, pps=False)
        reused = resumable_games(out_dir, specs, games, config) if resume else []
    _connect_backend(run_tasks, specs, jobs, backend_options)  # Ray: a bad address, before the tables are trained
    for spec in specs if build else ():  # a bad option value fails here, before any game; tables are trained once
        _build_or_raise(spec, system, rules, int(seed))
    journal = None
    if out_dir is not None:
        prepare_out_dir(out_dir)  # before the games, not after them
        if not resume:  # an earlier run's outputs go now, so a stop leaves this run's journal alone to resume
            clear_outputs(out_dir)
        journal = _start_journal(out_dir, config, reused)
    done = {(r["agent"], r["deal"]) for r in reused}
    size = chunk_size or max(1, min(50, math.ceil(games / (4 * jobs))))
    tasks = [(spec, deals, config) for spec, deals in make_chunks(specs, int(games), size, done=done)]
    records: list[dict[str, Any]] = list(reused)
    bar = progress_bar(progress, total=len(specs) * int(games), initial=len(reused), desc="evaluate", unit="game")
    try:
        for chunk in run_tasks(tasks, jobs=int(jobs), **backend_options):
            records.extend(chunk)
            if journal is not None:
                _append_journal(journal, config, chunk)
            if bar is not None:
                bar.update(len(chunk))
    finally:
        if bar is not None:
            bar.close()
    records.sort(key=lambda r: (specs.index(r["agent"]), r["deal"]))
    result = EvaluationResult(specs, records, config, int(games), resumed=len(reused))
    if out_dir is not None and save:
        result.save(out_dir)
        os.remove(journal)  # its games are in games.jsonl now
    return result


# --------------------------------------------------------------------------- the journal and resuming

#: The journal of an evaluation under way, in its output folder: each game's record in the form of ``games.jsonl``,
#: appended as its chunk ends, so that a run that stops keeps its finished games (``resume=True``, ``--resume``,
#: plays only the rest).  Removed once the outputs are written.
JOURNAL = "games.partial.jsonl"


def _check_resume(resume: Any, out_dir: str | os.PathLike | None) -> None:
    """``resume`` must be a bool, and ``True`` only with the folder whose games it reuses."""
    if not isinstance(resume, (bool, np.bool_)):
        raise TypeError(f"resume={resume!r}: expected True or False")
    if resume and out_dir is None:
        raise ValueError("resume=True needs out_dir: the folder whose games are reused")


def _journal_games(path: str) -> int:
    """How many complete lines (games) the journal at ``path`` holds."""
    with open(path, "rb") as fh:
        return fh.read().count(b"\n")


def _subfolder_journals(out_dir: str | os.PathLike) -> list[str]:
    """The :data:`JOURNAL` files in ``out_dir``'s sub-folders: an unfinished evaluation over a set of point systems
    (:func:`evaluate_pps`, ``--pps``) keeps one in each system's folder."""
    path = os.fspath(out_dir)
    if not os.path.isdir(path):
        return []
    found = []
    for name in sorted(os.listdir(path)):
        full = os.path.join(path, name)
        if os.path.isdir(full) and not os.path.islink(full) and os.path.isfile(os.path.join(full, JOURNAL)):
            found.append(os.path.join(full, JOURNAL))
    return found


def refuse_journal(out_dir: str | os.PathLike, *, name: str = "out_dir", pps: bool = False,
                   resume: bool = False) -> None:
    """A ``ValueError`` if ``out_dir`` holds an unfinished evaluation that this one would overwrite or could not
    finish: a :data:`JOURNAL` in it (a plain evaluation's) or in its sub-folders (one over a set of point systems,
    ``pps``).  ``resume=True`` accepts the journals of this kind of evaluation (``pps`` or not), never the other
    kind's.  ``name``: what the message calls the folder, as for :func:`check_out_dir`; nothing is changed."""
    cli = name.startswith("-")
    folder = _named(name, os.fspath(out_dir))
    path = os.path.join(os.fspath(out_dir), JOURNAL)
    if os.path.isfile(path) and (pps or not resume):
        how = ("--resume" if cli else "resume=True") if not pps else (
            "evaluate --resume without --pps" if cli else "evaluate(..., resume=True), not evaluate_pps,")
        raise ValueError(f"{folder} holds an unfinished evaluation: {JOURNAL} with {_journal_games(path)} finished "
                         f"games; expected {how} to finish it (the same seed, point system and rules), or remove "
                         f"that file to start again, or choose another folder")
    subs = _subfolder_journals(out_dir)
    if subs and (not pps or not resume):
        games = sum(_journal_games(p) for p in subs)
        shown = ", ".join(os.path.relpath(p, os.fspath(out_dir)) for p in subs[:3]) + (
            f" and {len(subs) - 3} more" if len(subs) > 3 else "")
        systems = _marker_systems(os.fspath(out_dir))  # what a --pps run writes first: its set of systems
        if systems:
            what = f"an unfinished evaluation over point systems {', '.join(systems)}"
            how = (f"--pps {','.join(systems)} (the same set) with --resume" if cli else
                   "evaluate_pps(..., resume=True) with those systems")
        else:  # journals of per-system folders that no --pps run's marker lists (e.g. benchmarks/agents.py's)
            what = "unfinished evaluations in its sub-folders"
            how = "the command that started them, with --resume,"
        raise ValueError(f"{folder} holds {what}: {shown} with {games} finished games; expected {how} to finish "
                         f"{'it' if systems else 'them'} (the same seed and rules), or remove "
                         f"{'that file' if len(subs) == 1 else 'those files'} (and "
                         f"{'its folder' if len(subs) == 1 else 'their folders'}) to start again, or choose "
                         f"another folder")


def refuse_other_kind(out_dir: str | os.PathLike, *, pps: bool, name: str = "out_dir") -> None:
    """Before resuming: a ``ValueError`` if ``out_dir`` holds the finished outputs of the other kind of evaluation,
    which this one's outputs would replace: an evaluation over a set of point systems (its :data:`MARKER` lists them)
    when resuming one under one point system, or the ``games.jsonl`` of one under one point system when resuming
    one over a set (``pps``).  ``name``: what the message calls the folder; nothing is changed."""
    path = os.fspath(out_dir)
    if not os.path.isdir(path):
        return
    folder = _named(name, path)
    cli = name.startswith("-")
    systems = _marker_systems(path)
    if not pps and systems:  # its games are in per-system folders, which this evaluation's outputs would remove
        how = f"--pps {','.join(systems)} with --resume" if cli else "evaluate_pps(..., resume=True) with them"
        raise ValueError(f"{folder} holds an evaluation over a set of point systems ({', '.join(systems)}): resuming "
                         f"an evaluation under one point system cannot add to it; expected {how}, or another folder")
    if pps and os.path.isfile(os.path.join(path, "games.jsonl")):
        raise ValueError(f"{folder} holds the games.jsonl of an evaluation under one point system: resuming over a "
                         f"set of point systems cannot add to it; expected the folder of an evaluation over a set of "
                         f"point systems, or choose another folder")


def resumable_games(out_dir: str | os.PathLike | None, specs: Sequence[str], games: int,
                    config: dict[str, Any]) -> list[dict[str, Any]]:
    """The finished games ``out_dir`` holds (its ``games.jsonl`` and :data:`JOURNAL`) as evaluation records, one per
    agent and deal; games that raised are left out (they are played again).  A ``ValueError`` names the file and
    line of the first game of another seed, point system, rules, agent or deal than asked (``specs``, deals below
    ``games``), whose deck is not its deal's, or that did not end; a damaged line is a ``RecordError`` naming it (a
    journal's last line cut short by a kill is left out).  Nothing is changed."""
    from pokersquares_env.records import load_records

    if out_dir is None or not os.path.isdir(out_dir):
        return []
    game = EvalConfig(**config).game()
    want_rules, want_points = game.rules.to_json(), game.system.to_json()
    seed = int(config["seed"])
    out: dict[tuple[str, int], dict[str, Any]] = {}
    # while the journal is there, the save that writes games.jsonl never finished: a kill mid-write cuts its last
    # line, whose game the journal holds whole (it is written first), so that line is left out as the journal's is
    unfinished = os.path.isfile(os.path.join(os.fspath(out_dir), JOURNAL))
    for name in ("games.jsonl", JOURNAL):
        path = os.path.join(os.fspath(out_dir), name)
        if not os.path.isfile(path):
            continue
        for lineno, rec in enumerate(load_records(path, cut_tail=name == JOURNAL or unfinished), start=1):
            where = f"{path}: record {lineno} (agent {rec.agent!r}, deal {rec.meta.get('deal')!r})"
            deal = rec.meta.get("deal")
            if isinstance(deal, bool) or not isinstance(deal, int):
                raise ValueError(f"{where}: meta.deal is {deal!r}: expected the deal index of an evaluation's record")
            if rec.meta.get("eval_seed") != seed:
                raise ValueError(f"{where} was played with seed {rec.meta.get('eval_seed')!r}: expected seed {seed} "
                                 f"as asked (resume only with the folder's seed, point system and rules)")
            if rec.system.to_json() != want_points:
                raise ValueError(f"{where} was played for point system {rec.system.name!r} "
                                 f"{rec.system.to_json()}: expected {game.system.name!r} {want_points} as asked")
            if rec.rules.to_json() != want_rules:
                raise ValueError(f"{where} was played under rules {rec.rules.to_json()}: expected {want_rules} as "
                                 f"asked")
            if rec.agent not in specs or not 0 <= deal < games:
                raise ValueError(f"{where}: not a game of this evaluation (agents {', '.join(specs)}; deals 0-"
                                 f"{games - 1}): resuming keeps every game of the folder, so ask for its agents and "
                                 f"at least its deals, or choose another folder")
            if list(rec.deck) != list(deal_deck(seed, deal, game.rules)):
                raise ValueError(f"{where}: its deck is not deal {deal}'s of seed {seed}: expected the deck the "
                                 f"evaluation deals")
            if "error" in rec.meta:
                continue  # played again
            played, state = rec.replay()
            if not state.terminal:
                raise ValueError(f"{where}: {len(rec.placements)} placements and no error: expected a finished game")
            seconds = rec.meta.get("seconds")
            out.setdefault((rec.agent, deal), {
                "agent": rec.agent, "deal": deal, "deck": list(rec.deck), "placements": list(rec.placements),
                "score": played.score(state),
                "scores": {"american": played.score(state, "american"), "english": played.score(state, "english")},
                "hands": played.hands(state),
                "seconds": float(seconds) if isinstance(seconds, (int, float)) and not isinstance(seconds, bool)
                else 0.0,
            })
    return list(out.values())


def _start_journal(out_dir: str | os.PathLike, config: dict[str, Any], reused: list[dict[str, Any]]) -> str:
    """Write :data:`JOURNAL` in ``out_dir`` holding the ``reused`` games (written whole, then renamed into place, so
    that an earlier journal is replaced only by one holding its games); its path."""
    path = os.path.join(os.fspath(out_dir), JOURNAL)
    tmp = path + ".tmp"  # one a kill left here is overwritten (and counts as an evaluation's file meanwhile)
    with open(tmp, "w", encoding="utf-8") as fh:
        _write_records(fh, config, reused)
    os.replace(tmp, path)
    return path


def _append_journal(path: str, config: dict[str, Any], records: list[dict[str, Any]]) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        _write_records(fh, config, records)


def _write_records(fh: Any, config: dict[str, Any], records: list[dict[str, Any]]) -> None:
    game = EvalConfig(**config).game()
    fh.write("".join(json.dumps(_game_record(game, config["seed"], r), ensure_ascii=False) + "\n" for r in records))
    fh.flush()


# --------------------------------------------------------------------------- Parameterized Poker Squares

_PPS_HANDS = [k for k in CATEGORY_KEYS if k != "five_of_a_kind"]  # the 10 hands of the challenge


def ameritish_points(rng: np.random.Generator) -> list[int]:
    """One "Ameritish" table of the challenge's generators, over :data:`_PPS_HANDS` (high card first).

    The royal flush is worth an integer drawn uniformly from 30 to 100 (the
    English and American royal flushes); every other hand but high card (0)
    gets that top value times a fraction drawn uniformly between the
    hand's share of the top value in the English and in the American table,
    rounded to an integer.
    """
    american = [POINT_SYSTEMS["american"][k] for k in _PPS_HANDS]
    english = [POINT_SYSTEMS["english"][k] for k in _PPS_HANDS]
    top = int(rng.integers(30, 101))
    out = [0] * len(_PPS_HANDS)
    for i in range(1, len(_PPS_HANDS) - 1):
        fa, fe = american[i] / american[-1], english[i] / english[-1]
        out[i] = int(np.floor(top * rng.uniform(min(fa, fe), max(fa, fe)) + 0.5))
    out[-1] = top
    return out


def pps_systems(seed: int = 0, *, random_tables: int = 2, hypercorner: int = 2, single_hand: int = 2,
                ameritish: int = 1) -> list[Any]:
    """The Parameterized Poker Squares set: American, English, random, hypercorner, single-hand and Ameritish tables.

    Following the generators of the EAAI-2016 challenge's reference code: a
    random table gives each of the 10 hands (high card included) an integer in
    [-128, 127]; a hypercorner table gives each hand -1 or +1; a single-hand
    table gives one hand 1 and the rest 0; an Ameritish table lies between the
    American and English tables (:func:`ameritish_points`).  Five of a kind
    (jokers only) scores as four of a kind.  Drawn from ``seed``; the counts
    say how many tables of each kind (the Ameritish ones are drawn last, so
    the others do not depend on ``ameritish``).  Every table differs from the others: a draw that repeats an earlier
    table's points is drawn again.  Counts are integers >= 0: at most 10 single-hand tables (one per hand) and 1,024
    hypercorner ones (the distinct +-1 tables); anything else is a ValueError naming it.
    """
    seed = check_seed(seed)
    bounds = {"random_tables": None, "hypercorner": 2 ** len(_PPS_HANDS), "single_hand": len(_PPS_HANDS),
              "ameritish": None}
    counts = {"random_tables": random_tables, "hypercorner": hypercorner, "single_hand": single_hand,
              "ameritish": ameritish}
    for name, count in counts.items():
        if isinstance(count, bool) or not isinstance(count, (int, np.integer)) or count < 0:
            raise ValueError(f"{name}={count!r}: expected an integer >= 0 (how many tables of that kind)")
        if bounds[name] is not None and count > bounds[name]:
            raise ValueError(f"{name}={count!r}: expected at most {bounds[name]:,} (the distinct tables of that kind)")
    rng = np.random.default_rng([seed, 2016])
    out: list[Any] = [point_system("american"), point_system("english")]

    def table(name: str, values: Sequence[float]) -> Any:
        pts = dict(zip(_PPS_HANDS, (float(v) for v in values), strict=True))
        return PointSystem(name, tuple(point_system(pts).points), None)

    def distinct(name: str, draw: Callable[[], Any]) -> Any:
        """A table of a fresh draw, drawn again while it repeats an earlier table's points (two hypercorner tables
        are the same for about 1 seed in 750; a repeat would count one system twice in the tournament score)."""
        while True:
            system = table(name, draw())
            if all(system.points != other.points for other in out):
                return system

    for j in range(random_tables):
        out.append(distinct(f"random-{j + 1}", lambda: rng.integers(-128, 128, len(_PPS_HANDS))))
    for j in range(hypercorner):
        out.append(distinct(f"hypercorner-{j + 1}", lambda: rng.choice([-1, 1], len(_PPS_HANDS))))
    hands = rng.permutation(len(_PPS_HANDS))[:single_hand]
    for h in hands:
        out.append(table(f"single-{_PPS_HANDS[h]}", [1 if i == h else 0 for i in range(len(_PPS_HANDS))]))
    for j in range(ameritish):
        out.append(table(f"ameritish-{j + 1}", ameritish_points(rng)))
    return out


@dataclass
class PPSResult:
    """Results of an evaluation over several point systems, normalised per system."""

    results: dict[str, EvaluationResult]

    @property
    def resumed(self) -> int:
        """How many games, over every system, were reused from the output folder (``resume=True``) rather than played."""
        return sum(r.resumed for r in self.results.values())

    @property
    def summary(self) -> list[dict[str, Any]]:
        """One row per (agent, system): mean, ci95, the exact random-play expectation and two normalised scores.

        * ``tournament`` is the 2016 challenge's figure (Neller's reference
          ``PokerSquares.playTournament``): per system, the field's means are
          scaled linearly so that the lowest is 0 and the highest 1.  It
          depends on who else is in the field (NaN when all means are equal,
          e.g. a field of one).
        * ``normalized = (mean - random) / (best - random)`` anchors 0 at the
          exact expected score of random play under that system instead of at
          the field's weakest agent, so it does not move when weaker agents
          join the field.  It is NaN on a system where no agent's mean beats
          random play's expectation (``best <= random``), and the overall
          figure averages the systems where it is defined.

        Both are computed from ``pps_mean``: the mean over every deal, a game
        that raised counted at ``failed_score``, the lowest score a grid can
        get (10 x the system's lowest hand value; without jokers, five of a
        kind is not among them), as the challenge scores a game its player
        failed.  (Over the finished games alone, ``mean``, an
        agent that raised on its bad deals would rank higher for it.)
        """
        from pokersquares_env.scoring import HandCategory, expected_random_score

        rows = []
        for name, res in self.results.items():
            jokers = res.config["rules"]["jokers"]
            base = expected_random_score(res.system, jokers)
            # the lowest hand a grid can hold: five of a kind needs a joker (the challenge's ten hands, without)
            failed = 10 * min(res.system.points[c] for c in HandCategory.possible(jokers))
            summ = res.summary
            fair = [_mean_counting_failures(r, failed) for r in summ]
            means = [m for m in fair if not math.isnan(m)]  # NaN: an agent that played no deal
            best = max(means, default=math.nan)
            worst = min(means, default=math.nan)
            # a tie -- the best no better than the worst, or than random play -- is decided on means compared to
            # 9 decimals (points_level), as scores are everywhere: float sums in another order can differ in the
            # last bit, which would otherwise rank one agent 1 and its equal 0
            ranked = points_level(best) > points_level(worst)
            above_random = points_level(best) > points_level(base)
            for r, m in zip(summ, fair):
                span = best - base
                rows.append({
                    "agent": r["agent"], "system": name, "games": r["games"], "errors": r["errors"],
                    "mean": r["mean"], "ci95": r["ci95"], "failed_score": failed, "pps_mean": m,
                    "random_expected": base,
                    "tournament": (m - worst) / (best - worst) if ranked else math.nan,
                    "normalized": (m - base) / span if above_random else math.nan,
                    "seconds_per_game": r["seconds_per_game"],
                })
        return rows

    def overall(self) -> list[dict[str, Any]]:
        """Per agent: the challenge's tournament score (the sum of ``tournament`` over systems) and the mean ``normalized``."""
        rows: dict[str, list[dict[str, Any]]] = {}
        for r in self.summary:
            rows.setdefault(r["agent"], []).append(r)
        def mean(values: list[float]) -> float:  # NaN (no figure on any system) without numpy's empty-slice warning
            kept = [x for x in values if not math.isnan(x)]
            return float(np.mean(kept)) if kept else math.nan

        def total(values: list[float]) -> float:  # NaN when no system ranks the field (one agent, or all tied)
            kept = [x for x in values if not math.isnan(x)]
            return add_points(kept) if kept else math.nan  # in order: the same figure on every Python

        return [{"agent": a, "systems": len(v),
                 "tournament_score": total([r["tournament"] for r in v]),
                 "normalized": mean([r["normalized"] for r in v])} for a, v in rows.items()]

    def table(self) -> str:
        """A Markdown table: one row per agent and system, then the overall scores."""
        lines = ["| agent | system | games | errors | mean | ci95 | random | tournament | normalized |",
                 "|---|---|---|---|---|---|---|---|---|"]
        for r in self.summary:
            figures = (figure(r[k], ".3f") for k in ("mean", "ci95", "random_expected", "tournament", "normalized"))
            lines.append(f"| {r['agent']} | {r['system']} | {r['games']} | {r['errors']} | {' | '.join(figures)} |")
        lines += ["", "| agent | systems | tournament score (sum) | mean normalized |", "|---|---|---|---|"]
        lines += [f"| {r['agent']} | {r['systems']} | {figure(r['tournament_score'], '.3f')} | "
                  f"{figure(r['normalized'], '.3f')} |"
                  for r in self.overall()]
        return "\n".join(lines) + "\n"

    def save(self, out_dir: str | os.PathLike) -> list[str]:
        """Write :data:`MARKER`, each system's outputs in a sub-folder (without plots) and the normalised table as
        ``pps.md``/``pps.json``, after removing an earlier evaluation's outputs (:func:`clear_outputs`)."""
        clear_outputs(out_dir)
        os.makedirs(out_dir, exist_ok=True)
        first = next(iter(self.results.values()), None)
        about = {"agents": first.agents, "games": first.games, "seed": first.config["seed"],
                 "rules": first.config["rules"]} if first is not None else {}
        written = [_write_marker(out_dir, {**about, "systems": list(self.results)})]
        for name, res in self.results.items():
            written += res.save(os.path.join(out_dir, name), plots=False)
        for fname, text in ((PPS_TABLE, self.table()),
                            (PPS_JSON, json.dumps(_jsonable({"systems": self.summary, "overall": self.overall()}),
                                                  indent=2) + "\n")):
            path = os.path.join(out_dir, fname)
            with open(path, "w", encoding="utf-8") as fh:
                fh.write(text)
            written.append(path)
        return written


#: The file every evaluation's output folder holds (written first): what was evaluated, and the sign that an
#: ``evaluate`` wrote the folder, so that ``pokersquares evaluate --out`` may write there again (:func:`check_out_dir`).
MARKER = "evaluation.json"
MARKER_FORMAT = "pokersquares-evaluation"


def _write_marker(out_dir: str | os.PathLike, about: dict[str, Any]) -> str:
    path = os.path.join(out_dir, MARKER)
    replace_text(path, json.dumps(_jsonable({"format": MARKER_FORMAT, "version": 1, **about}), indent=2) + "\n")
    return path


def _written_by_evaluate(folder: str) -> bool:
    """Whether ``folder`` holds the :data:`MARKER` an evaluation writes."""
    from agents.config import read_json

    data = read_json(os.path.join(folder, MARKER))
    return isinstance(data, dict) and data.get("format") == MARKER_FORMAT


def _foreign_entries(folder: str, *, top: bool = True) -> list[str]:
    """The entries of ``folder`` that an ``evaluate`` does not write (folders shown with a trailing ``/``): known are
    :data:`RESULT_FILES`, :data:`PLOT_FILES`, the :data:`JOURNAL` (and its ``.tmp`` copy) and, at the top,
    :data:`PPS_FILES` and the per-system sub-folders of ``--pps`` (each recognised the same way: by its
    :data:`MARKER`, or holding only an evaluation's files)."""
    known = {*RESULT_FILES, *PLOT_FILES, JOURNAL, JOURNAL + ".tmp", MARKER + ".tmp", *(PPS_FILES if top else ())}
    foreign = []
    for name in sorted(os.listdir(folder)):
        full = os.path.join(folder, name)
        if os.path.isdir(full) and not os.path.islink(full):
            if not (top and _recognised_subfolder(full)):
                foreign.append(name + "/")
        elif not (os.path.isfile(full) and name in known):
            foreign.append(name)
    return foreign


def clear_outputs(out_dir: str | os.PathLike) -> list[str]:
    """Remove from ``out_dir`` what an earlier evaluation wrote there, so that a new one leaves none of it behind (a
    plain evaluate's plots, or a ``--pps`` run's ``pps.md``, ``pps.json`` and per-system folders); the paths removed.

    Only when ``out_dir`` is an evaluation's own, as :func:`check_out_dir` recognises one (it holds :data:`MARKER`,
    or only an evaluation's files): then its files named :data:`MARKER`, :data:`RESULT_FILES`, :data:`PLOT_FILES`
    or :data:`PPS_FILES`, and in each per-system sub-folder that the folder's :data:`MARKER` lists (a ``--pps``
    run's) and that holds a :data:`MARKER` of its own, the files of those names; such a folder goes when nothing
    else is left in it.  No other file or folder is touched: a sub-folder of the user's, even one holding only
    files of an evaluation's names, stays."""
    path = os.fspath(out_dir)
    if not os.path.isdir(path) or not (_written_by_evaluate(path) or not _foreign_entries(path)):
        return []
    removed = []

    def remove_files(folder: str, names: Iterable[str]) -> None:
        for name in names:
            full = os.path.join(folder, name)
            if os.path.isfile(full) or os.path.islink(full):
                os.remove(full)
                removed.append(full)

    systems = _marker_systems(path)  # the per-system folders the earlier --pps run wrote, as its marker lists them
    for name in sorted(os.listdir(path)):
        full = os.path.join(path, name)
        if name in systems and os.path.isdir(full) and not os.path.islink(full) and _written_by_evaluate(full):
            remove_files(full, (MARKER, *RESULT_FILES, *PLOT_FILES))
            if not os.listdir(full):
                os.rmdir(full)
                removed.append(full)
    remove_files(path, (MARKER, *RESULT_FILES, *PLOT_FILES, *PPS_FILES))
    return removed


def _marker_systems(folder: str) -> list[str]:
    """The per-system folder names a ``--pps`` evaluation's :data:`MARKER` in ``folder`` lists (none otherwise)."""
    from agents.config import read_json

    if not _written_by_evaluate(folder):
        return []
    systems = read_json(os.path.join(folder, MARKER)).get("systems")
    return [s for s in systems if isinstance(s, str)] if isinstance(systems, list) else []


def _recognised_subfolder(folder: str) -> bool:
    """Whether ``folder`` is a per-system folder an ``evaluate --pps`` wrote (with or without :data:`MARKER`)."""
    if _written_by_evaluate(folder):
        return True
    try:
        return bool(os.listdir(folder)) and not _foreign_entries(folder, top=False)
    except OSError:
        return False


def _named(name: str, value: str) -> str:
    """``out_dir='x'`` for a parameter, ``--out 'x'`` for a command-line option or a description (``name`` with a
    space, e.g. ``"the evaluation folder"``)."""
    return f"{name} {value!r}" if name.startswith("-") or " " in name else f"{name}={value!r}"


def check_out_dir(out_dir: str | os.PathLike, *, foreign: bool = True, name: str = "out_dir") -> str:
    """Raise a ``ValueError`` naming why ``out_dir`` cannot take an evaluation's outputs (checked before slow work;
    :func:`prepare_out_dir` creates it): it is a file, or the nearest folder that exists on its path is a file or
    cannot be written.  ``foreign=False`` (what ``pokersquares evaluate --out`` asks) also refuses a folder holding
    files an evaluation did not write: it must be new, empty, hold the :data:`MARKER` of an earlier evaluation, or
    hold only files an evaluation writes (:data:`RESULT_FILES`, :data:`PLOT_FILES`, :data:`PPS_FILES` and ``--pps``
    per-system folders: an evaluate's output from before :data:`MARKER` existed); its files are then replaced.
    ``name`` is what the messages call the folder (``"--out"`` for a command's option)."""
    if not isinstance(out_dir, (str, os.PathLike)) or isinstance(os.fspath(out_dir), bytes):
        what = f"{name} {out_dir!r}" if name.startswith("-") or " " in name else f"{name}={out_dir!r}"
        raise TypeError(f"{what} ({type(out_dir).__name__}): expected the path of a folder (a str or os.PathLike)")
    path = os.fspath(out_dir)
    what_ = _named(name, path)
    if not path.strip():  # '' is no folder: not the current one (a run would spill its files there)
        raise ValueError(f"{what_}: expected a folder path (an empty one names no folder; '.' is the current folder)")
    if os.path.exists(path) and not os.path.isdir(path):
        raise ValueError(f"{what_} is a file: expected a folder for the outputs (new or existing)")
    existing = os.path.abspath(path)
    while not os.path.lexists(existing):  # the nearest part of the path that exists: the folder it is made in
        existing = os.path.dirname(existing)
    if not os.path.isdir(existing):
        what = "a broken link" if os.path.islink(existing) and not os.path.exists(existing) else "a file"
        raise ValueError(f"{what_}: cannot create it: {existing!r} is {what}, not a folder")
    if not os.access(existing, os.W_OK | os.X_OK):
        where = "write in it" if existing == os.path.abspath(path) else f"create it in {existing!r}"
        raise ValueError(f"{what_}: cannot {where} (no permission)")
    if not foreign and existing == os.path.abspath(path):
        try:
            others = [] if _written_by_evaluate(path) else _foreign_entries(path)
        except OSError as exc:
            raise ValueError(f"{what_}: cannot list it ({exc.strerror or exc})") from None
        if others:
            shown = ", ".join(others[:5]) + (f" and {len(others) - 5} more" if len(others) > 5 else "")
            # a marker there but cut short, or another program's, is named as such (not as missing)
            marker = (f"holds an {MARKER} that is damaged or not an evaluation's (an evaluate writes a JSON object of "
                      f"format {MARKER_FORMAT!r}), and" if os.path.isfile(os.path.join(path, MARKER))
                      else f"has no {MARKER} and holds")
            raise ValueError(f"{what_} {marker} entries no evaluation writes ({shown}): expected a "
                             f"new or empty folder, or one an earlier evaluate wrote (holding {MARKER}, or only its "
                             f"output files); outputs there would be replaced, so choose another folder")
    return path


def check_output_entries(out_dir: str | os.PathLike, *, systems: Any = (), name: str = "out_dir") -> None:
    """Raise a ``ValueError`` when ``out_dir`` holds, under a name an evaluation writes (:data:`MARKER`,
    :data:`JOURNAL`, :data:`RESULT_FILES`, :data:`PLOT_FILES`, :data:`PPS_FILES`), something other than a file -- a
    folder or a broken link, which writing the file would fail on after the games -- or, for each name of
    ``systems`` (``--pps``: each system's results go to a folder of its name), a file or a broken link where that
    folder goes, or such an entry in that folder.  Checked before slow work; a folder that does not exist yet
    passes."""
    path = os.fspath(out_dir)
    own = (MARKER, JOURNAL, *RESULT_FILES, *PLOT_FILES, *PPS_FILES)

    def refuse(entry: str, what: str, expected: str) -> None:
        raise ValueError(f"{_named(name, path)}: {entry!r} there is {what}: expected {expected} (an evaluation writes "
                         f"it), so move it away or choose another folder")

    def kind(entry: str) -> str:
        return "a broken link" if os.path.islink(entry) and not os.path.exists(entry) else \
            ("a folder" if os.path.isdir(entry) else "not a regular file")

    folders = [("", path)] + [(str(n), os.path.join(path, str(n))) for n in systems]
    for rel, folder in folders:
        if rel and os.path.lexists(folder) and not os.path.isdir(folder):
            refuse(rel, "a broken link" if os.path.islink(folder) else "a file", "a folder for that system's results")
        if not os.path.isdir(folder):
            continue
        for entry in own:
            full = os.path.join(folder, entry)
            if os.path.lexists(full) and not os.path.isfile(full):
                refuse(os.path.join(rel, entry) if rel else entry, kind(full), "a file")


class OutDirError(ValueError):
    """The output folder cannot be created or written in; ``path`` is the folder and ``problem`` what is wrong (the
    message is ``"<name> <path>: <problem>"``, so a command can name its own option instead)."""

    def __init__(self, name: str, path: str, problem: str) -> None:
        super().__init__(f"{_named(name, path)}: {problem}")
        self.path, self.problem = path, problem


def prepare_out_dir(out_dir: str | os.PathLike, *, name: str = "out_dir") -> str:
    """Create the output folder ``out_dir`` (with its parents) or raise a ``ValueError`` naming why it cannot be
    (``name``: what the messages call it, as for :func:`check_out_dir`; an :class:`OutDirError` when the folder
    cannot be created or written in)."""
    path = check_out_dir(out_dir, name=name)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise OutDirError(name, path, f"cannot create it ({exc.strerror or exc})") from None
    if not os.access(path, os.W_OK):
        raise OutDirError(name, path, "cannot write in it")
    return path


_NAME_MAX = 255  # the longest file name, in bytes, on the usual Linux and macOS file systems


def _pps_list(systems: Any, seed: int) -> list[PointSystem]:
    """The point systems ``systems`` of :func:`evaluate_pps` names, each once and under a distinct name."""
    if isinstance(systems, str) and systems.strip().lower() == "pps":
        return list(pps_systems(seed))  # generated under distinct names
    if isinstance(systems, (str, os.PathLike, Mapping, PointSystem)):
        specs = [systems]  # one system: "english", a table, a JSON file
    elif isinstance(systems, Iterable) and not isinstance(systems, bytes):
        specs = list(systems)
    else:
        raise TypeError(f"systems={systems!r}: expected 'pps', a point system (a name, a mapping, a JSON path or a "
                        f"PointSystem) or a list of them")
    if not specs:
        raise ValueError("systems is empty: expected 'pps' or at least one point system")
    resolved = [point_system(spec) for spec in specs]
    own = {n.lower() for n in (MARKER, *RESULT_FILES, *PLOT_FILES, *PPS_FILES)}
    for i, ps in enumerate(resolved):  # each system's results go to a folder of its name
        if ps.name.strip() in (".", "..") or any(sep in ps.name for sep in ("/", "\\", os.sep, "\0")):
            raise ValueError(f"systems[{i}] is named {ps.name!r}: expected a name that can be a folder name (no "
                             f"path separators or NUL characters, not '.' or '..'), as each system's results are "
                             f"saved under it")
        if len(os.fsencode(ps.name)) > _NAME_MAX:  # checked before any system is played, not at its turn
            raise ValueError(f"systems[{i}] is named {ps.name[:40]!r}... ({len(os.fsencode(ps.name))} bytes): expected "
                             f"a name of at most {_NAME_MAX} bytes, as each system's results are saved in a folder of "
                             f"its name")
        if ps.name.strip().lower() in own:
            raise ValueError(f"systems[{i}] is named {ps.name!r}, the name of a file an evaluation writes: expected "
                             f"another name (not {', '.join(sorted(own))}), as each system's results are saved in a "
                             f"folder of its name beside those files")
    seen: dict[tuple[Any, ...], int] = {}
    for i, ps in enumerate(resolved):
        key = (tuple(float(p) for p in ps.points), None if ps.win_threshold is None else float(ps.win_threshold))
        if key in seen:
            j = seen[key]
            same = f"{ps.name!r}" if ps.name == resolved[j].name else f"{resolved[j].name!r} and {ps.name!r}"
            raise ValueError(f"systems repeat a point system: {same} (systems[{j}] and systems[{i}]) have the same "
                             f"points and win threshold: each must be given once")
        seen[key] = i
    names = [ps.name for ps in resolved]
    taken = set(names)
    for name in sorted(set(names)):
        if names.count(name) < 2:
            continue
        if name != "custom":  # a name the caller chose (or a file's): which table it means is for them to say
            where = [f"systems[{i}]" for i, n in enumerate(names) if n == name]
            raise ValueError(f"systems: {' and '.join(where)} are both named {name!r} but have different points: "
                             f"expected a distinct name for each point system (the results are keyed by name)")
        k = 0
        for i, n in enumerate(names):
            if n == name:
                k += 1
                while f"{name}-{k}" in taken:
                    k += 1
                names[i] = f"{name}-{k}"
                taken.add(names[i])
                resolved[i] = PointSystem(names[i], resolved[i].points, resolved[i].win_threshold)
    return resolved


def evaluate_pps(
    agent_specs: str | Sequence[str],
    *,
    systems: str | Sequence[Any] = "pps",
    games: int = 100,
    seed: int = 0,
    out_dir: str | os.PathLike | None = None,
    **kwargs: Any,
) -> PPSResult:
    """Evaluate agents under each point system of ``systems`` (``"pps"`` = :func:`pps_systems` of ``seed``).

    ``systems`` is ``"pps"``, one point system (a name such as ``"english"``, a mapping, a JSON path or a
    ``PointSystem``) or a list of them; each must be given once (a repeat is one with the same points and win
    threshold).  The results are keyed by system name; unnamed tables (named ``"custom"``) that differ are told
    apart as ``"custom-1"``, ``"custom-2"``, ... in the order given.
    Other keyword arguments go to :func:`evaluate`; every system uses the same deals.  Every agent is built for
    every system before the first game: one that cannot be built for a system raises ``ValueError`` naming both,
    and nothing is played or written.

    With ``out_dir``, each system's games go to the :data:`JOURNAL` in its folder (``out_dir/<system name>``) as
    their chunks end, and the journals are removed once the outputs are written, so a run that stops keeps its
    finished games.  ``resume=True`` reuses, per system, the games its folder holds (a stopped run's journal, a
    finished run's ``games.jsonl``) and plays only the rest, as :func:`evaluate` does; every system's games are
    read and checked before any agent is built, and a folder of games of a system not asked for is refused, naming
    it.  Without ``resume``, a folder holding journals (this kind's or a plain evaluation's) is refused.
    """
    seed = check_seed(seed)
    specs = _check_specs(agent_specs)  # the agents, deals and folder are checked before the folder is made
    check_games(games)
    if out_dir is not None:
        check_out_dir(out_dir)
    resolved = _pps_list(systems, seed)  # every system named before the first game
    if out_dir is not None:  # a folder where a file is written, a file where a system's folder goes
        check_output_entries(out_dir, systems=[ps.name for ps in resolved])
    # evaluate's own defaults for the options passed through (all but what evaluate_pps sets itself)
    options = {name: p.default for name, p in inspect.signature(evaluate).parameters.items()
               if p.kind is inspect.Parameter.KEYWORD_ONLY and name not in ("games", "seed", "scoring", "out_dir")}
    unknown = [k for k in kwargs if k not in options]
    if unknown:
        raise TypeError(f"evaluate_pps() got unexpected keyword argument(s) {', '.join(map(repr, unknown))}: "
                        f"expected {', '.join(options)} (the systems give the scoring)")
    options.update(kwargs)
    resume = options["resume"]
    _check_resume(resume, out_dir)
    if out_dir is not None:
        refuse_journal(out_dir, pps=True, resume=bool(resume))  # the other kind's journal, or this kind's unasked
    # What evaluate checks before building, checked once for every system (a bad option, back end or Ray address) ...
    check_positive_int(options["jobs"], "jobs")
    check_progress(options["progress"])
    if options["chunk_size"] is not None:
        check_positive_int(options["chunk_size"], "chunk_size")
    run_tasks = _backend(options["backend"])
    backend_options = _check_backend_options(options["backend"], run_tasks, options["backend_options"])
    rules = dict(Rules.parse(options["rules"] if options["rules"] is not None else {}).to_json())
    # ... and every system's games to reuse, read and checked before any agent is built or game played
    reused = _pps_reused(out_dir, resolved, specs, games, seed, rules) if resume else {}
    jobs = local_workers(options["jobs"]) if options["backend"] == "local" else options["jobs"]
    _connect_backend(run_tasks, specs, jobs, backend_options)
    # ... then every agent built for every system (tables trained and cached), before the first game of any: an agent
    # that cannot be built for one of them is named with it, and nothing is played or written.
    for ps in resolved:
        for spec in specs:
            _build_or_raise(spec, ps, rules, seed, name_system=True)
    if out_dir is not None:
        prepare_out_dir(out_dir)
        if not resume:  # an earlier run's outputs go now (every system's), as evaluate's do
            clear_outputs(out_dir)
        # what is under way, first: a stopped run's folder names its set of systems (and is known as an evaluation's)
        _write_marker(out_dir, {"agents": specs, "games": games, "seed": seed, "rules": rules,
                                "systems": [ps.name for ps in resolved]})
    results = {}
    for ps in resolved:  # with out_dir, each system's games go to the journal in its folder as they finish
        sub = None if out_dir is None else os.path.join(os.fspath(out_dir), ps.name)
        results[ps.name] = _evaluate(agent_specs, games=games, seed=seed, scoring=ps, out_dir=sub, build=False,
                                     reused=reused.get(ps.name, []), save=False, **options)
    out = PPSResult(results)
    if out_dir is not None:
        out.save(out_dir)
        for name in results:  # their games are in each system's games.jsonl now
            os.remove(os.path.join(os.fspath(out_dir), name, JOURNAL))
    return out


def _pps_reused(out_dir: str | os.PathLike | None, systems: list[PointSystem], specs: list[str], games: int,
                seed: int, rules: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Per system name, the finished games its folder in ``out_dir`` holds (:func:`resumable_games`, each checked
    against this evaluation).  A ``ValueError`` names a system the folder's run was over (its :data:`MARKER` lists
    it) or whose folder holds games, that is not asked for (writing the outputs would remove its games, or leave
    the run short of it), and a plain evaluation's ``games.jsonl`` at the top (:func:`refuse_other_kind`); nothing
    is changed."""
    if out_dir is None or not os.path.isdir(out_dir):
        return {}
    refuse_other_kind(out_dir, pps=True)
    top = os.fspath(out_dir)
    names = {ps.name for ps in systems}
    asked = ", ".join(ps.name for ps in systems)
    missing = [s for s in _marker_systems(top) if s not in names]
    if missing:
        raise ValueError(f"out_dir={top!r} holds an evaluation over point systems {', '.join(_marker_systems(top))}: "
                         f"{', '.join(missing)} not asked for (systems {asked}): resuming keeps every system of the "
                         f"folder, so ask for them too, or choose another folder")
    for name in sorted(os.listdir(top)):
        full = os.path.join(top, name)
        if name in names or not os.path.isdir(full) or os.path.islink(full):
            continue
        held = [f for f in (JOURNAL, "games.jsonl") if os.path.isfile(os.path.join(full, f))]
        if held:
            raise ValueError(f"{os.path.join(full, held[0])}: games of point system {name!r}, which is not asked "
                             f"for (systems {asked}): resuming keeps every game of the folder, so ask for its "
                             f"systems too, or choose another folder")
    return {ps.name: resumable_games(os.path.join(top, ps.name), specs, games,
                                     {"seed": int(seed), "scoring": ps.to_json(), "rules": rules})
            for ps in systems}
