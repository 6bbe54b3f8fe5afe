"""Ray back end of the evaluation harness: ``pokersquares evaluate --backend ray [--address ADDR]``.

The harness (:mod:`agents.evaluation`) cuts the common deals into chunks
``(agent_spec, deal indices, config)``.  Here each chunk becomes one Ray task,
a *streaming generator* that yields one per-game record as soon as that game
ends (:func:`agents.evaluation.iter_chunk`).  The driver waits on all running
chunks at once (``ray.wait``) and hands every record to the harness as it
arrives, so:

* finished games are never lost: when a worker (or its node) dies, the
  records that already reached the driver are kept, and only the deals of
  that chunk that have no record yet are submitted again as a new task (up
  to ``retries`` times per chunk; a record still in flight when the worker
  died is lost with it, and its deal is replayed to the same game);
* the result does not depend on how deals are split or where they run: deal
  ``i`` of seed ``S`` and the agent's per-deal seed are fixed by the harness,
  so ``--backend ray`` gives the same records (bar timings) and the same
  summary as ``--backend local``.

Agents added with :func:`agents.registry.register_agent` travel with their tasks: a Ray worker starts with the
built-in registry only, so each task carries its agent's registry entry (a ``"module:function"`` target as is, a
callable pickled) and the worker registers it before building the agent.  A callable the worker cannot load (its
module is not importable there) fails that agent's deals with an error that says so, as does a ``"module:function"``
whose module the workers cannot import: the module must be installed on the workers (or sent with Ray's
``runtime_env``).

Where Ray runs: if this process is already connected (``ray.init`` was called),
that session is used; else ``address`` (or ``$RAY_ADDRESS``) names a running
cluster to join; else an embedded Ray starts on this machine with ``jobs`` CPUs
(all the CPUs this process may use when ``jobs`` is 1).  The embedded Ray stays up until the process
exits, so several evaluations in one process (``evaluate_pps``) start it once.

Needs the ``distributed`` extra: ``pip install "pokersquares_env[distributed]"``.
"""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import threading
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

__all__ = ["EXTRA_HINT", "RayConnectionError", "benchmark", "import_ray", "ensure_ray", "run_chunks"]

#: how to install what this module needs
EXTRA_HINT = 'pip install "pokersquares_env[distributed]"'

log = logging.getLogger(__name__)

#: The address this process joined Ray at (None: not joined by :func:`ensure_ray`, or an embedded Ray), and the
#: ``cpus_per_task`` warnings already given (the harness checks its backend before the games and again as it sends
#: them, and ``--pps`` once per point system: a warning a process, not one per check).
_JOINED: dict[str, Any] = {"address": None, "node": None}
_WARNED_CPUS: set[tuple[float, str]] = set()


class RayConnectionError(ConnectionError, ValueError):
    """``--address`` names no Ray cluster this process can join (a bad value, so the CLI reports it plainly)."""


def import_ray(what: str = "the Ray back end"):
    """The ``ray`` module, or an ImportError naming the extra to install."""
    try:
        import ray
    except ImportError as exc:
        raise ImportError(f"{what} needs Ray, which is not installed ({exc}): {EXTRA_HINT}") from None
    return ray


def ensure_ray(address: str | None = None, num_cpus: int | None = None, *, what: str = "the Ray back end") -> bool:
    """Connect this process to Ray (existing session, ``address``/``$RAY_ADDRESS``, or an embedded local Ray).

    Returns True when this call started or joined Ray, False when a session was already open.
    ``num_cpus`` sizes the embedded Ray only (None: :func:`embedded_cpus`); a cluster keeps its own resources.
    A SIGTERM handler this program installed stays installed (``ray.init`` replaces it with one that exits).
    """
    ray = import_ray(what)
    if ray.is_initialized():
        joined_here = address == _JOINED["address"] and _global_node(ray) is _JOINED["node"]
        if address and not joined_here:  # the session this process joined at this very address: nothing to say
            log.warning("Ray is already initialised in this process: using that session, not address %r", address)
        return False
    if isinstance(address, str) and not address.strip():  # it named no cluster: leave it out (None) for that
        raise RayConnectionError(f"Ray address {address!r}: expected host:port (e.g. 10.0.0.1:6379), 'auto' or "
                                 f"ray://host:10001, or None for $RAY_ADDRESS or an embedded Ray")
    address = address or os.environ.get("RAY_ADDRESS") or None
    if num_cpus is not None and (isinstance(num_cpus, bool) or not isinstance(num_cpus, int) or num_cpus < 1):
        raise ValueError(f"num_cpus={num_cpus!r}: expected a positive integer or None (all the CPUs this process may "
                         f"use)")
    kwargs: dict[str, Any] = {"include_dashboard": False, "logging_level": logging.WARNING}
    with _keeping_sigterm_handler():
        if address:
            _check_reachable(address)
            try:
                ray.init(address=address, **kwargs)
                _JOINED.update(address=address, node=_global_node(ray))
            except (ConnectionError, RuntimeError, ValueError) as exc:
                cause = f"{exc} {exc.__cause__ or ''}"
                hint = (" The cluster wants an auth token: copy the head's ~/.ray/auth_token here (or set "
                        "RAY_AUTH_TOKEN) and set RAY_AUTH_MODE=token." if "auth" in cause.lower() else "")
                raise RayConnectionError(
                    f"could not connect to the Ray cluster at address {address!r} ({exc}); expected the address "
                    f"printed by `ray start --head` (host:6379), 'auto', or ray://host:10001.{hint}"
                ) from exc
        else:  # a new Ray of this process's own ("local"): not a cluster `ray start` left running on this machine,
            # nor one whose processes died leaving /tmp/ray/ray_current_cluster behind (Ray's plain init joins or
            # tries those, and then refuses num_cpus)
            ray.init(address="local", num_cpus=num_cpus if num_cpus is not None else embedded_cpus(ray), **kwargs)
            _JOINED.update(address=None, node=None)
    return True


def embedded_cpus(ray: Any = None) -> int:
    """The CPUs an embedded Ray gets when no count is given: those this process may use
    (:func:`agents.evaluation.usable_cpus`, its CPU affinity, which ``taskset`` narrows and Ray does not read), and
    no more than Ray itself detects (a container's CPU quota, which the affinity does not show)."""
    from agents.evaluation import usable_cpus

    cpus = usable_cpus()
    try:
        if ray is None:
            import ray
        detected = int(ray._private.utils.get_num_cpus())
    except Exception:  # noqa: BLE001 - no Ray, or one without that helper: the affinity alone
        return cpus
    return max(1, min(cpus, detected))


@contextlib.contextmanager
def _keeping_sigterm_handler() -> Iterator[None]:
    """Around ``ray.init``, which installs a SIGTERM handler that exits: a handler of this program's own (the
    ``evaluate`` command's, which keeps the finished games and says where) is put back, and so is an ignored
    SIGTERM; Python's default is left as Ray sets it."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.getsignal(signal.SIGTERM)
    try:
        yield
    finally:
        if before is not None and before != signal.SIG_DFL:
            signal.signal(signal.SIGTERM, before)


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """Fail fast on a ``host:port`` nobody listens on (Ray itself retries for minutes)."""
    import socket

    if "://" in address or address == "auto" or ":" not in address:
        return
    host, _, port = address.rpartition(":")
    if not (port.isascii() and port.isdigit()):
        raise RayConnectionError(f"Ray address {address!r}: expected host:port (e.g. 10.0.0.1:6379), 'auto' or ray://host:10001")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as exc:
        raise RayConnectionError(
            f"no Ray cluster answers at address {address!r} ({exc}); start one with `ray start --head --port "
            f"{port}` or pass the address it printed"
        ) from None


def _play_chunk(agent_spec: str, deals: list[int], config: dict[str, Any], entry: tuple | None = None
                ) -> Iterator[dict[str, Any]]:
    """Ray task body: the records of one chunk, yielded game by game; ``entry`` is the agent's registry entry when it
    is not a built-in one (:func:`_shipped_entries`), registered here first."""
    from agents.evaluation import EvalConfig, _error_record, deal_deck, iter_chunk

    problem = _register_shipped(entry) if entry is not None else None
    if problem is not None:
        rules = EvalConfig(**config).game().rules
        for i in deals:
            yield _error_record(agent_spec, i, deal_deck(config.get("seed", 0), i, rules), [],
                                f"could not build agent {agent_spec!r}: {problem}", 0.0)
        return
    yield from iter_chunk(agent_spec, deals, config)


def _play_chunk_list(agent_spec: str, deals: list[int], config: dict[str, Any], entry: tuple | None = None
                     ) -> list[dict[str, Any]]:
    """Ray task body for Ray Client (``ray://``), which has no streaming tasks: :func:`_play_chunk`'s records as one
    list, returned when the chunk ends (a lost worker then loses the whole chunk, played again)."""
    return list(_play_chunk(agent_spec, deals, config, entry))


def _client_mode(ray: Any) -> bool:
    """Whether this process reaches Ray through Ray Client (``ray://``)."""
    try:
        from ray.util.client import ray as client
    except ImportError:  # a Ray without Ray Client
        return False
    return bool(client.is_connected())


def _shipped_entries(ray: Any, specs: Sequence[str]) -> dict[str, tuple | None]:
    """Per spec, the registry entry a worker needs besides the built-in ones: None for a built-in agent, else
    ``(name, target, kind)``, a callable target pickled by Ray's cloudpickle; a ``ValueError`` naming an agent whose
    callable cannot be pickled."""
    from agents.registry import custom_entry

    out: dict[str, tuple | None] = {}
    for spec in dict.fromkeys(specs):
        entry = custom_entry(spec)
        if entry is not None and not isinstance(entry[1], str):
            name, target, kind = entry
            try:
                entry = (name, ray.cloudpickle.dumps(target), kind)
            except Exception as exc:  # noqa: BLE001 - whatever pickling raises, the agent cannot go to a worker
                raise ValueError(
                    f"agent spec {spec!r}: agent {name!r} was registered with a callable that cannot be sent to Ray "
                    f"workers ({type(exc).__name__}: {exc}): expected register_agent({name!r}, 'module:function') "
                    f"with a module the workers can import"
                ) from None
        out[spec] = entry
    return out


def _register_shipped(entry: tuple) -> str | None:
    """Register a shipped registry entry in this (worker) process; why it could not be, or None."""
    from agents.registry import register_agent

    name, target, kind = entry
    if isinstance(target, bytes):
        try:
            target = import_ray("a Ray worker").cloudpickle.loads(target)
        except Exception as exc:  # noqa: BLE001 - e.g. the callable's module is not importable on this worker
            return (f"the callable register_agent was given for {name!r} cannot be loaded on this Ray worker "
                    f"({type(exc).__name__}: {exc}): expected its module to be importable on the workers (installed "
                    f"there, or sent with Ray's runtime_env)")
    register_agent(name, target, kind=kind)
    return None


@dataclass
class _Chunk:
    """A chunk in flight: its task, the deals still without a record, and how often it was resubmitted."""

    spec: str
    config: dict[str, Any]
    remaining: list[int]
    max_retries: int
    retries: int = 0
    lost: list[str] = field(default_factory=list)


def run_chunks(
    tasks: Sequence[tuple[str, Sequence[int], dict[str, Any]]],
    *,
    jobs: int = 1,
    address: str | None = None,
    retries: int = 3,
    cpus_per_task: float = 1.0,
    streaming: bool = True,
) -> Iterator[list[dict[str, Any]]]:
    """Run the harness's chunks as Ray streaming tasks; yield each game's record (as a 1-list) as it finishes.

    ``tasks`` are ``(agent_spec, deal indices, config dict)``; ``jobs`` sizes an
    embedded Ray (1: all the CPUs this process may use), ``address`` joins a cluster; a chunk whose
    worker dies is resubmitted with its unfinished deals, at most ``retries`` times.
    Through Ray Client (``ray://``), which has no streaming tasks, each chunk is one task returning its records
    when it ends (``streaming=False`` does the same elsewhere); a lost chunk is then played again whole.
    """
    ray = prepare([spec for spec, _, _ in tasks], jobs=jobs, address=address, retries=retries,
                  cpus_per_task=cpus_per_task)
    entries = _shipped_entries(ray, [spec for spec, _, _ in tasks])
    streaming = streaming and not _client_mode(ray)
    # Ray's own retries would replay the whole chunk; resubmitting only the unfinished deals keeps finished games
    play = ray.remote(_play_chunk if streaming else _play_chunk_list).options(
        num_cpus=cpus_per_task, max_retries=0, name="pokersquares-eval-chunk")

    _warm_agents(tasks)
    running: dict[Any, _Chunk] = {}

    def submit(chunk: _Chunk) -> None:
        running[play.remote(chunk.spec, list(chunk.remaining), chunk.config, entries[chunk.spec])] = chunk

    for spec, deals, config in tasks:
        if deals:
            submit(_Chunk(spec, dict(config), [int(d) for d in deals], retries))
    try:
        try:
            yield from (_stream if streaming else _collect)(ray, running, submit)
        except _GaveUp as exc:  # a chunk out of retries: the evaluation stops, so name every deal left unplayed
            from agents.evaluation import WorkerLostError, _deal_ranges

            deals: dict[str, list[int]] = {}
            for chunk in [exc.chunk, *running.values()]:
                deals.setdefault(chunk.spec, []).extend(chunk.remaining)
            which = "; ".join(f"agent {spec!r} deals {_deal_ranges(sorted(d))}" for spec, d in deals.items() if d)
            raise WorkerLostError(f"{exc}; the evaluation stopped there, with no records for {which}") from None
    finally:
        for gen in running:  # stop what is still running when the caller stops early (Ctrl-C, error)
            try:
                ray.cancel(gen, force=True)
            except Exception:  # noqa: BLE001 - best effort on the way out
                pass


class _GaveUp(Exception):
    """A chunk whose deals could not be played after its resubmissions (turned into a WorkerLostError naming every
    deal left without a record)."""

    def __init__(self, message: str, chunk: "_Chunk"):
        super().__init__(message)
        self.chunk = chunk


def _stream(ray: Any, running: dict[Any, "_Chunk"], submit) -> Iterator[list[dict[str, Any]]]:
    """Yield each game's record as Ray's streaming tasks return it, resubmitting the unfinished deals of a lost one."""
    while running:
        ready, _ = ray.wait(list(running), num_returns=1)
        for gen in ready:
            chunk = running[gen]
            try:
                ref = next(gen)
            except StopIteration:
                del running[gen]
                if chunk.remaining:  # ended without a record for every deal: treat as lost
                    _resubmit(chunk, "the task ended early", submit)
                continue
            try:
                record = ray.get(ref)
            except ray.exceptions.RayError as exc:
                del running[gen]
                _resubmit(chunk, f"{type(exc).__name__}: {_first_line(exc)}", submit)
                continue
            if _owed(chunk, record):
                yield [record]


def _owed(chunk: "_Chunk", record: dict[str, Any]) -> bool:
    """Whether ``record`` is the first for one of ``chunk``'s deals still without one (then no longer owed): a record
    already received, from a task played again, is not given twice."""
    deal = int(record["deal"])
    if deal not in chunk.remaining:
        return False
    chunk.remaining.remove(deal)
    return True


def _collect(ray: Any, running: dict[Any, "_Chunk"], submit) -> Iterator[list[dict[str, Any]]]:
    """Yield each game's record as the chunks' list-returning tasks end (Ray Client), playing a lost chunk again."""
    while running:
        ready, _ = ray.wait(list(running), num_returns=1)
        for ref in ready:
            chunk = running.pop(ref)
            try:
                records = ray.get(ref)
            except ray.exceptions.RayError as exc:
                _resubmit(chunk, f"{type(exc).__name__}: {_first_line(exc)}", submit)
                continue
            for record in records:
                if _owed(chunk, record):
                    yield [record]
            if chunk.remaining:  # ended without a record for every deal: treat as lost
                _resubmit(chunk, "the task ended early", submit)


def prepare(specs: Sequence[str], *, jobs: int = 1, address: str | None = None, retries: int = 3,
            cpus_per_task: float = 1.0) -> Any:
    """What :func:`run_chunks` checks before its first task, the ``ray`` module once it passes: the options, the
    connection to Ray (joined or started here: a bad ``address`` is a :class:`RayConnectionError`) and that every
    agent of ``specs`` can be sent to the workers.  The harness calls it (``run_chunks.prepare``) before any agent
    is built or output folder made."""
    if isinstance(retries, bool) or not isinstance(retries, int) or retries < 0:
        raise ValueError(f"retries={retries!r}: expected an integer >= 0")
    if not (isinstance(cpus_per_task, (int, float)) and not isinstance(cpus_per_task, bool) and cpus_per_task > 0):
        raise ValueError(f"cpus_per_task={cpus_per_task!r}: expected a positive number")
    ray = import_ray("--backend ray")
    joined = address or os.environ.get("RAY_ADDRESS") or None
    started = ensure_ray(address, int(jobs) if jobs and jobs > 1 else None, what="--backend ray")
    _check_task_cpus(ray, cpus_per_task, jobs, started=started, joined=joined if started else None)
    _shipped_entries(ray, specs)
    return ray


def _check_task_cpus(ray: Any, cpus_per_task: float, jobs: int, *, started: bool, joined: str | None) -> None:
    """Refuse a ``cpus_per_task`` above the CPUs of the Ray session this process uses, which could never start a
    chunk (the evaluation would wait forever): the embedded Ray this call ``started`` (then stopped again), or a
    session already open that runs on this machine.  A cluster (``joined`` at that address now, or an open session
    joined to one) may grow (an autoscaler): only warned about."""
    have = float(ray.cluster_resources().get("CPU", 0))
    if cpus_per_task <= have:
        return
    if joined is not None or (not started and not _session_is_local(ray)):
        where = f"at address {joined!r}" if joined is not None else "this process is connected to"
        if (cpus_per_task, where) in _WARNED_CPUS:
            return
        _WARNED_CPUS.add((cpus_per_task, where))
        log.warning("cpus_per_task=%g is more than the %g CPUs the Ray cluster %s has now: its chunks wait until "
                    "the cluster grows (an autoscaling cluster), else forever", cpus_per_task, have, where)
        return
    if started:
        ray.shutdown()  # the embedded Ray this call started: as it was before
        sized = f"jobs={jobs}" if jobs and jobs > 1 else f"jobs={jobs}: all the CPUs this process may use"
        what = f"the {have:g} CPUs of the embedded Ray ({sized})"
        fix = "lower it, or raise jobs, which sizes the embedded Ray"
    else:
        what = f"the {have:g} CPUs of the Ray session already open in this process"
        fix = "lower it, or call ray.shutdown() first so that the evaluation starts its own Ray"
    raise ValueError(f"cpus_per_task={cpus_per_task:g} is more than {what}: no chunk could ever start; expected "
                     f"cpus_per_task <= {have:g} ({fix})")


def _global_node(ray: Any) -> Any:
    """The node object of the Ray session open in this process (None for Ray Client or when Ray does not say): a
    session shut down and opened again has another."""
    return getattr(getattr(getattr(ray, "_private", None), "worker", None), "_global_node", None)


def _session_is_local(ray: Any) -> bool:
    """Whether the Ray session open in this process was started by it (``ray.init()`` without an address: a fixed
    set of CPUs on this machine) rather than joined to a cluster; True when Ray does not say."""
    try:
        node = ray._private.worker._global_node  # None for Ray Client (ray://), a cluster elsewhere
    except AttributeError:
        return True
    return bool(getattr(node, "head", True)) if node is not None else False


run_chunks.prepare = prepare  # type: ignore[attr-defined]  # agents.evaluation._connect_backend asks for it


def _warm_agents(tasks: Sequence[tuple[str, Sequence[int], dict[str, Any]]]) -> None:
    """Build each agent once here first, so learned tables are trained and cached once, not once per worker."""
    from agents.evaluation import EvalConfig
    from agents.registry import make_agent

    seen = set()
    for spec, _, config in tasks:
        key = (spec, repr(sorted(config.items())))
        if key in seen:
            continue
        seen.add(key)
        game = EvalConfig(**config).game()
        try:
            make_agent(spec, system=game.system, rules=game.rules, seed=config.get("seed", 0))
        except Exception:  # noqa: BLE001 - a spec that cannot build is reported per deal by the chunks
            pass


def _resubmit(chunk: _Chunk, why: str, submit) -> None:
    chunk.lost.append(why)
    if chunk.retries >= chunk.max_retries:
        raise _GaveUp(f"agent {chunk.spec!r}: deals {chunk.remaining} could not be played on Ray after "
                      f"{chunk.retries} resubmissions; failures: {chunk.lost}", chunk)
    chunk.retries += 1
    log.warning("Ray worker lost while playing agent %r (%s); resubmitting its %d unfinished deals (retry %d)",
                chunk.spec, why, len(chunk.remaining), chunk.retries)
    submit(chunk)


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0] if text else ""


# --------------------------------------------------------------------------- cost measurement


def _ray_process_rss() -> dict[str, float]:
    """Resident memory (MiB) of the embedded Ray this process started: each worker, and Ray's own services."""
    import psutil

    workers, services = [], 0.0
    for proc in psutil.Process().children(recursive=True):  # an embedded Ray's processes all descend from us
        try:
            title = " ".join(proc.cmdline())
            rss = proc.memory_info().rss / 2**20
        except (psutil.NoSuchProcess, psutil.AccessDenied):
            continue
        if title.startswith("ray::") and not title.startswith(("ray::DashboardAgent", "ray::RuntimeEnvAgent")):
            workers.append(rss)  # task workers retitle themselves ray::IDLE, ray::<task name>
        else:
            services += rss
    return {"workers": len(workers), "worker_rss_mean": float(sum(workers) / len(workers)) if workers else 0.0,
            "worker_rss_max": max(workers, default=0.0), "services_rss": services}


def benchmark(agents: Sequence[tuple[str, int]] = (("greedy", 2000), ("expectimax", 60)), cpus: int = 2,
              seed: int = 0) -> list[dict[str, Any]]:
    """Measure the Ray back end against the local one: start-up, games/s per agent, RSS of Ray processes.

    ``agents`` are ``(agent spec, games)``; they and ``cpus`` are checked, and every agent built once, before Ray
    starts: a bad value is a ``ValueError`` naming it."""
    import time

    from agents.evaluation import _build_or_raise, _check_specs, check_positive_int, check_seed, evaluate, local_workers
    from pokersquares_env.scoring import point_system

    check_positive_int(cpus, "cpus")
    seed = check_seed(seed)
    for spec, games in agents:
        _check_specs(spec)  # the name, options and saved model
        if isinstance(games, bool) or not isinstance(games, int) or games < 1:
            raise ValueError(f"agents: {games!r} games of {spec!r}: expected a positive integer number of games")
    ray = import_ray("the Ray benchmark")
    if ray.is_initialized():
        raise RuntimeError("benchmark() measures Ray's start-up: run it in a process without Ray started")
    for spec in dict.fromkeys(spec for spec, _ in agents):  # a bad option value, before Ray starts
        _build_or_raise(spec, point_system("american"), {}, seed)
    rows: list[dict[str, Any]] = []
    t0 = time.perf_counter()
    ensure_ray(num_cpus=cpus)
    rows.append({"what": f"ray.init(num_cpus={cpus})", "seconds": time.perf_counter() - t0})
    t0 = time.perf_counter()
    evaluate("random", games=cpus, seed=seed, backend="ray", jobs=cpus, chunk_size=1, progress=False)
    rows.append({"what": f"first Ray evaluation ({cpus} workers start)", "seconds": time.perf_counter() - t0})
    for spec, games in agents:
        evaluate(spec, games=2, seed=seed, progress=False)  # build caches (tables) outside the timing
        for backend, jobs in (("local", 1), ("local", cpus), ("ray", cpus)):
            t0 = time.perf_counter()
            res = evaluate(spec, games=games, seed=seed, backend=backend, jobs=jobs, progress=False)
            secs = time.perf_counter() - t0
            ran = local_workers(jobs) if backend == "local" else jobs  # local runs at most one per usable CPU
            capped = f" (--jobs {jobs} capped at the usable CPUs)" if ran < jobs else ""
            rows.append({"what": f"{spec}, {games} games, --backend {backend} --jobs {ran}{capped}", "seconds": secs,
                         "games_per_s": games / secs, "mean": res.summary[0]["mean"]})
    mem = _ray_process_rss()
    rows.append({"what": f"RSS per Ray worker ({mem['workers']} workers, after the runs above)",
                 "MiB": mem["worker_rss_mean"], "max_MiB": mem["worker_rss_max"]})
    rows.append({"what": "RSS of Ray's own services (GCS, raylet, dashboard, agents, monitors), total",
                 "MiB": mem["services_rss"]})
    return rows


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m agents.distributed bench``: print the cost figures of docs/scaling.md as a Markdown table."""
    import argparse

    from pokersquares_env.cli import int_at_least

    parser = argparse.ArgumentParser(prog="python -m agents.distributed", description=main.__doc__)
    parser.add_argument("command", choices=["bench"])
    parser.add_argument("--cpus", type=int_at_least(1), default=2, help="CPUs (workers) of the embedded Ray")
    parser.add_argument("--cheap-games", type=int_at_least(1), default=2000, help="games of the cheap agent (greedy)")
    parser.add_argument("--search", default="expectimax", help="the search agent spec")
    parser.add_argument("--search-games", type=int_at_least(1), default=60, help="games of the search agent")
    args = parser.parse_args(argv)
    try:  # a bad --search spec is named before Ray starts (benchmark checks it first)
        rows = benchmark((("greedy", args.cheap_games), (args.search, args.search_games)), cpus=args.cpus)
    except (ValueError, ImportError) as exc:
        parser.error(str(exc))
    cols = ["what", "seconds", "games_per_s", "mean", "MiB", "max_MiB"]
    print("| " + " | ".join(cols) + " |\n|" + "---|" * len(cols))
    for r in rows:
        print("| " + " | ".join(_bench_number(r[c]) if isinstance(r.get(c), float) else str(r.get(c, ""))
                                for c in cols) + " |")
    return 0


def _bench_number(value: float) -> str:
    """A figure of the bench table: whole numbers with thousands separators from 100 up (``2,030``, not
    ``2.03e+03``), one decimal from 10, three significant digits below."""
    if abs(value) >= 99.5:  # what rounds to 100 or more (99.96 is "100", not "100.0")
        return f"{value:,.0f}"
    if abs(value) >= 9.95:  # what rounds to 10.0 or more (9.9996 is "10.0", not "10")
        return f"{value:.1f}"
    return f"{value:.3g}"


if __name__ == "__main__":
    raise SystemExit(main())
