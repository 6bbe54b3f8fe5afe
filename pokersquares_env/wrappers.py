"""Gymnasium wrappers of the package.

* :class:`RecordGames` saves every finished episode of a Poker Squares env as
  a game record (:mod:`pokersquares_env.records`), one JSON file per game in a
  folder and/or one line per game in a JSONL file::

      env = RecordGames(gym.make("PokerSquares-v0"), "runs/games", jsonl=True)
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Mapping
from typing import Any

import gymnasium as gym

__all__ = ["RecordGames"]

#: The ``meta`` keys that :class:`RecordGames` writes in every record (``illegal_action`` only after an illegal
#: action ends an episode), so a ``meta`` given to it may not hold them.
RESERVED_META_KEYS = ("episode", "illegal_action")


class RecordGames(gym.Wrapper, gym.utils.RecordConstructorArgs):
    """Record every finished episode of a Poker Squares env as a game record in ``folder``.

    A finished episode (terminated or truncated) is saved as
    ``folder/{name_prefix}-{episode:06d}.json`` (atomically: an interrupted
    save leaves no half-written file) and, with ``jsonl``, appended as one line
    to ``folder/{name_prefix}s.jsonl`` (``jsonl=True``) or to the path given.
    Episodes abandoned by a ``reset()`` before they end are not recorded.

    Episodes are numbered from 0 in a folder without such files; in a folder
    that already holds ``{name_prefix}-NNNNNN.json`` files or a JSONL file of
    records (an earlier run), numbering continues after the highest of them
    (file names and the records' ``meta["episode"]``), so no file is replaced
    and the JSONL lines (which keep being appended) and the JSON files keep
    matching by ``meta["episode"]``.  Should a file of the number due appear
    meanwhile (another writer on the folder), the episode takes the number
    after the highest file then present.  ``episode_trigger`` counts this
    wrapper's own episodes from 0, as Gymnasium's ``RecordVideo`` does,
    whatever numbers the files get.

    The record holds the seed passed to the episode's ``reset`` (``None`` when
    the episode was not seeded), ``agent`` and ``meta`` as given, plus
    ``meta["episode"]``, ``meta["env"]`` (the env id, when it has one) and,
    for an episode ended by an illegal action under ``illegal_action="penalty"``,
    ``meta["illegal_action"]`` (such a record is unfinished); a ``meta`` that
    holds ``"episode"`` or ``"illegal_action"`` itself is refused when the
    wrapper is made (``"env"`` is the caller's to set).  The final step's
    info gets ``record_path`` (the JSON file, or the JSONL file when
    ``json_files=False``).

    The wrapped env must be a Poker Squares env: its ``unwrapped`` either has
    ``game_record(seed=, agent=, meta=)`` returning a
    :class:`~pokersquares_env.records.GameRecord`, or ``game`` (a
    ``PokerSquaresGame``) and ``state`` (its ``GameState``), as
    ``PokerSquares-v0`` does.

    Args:
        env: the env to record.
        folder: where the records go (created if missing).
        name_prefix: file name prefix (default ``"game"``): no path separator or NUL character.
        jsonl: ``False`` (default), ``True`` for ``{name_prefix}s.jsonl`` in the folder, or a path (its folder
            is created if missing).  An episode's JSONL line and JSON file are written both or neither.
        json_files: write one JSON file per game (default ``True``).
        episode_trigger: ``episode -> bool``, which episodes to record, counted from 0 for this wrapper (not the
            file numbers, which continue an earlier run's); default all.
        agent: the agent name stored in every record (a string or ``None``).
        meta: extra JSON-ready data stored in every record's ``meta``, without the keys the wrapper writes
            (:data:`RESERVED_META_KEYS`).
    """

    def __init__(
        self,
        env: gym.Env,
        folder: str | os.PathLike,
        *,
        name_prefix: str = "game",
        jsonl: bool | str | os.PathLike = False,
        json_files: bool = True,
        episode_trigger: Callable[[int], bool] | None = None,
        agent: str | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        # Kept in env.spec, so gym.make(env.spec) rebuilds the wrapper, as for Gymnasium's own wrappers.
        gym.utils.RecordConstructorArgs.__init__(
            self, folder=folder, name_prefix=name_prefix, jsonl=jsonl, json_files=json_files,
            episode_trigger=episode_trigger, agent=agent, meta=meta,
        )
        gym.Wrapper.__init__(self, env)
        from pokersquares_env.core import PokerSquaresGame

        base = env.unwrapped
        if not callable(getattr(base, "game_record", None)) and not isinstance(getattr(base, "game", None),
                                                                             PokerSquaresGame):
            raise TypeError(
                f"RecordGames needs a Poker Squares env (one with .game and .state, or .game_record()); "
                f"got {type(base).__name__}"
            )
        separators = [sep for sep in (os.sep, os.altsep) if sep]
        if (not isinstance(name_prefix, str) or not name_prefix or "\0" in name_prefix
                or any(sep in name_prefix for sep in separators)):
            # refused now: a file name that cannot be made would otherwise fail at the first episode's end
            raise ValueError(f"name_prefix={name_prefix!r}: expected a non-empty file name prefix without "
                             f"{' or '.join(map(repr, separators))} or a NUL character")
        if not json_files and not jsonl:
            raise ValueError("json_files=False and jsonl=False would record nothing: enable one of them")
        if episode_trigger is not None and not callable(episode_trigger):
            raise TypeError(f"episode_trigger={episode_trigger!r}: expected a function episode -> bool, or None")
        if meta is not None and not isinstance(meta, dict):
            raise TypeError(f"meta={meta!r}: expected a dict of JSON-ready values")
        # the wrapper's value (or the env's: Poker Shuffle's mode, swaps, ...) would replace the caller's, silently
        written = RESERVED_META_KEYS + tuple(getattr(base, "record_meta_keys", ()))
        reserved = [key for key in written if key in (meta or {})]
        if reserved:
            named = ", ".join(f"meta[{key!r}]" for key in reserved)
            raise ValueError(f"{named}: the records of this env get {', '.join(map(repr, written))} from RecordGames "
                             f"and the env; expected meta without them (keys {sorted(meta, key=str)} given)")
        from pokersquares_env.records import RecordError, _check_fields, _check_meta_keys

        # agent and meta as every record checks them, so that a bad one is refused now, not at an episode's end
        _check_fields(None, agent, meta or {}, lambda where, msg: TypeError(f"RecordGames {where}: {msg}"))
        try:
            _check_meta_keys(meta or {}, "meta")  # json.dumps below would write {1: ...} as {"1": ...} without a word
        except RecordError as exc:
            raise TypeError(f"RecordGames meta: {str(exc).removeprefix('record: ')}") from None
        try:
            json.dumps(meta, allow_nan=False)  # as a record is saved: standard JSON, no NaN or infinity
        except (TypeError, ValueError, RecursionError) as exc:
            raise TypeError(f"meta={meta!r}: expected JSON-ready values, without NaN or infinity ({exc})") from None
        self.folder = _path_arg("folder", folder, "the path of a folder")
        if jsonl is True:
            self.jsonl_path: str | None = os.path.join(self.folder, f"{name_prefix}s.jsonl")
        elif jsonl is False or jsonl is None:
            self.jsonl_path = None
        else:
            self.jsonl_path = _path_arg("jsonl", jsonl, "True, False or the path of a JSONL file")
        if self.jsonl_path is not None and os.path.isdir(self.jsonl_path):
            raise ValueError(f"jsonl={self.jsonl_path!r} is a folder: expected the path of a JSONL file")
        made_folder = not os.path.isdir(self.folder)
        try:
            os.makedirs(self.folder, exist_ok=True)
        except OSError as exc:
            raise ValueError(f"folder={self.folder!r}: cannot create it ({exc.strerror or exc})") from None
        if self.jsonl_path is not None:
            try:
                _make_jsonl_folder(self.jsonl_path)
            except ValueError:
                if made_folder:  # leave the files as they were
                    try:
                        os.rmdir(self.folder)
                    except OSError:
                        pass
                raise
        self.name_prefix = name_prefix
        self.json_files = bool(json_files)
        self.episode_trigger = episode_trigger
        self.agent = agent
        self.meta = dict(meta or {})
        # -1 in a new folder: the first episode is 0; after an earlier run's files or JSONL records, the next number
        self.episode_id = max(_highest_index(self.folder, name_prefix), _highest_jsonl_episode(self.jsonl_path))
        self.episode_count = -1  # this wrapper's episodes, as episode_trigger counts them
        self.recorded: list[str] = []
        self._seed: int | None = None
        self._active = False

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None):
        """Reset the env and start a new episode.  A seed longer than a record holds (``records.MAX_SEED_BITS``) is a
        ``ValueError`` here, before the env is reset, rather than at the episode's last step."""
        from pokersquares_env.records import MAX_SEED_BITS

        if isinstance(seed, int) and not isinstance(seed, bool) and seed.bit_length() > MAX_SEED_BITS:
            raise ValueError(f"seed: an integer of {seed.bit_length():,} bits, but a game record holds seeds of at most "
                             f"{MAX_SEED_BITS} bits: expected a smaller seed (any size deals; RecordGames records it)")
        obs, info = self.env.reset(seed=seed, options=options)
        self.episode_id += 1
        self.episode_count += 1
        # the record's seed is the deal's: a deck given in options (Poker Shuffle's cards) is not the seed's deal, so
        # the record then holds no seed, as an unseeded reset's does (the deck itself is in the record)
        dealt = isinstance(options, Mapping) and any(options.get(k) is not None for k in ("deck", "cards"))
        self._seed = None if dealt else seed
        self._active = self.episode_trigger is None or bool(self.episode_trigger(self.episode_count))
        return obs, info

    def step(self, action: Any):
        """Step the env; save the record when the episode ends."""
        obs, reward, terminated, truncated, info = self.env.step(action)
        if (terminated or truncated) and self._active:
            self._active = False
            info = dict(info)
            info["record_path"] = self._save(info)
        return obs, reward, terminated, truncated, info

    def _record(self, info: dict[str, Any]) -> Any:
        from pokersquares_env.records import GameRecord

        meta = dict(self.meta)
        meta["episode"] = self.episode_id
        spec = getattr(self.env, "spec", None)
        if spec is not None and getattr(spec, "id", None):
            meta.setdefault("env", spec.id)  # e.g. PokerShuffle-v0, whose arrangement replays as a Poker Squares game
        if "illegal_action" in info:
            meta["illegal_action"] = str(info["illegal_action"])
        base = self.env.unwrapped
        if callable(getattr(base, "game_record", None)):
            return base.game_record(seed=self._seed, agent=self.agent, meta=meta)
        return GameRecord.from_game(base.game, base.state, seed=self._seed, agent=self.agent, meta=meta)

    def _save(self, info: dict[str, Any]) -> str:
        """Write one episode's record: its JSONL line, then its JSON file; all or nothing.

        Both writers check the record before touching a file.  If the JSON file cannot be written after the line
        was appended, the JSONL file is cut back to its former length (removed if the line made it).
        """
        from pokersquares_env.records import append_record, save_record

        if self.json_files and os.path.exists(self._json_path()):  # written meanwhile by another writer: not replaced
            self.episode_id = max(self.episode_id, _highest_index(self.folder, self.name_prefix) + 1)
        record = self._record(info)
        path = None
        if self.jsonl_path is not None:
            size = os.path.getsize(self.jsonl_path) if os.path.exists(self.jsonl_path) else None
            append_record(record, self.jsonl_path)
        if self.json_files:
            path = self._json_path()
            try:
                save_record(record, path)
            except BaseException:
                if self.jsonl_path is not None:
                    _undo_append(self.jsonl_path, size)
                raise
        path = path or self.jsonl_path
        self.recorded.append(path)
        return path

    def _json_path(self) -> str:
        """The JSON file of the current episode."""
        return os.path.join(self.folder, f"{self.name_prefix}-{self.episode_id:06d}.json")


def _highest_jsonl_episode(path: str | None) -> int:
    """The highest whole ``meta.episode`` of the records in a JSONL file (-1 for none, no file or no such field);
    lines that are not JSON objects are skipped: the numbers only have to stay clear of the earlier ones."""
    if path is None or not os.path.isfile(path):
        return -1
    best = -1
    try:
        with open(path, encoding="utf-8", errors="replace") as fh:
            for line in fh:
                try:
                    episode = json.loads(line).get("meta", {}).get("episode")
                except (ValueError, AttributeError, RecursionError):
                    continue
                if isinstance(episode, int) and not isinstance(episode, bool):
                    best = max(best, episode)
    except OSError:
        return -1
    return best


def _highest_index(folder: str, prefix: str) -> int:
    """The highest episode number of the ``{prefix}-NNNNNN.json`` files in ``folder`` (-1 when there are none)."""
    pattern = re.compile(re.escape(prefix) + r"-(\d{6,})\.json")
    try:
        names = os.listdir(folder)
    except OSError:
        return -1
    return max((int(m.group(1)) for m in map(pattern.fullmatch, names) if m), default=-1)


def _path_arg(name: str, value: Any, expected: str) -> str:
    """A path argument as a ``str``: a ``TypeError`` naming ``value`` for anything else, ``ValueError`` for ''."""
    if not isinstance(value, (str, os.PathLike)):
        raise TypeError(f"{name}={value!r}: expected {expected} (a str or os.PathLike)")
    path = os.fspath(value)
    if not isinstance(path, str):
        raise TypeError(f"{name}={value!r}: expected {expected} as text, not bytes")
    if not path:
        raise ValueError(f"{name}={value!r}: expected {expected}, not an empty path")
    return path


def _make_jsonl_folder(path: str) -> None:
    """Make a JSONL file's folder (and check the file can be appended to), so that no episode's end finds that its
    line cannot be written: a ``ValueError`` naming the path otherwise."""
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError as exc:
        raise ValueError(f"jsonl={path!r}: cannot create its folder {folder!r} ({exc.strerror or exc}): expected "
                         f"the path of a JSONL file in a folder that exists or can be made") from None
    target = path if os.path.exists(path) else folder
    if not os.access(target, os.W_OK):
        raise ValueError(f"jsonl={path!r}: {target!r} is not writable: expected a JSONL file that can be appended to")
    from pokersquares_env.records import RecordError, _check_append_target

    try:
        _check_append_target(path)  # what append_record will ask of it at the first episode's end
    except (RecordError, OSError) as exc:
        why = exc if isinstance(exc, RecordError) else f"cannot read it ({exc.strerror or exc})"
        raise ValueError(f"jsonl={path!r}: {why}") from None


def _undo_append(path: str, size: int | None) -> None:
    """Cut a JSONL file back to ``size`` bytes (remove it when ``size`` is None: the append made it)."""
    try:
        if size is None:
            os.unlink(path)
        else:
            os.truncate(path, size)
    except OSError:
        pass  # the error being raised already says what went wrong
