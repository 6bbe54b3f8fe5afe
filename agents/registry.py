"""Agents by name: ``make_agent("mc:rollouts=200")``, ``make_agent("ppo:runs/ppo.zip")``.

A spec is ``NAME`` or ``NAME:ARG``.  Two kinds of entries exist:

* ``params`` agents read ``ARG`` as comma-separated ``key=value`` options
  (``expectimax:ply=2,tables=PATH``); values are parsed as int, float,
  ``true``/``yes``/``on``, ``false``/``no``/``off``, ``none``/``null`` (any case) or else kept as text (an
  empty value is refused).  The factory is called as
  ``factory(system=..., rules=..., seed=..., **options)``.
* ``path`` agents (learned policies) read ``ARG`` as one path, passed as is but for surrounding spaces:
  ``factory(ARG, system=..., rules=..., seed=...)``.

Entries are ``"module:function"`` strings imported only when used, so a
learned-policy loader that needs torch costs nothing until it is asked for.
"""

from __future__ import annotations

import importlib
import inspect
import os
from collections.abc import Callable
from typing import Any

from agents.base import Agent

__all__ = ["available_agents", "check_model_path", "check_spec", "custom_entry", "make_agent", "parse_spec",
           "register_agent", "spec_key", "without_spec"]

# name -> (target "module:function" or callable, kind)
_REGISTRY: dict[str, tuple[Any, str]] = {}
_KINDS = ("params", "path")


def register_agent(name: str, target: str | Callable[..., Agent], *, kind: str = "path") -> None:
    """Make ``name`` (or ``name:ARG``) build an agent through ``target`` (``"module:function"`` or a callable).

    ``kind="path"`` (the default, for learned policies) passes ``ARG`` as a path:
    ``factory(PATH, system=..., rules=..., seed=...)``; ``kind="params"`` (a rule or search agent) parses it as
    ``key=value`` options: ``factory(system=..., rules=..., seed=..., **options)``.  ``name`` must be lower case: specs are read in lower case.
    A ``"module:function"`` target also reaches Ray workers (``--backend ray`` registers it there); a callable is
    sent to them pickled, and must be loadable there.
    """
    if not isinstance(name, str) or not name or ":" in name or "," in name or name != name.strip():
        raise ValueError(f"agent name {name!r}: expected a non-empty name without ':', ',' or surrounding spaces")
    if name != name.lower():
        raise ValueError(f"agent name {name!r}: expected a lower-case name such as {name.lower()!r} (specs are read "
                         f"in lower case, so {name!r} could never be asked for)")
    if kind not in _KINDS:
        raise ValueError(f"kind={kind!r}: expected one of {', '.join(_KINDS)}")
    if isinstance(target, str):
        if target.count(":") != 1 or not all(target.split(":")):
            raise ValueError(f"agent target {target!r}: expected 'module:function'")
    elif not callable(target):
        raise TypeError(f"agent target {target!r}: expected 'module:function' or a callable")
    _REGISTRY[name] = (target, kind)


def custom_entry(spec: str) -> tuple[str, Any, str] | None:
    """``(name, target, kind)`` of the entry ``spec`` names when :func:`register_agent` added it in this process (or
    replaced a built-in one); None for a built-in agent.  A process that starts with the built-in registry only (a
    Ray worker) needs it to build the agent."""
    name = parse_spec(spec)[0]
    entry = _REGISTRY[name]
    return None if _BUILT_IN.get(name) == entry else (name, *entry)


def spec_key(spec: str) -> tuple[Any, ...]:
    """What tells agents apart: the name (read in lower case) and, for a ``params`` agent, its options in any order
    (``'Greedy'`` is ``'greedy'``, ``'mc:rollouts=8,candidates=3'`` is ``'mc:candidates=3,rollouts=8'``); for a
    ``path`` agent, the path as given (without surrounding spaces)."""
    name, arg, options = parse_spec(spec)
    if _REGISTRY[name][1] == "path":
        return (name, arg)
    return (name, tuple(sorted(options.items())))


def available_agents() -> list[str]:
    """The registered agent names, sorted."""
    return sorted(_REGISTRY)


def _value(text: str) -> Any:
    low = text.strip().lower()
    if low in ("true", "yes", "on"):
        return True
    if low in ("false", "no", "off"):
        return False
    if low in ("none", "null"):
        return None
    for cast in (int, float):
        try:
            return cast(text)
        except ValueError:
            pass
    return text.strip()


def parse_spec(spec: str) -> tuple[str, str | None, dict[str, Any]]:
    """``(name, raw ARG or None, options)`` of an agent spec (options only for ``params`` agents)."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec {spec!r}: expected a name such as {', '.join(available_agents())}")
    name, sep, arg = spec.strip().partition(":")
    name = name.strip().lower()
    if name not in _REGISTRY:
        raise ValueError(f"unknown agent {name!r} in spec {spec!r}: expected one of {', '.join(available_agents())}")
    kind = _REGISTRY[name][1]
    if kind == "path":  # spaces around the path dropped, as around options ("fastppo: runs/x" is runs/x)
        return name, (arg.strip() if sep else None), {}
    options: dict[str, Any] = {}
    if sep and not arg.strip():  # 'random:' was taken as 'random' under another label
        raise ValueError(f"agent spec {spec!r}: nothing after ':': expected {name} alone or {name}:KEY=VALUE,...")
    if sep:
        for item in arg.split(","):
            key, eq, val = item.partition("=")
            key = key.strip()
            if not eq or not key.isidentifier():
                raise ValueError(f"agent spec {spec!r}: option {item!r} is not of the form key=value")
            if not val.strip():  # an empty value is no value: refused, rather than read as '' (cache= was "off")
                raise ValueError(f"agent spec {spec!r}: option {key!r} has no value: expected {key}=VALUE")
            if key in options:
                raise ValueError(f"agent spec {spec!r}: option {key!r} is given twice: expected each option once")
            options[key] = _value(val)
    return name, (arg if sep else None), options


def _resolve(name: str) -> Callable[..., Agent]:
    target = _REGISTRY[name][0]
    if callable(target):
        return target
    module_name, func_name = target.split(":")
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as exc:
        hint = ("learned policies need the training extra: pip install \"pokersquares_env[train]\""
                if _BUILT_IN.get(name) == _REGISTRY[name] else
                "expected a module this process can import (on Ray, every worker)")
        raise ImportError(f"agent {name!r} needs module {module_name!r}, which could not be imported ({exc}); {hint}"
                          ) from exc
    try:
        return getattr(module, func_name)
    except AttributeError:
        raise ImportError(f"agent {name!r}: module {module_name!r} has no {func_name!r}") from None


_CALLER_ARGS = ("system", "rules", "seed")  # what make_agent passes every params factory itself: never spec options


def _check_options(spec: str, name: str, factory: Callable[..., Agent], options: dict[str, Any]) -> None:
    try:
        params = inspect.signature(factory).parameters
    except (TypeError, ValueError):  # no signature: let the call decide
        return
    reserved = [k for k in options if k in _CALLER_ARGS]
    if reserved:  # given by the caller (make_agent, the harness), never in a spec: refused even before **kwargs
        raise ValueError(f"agent spec {spec!r}: option(s) {', '.join(reserved)} cannot be set in a spec (the point "
                         f"system, rules and seed come from the game and the caller: --scoring, --rules, --seed)")
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        return
    accepted = [n for n, p in params.items()
                if p.kind in (inspect.Parameter.KEYWORD_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)
                and n not in (*_CALLER_ARGS, "self")]
    unknown = [k for k in options if k not in accepted]
    if unknown:
        raise ValueError(
            f"agent spec {spec!r}: unknown option(s) {', '.join(unknown)}; "
            f"{name!r} accepts {', '.join(accepted) or 'no options'}"
        )


def without_spec(spec: str, message: str) -> str:
    """``message`` without a leading ``"SPEC:"``: a loader's error may start with the spec, which callers name
    themselves, so that it is said once (``spec`` as the loaders see it, stripped)."""
    spec = spec.strip()
    if message.startswith(f"{spec}:"):
        return message[len(spec) + 1:].lstrip()
    return message


def check_spec(spec: str) -> None:
    """Raise ``ValueError`` naming the problem if ``spec`` names no agent or an unknown option (builds nothing)."""
    name, arg, options = parse_spec(spec)
    if _REGISTRY[name][1] == "path":
        if not arg:
            raise ValueError(f"agent spec {spec!r}: expected {name}:PATH (the saved model to load)")
        return
    _check_options(spec, name, _resolve(name), options)


def _path_kind_hint(name: str) -> str:
    """For an agent a user registered with the default ``kind="path"``: a note that says so (a rule or search agent
    registered without ``kind="params"`` otherwise fails with messages about saved models); '' for a built-in."""
    if _BUILT_IN.get(name) == _REGISTRY[name]:
        return ""
    return (f" ({name!r} was registered with kind='path', the default, for saved models: its factory is called as "
            f"factory(PATH, system=..., rules=..., seed=...); register_agent({name!r}, ..., kind='params') makes "
            f"it take {name}:KEY=VALUE,... options)")


def check_model_path(spec: str) -> None:
    """Raise ``ValueError`` if ``spec`` is a ``PREFIX:PATH`` agent whose saved model is not on this machine."""
    name, arg, _options = parse_spec(spec)
    if _REGISTRY[name][1] == "path" and arg and not os.path.exists(arg):
        raise ValueError(f"agent spec {spec!r}: no file or folder {arg!r}: expected a saved model (a model file "
                         f"or a training run folder){_path_kind_hint(name)}")


def make_agent(spec: str, *, system: Any = None, rules: Any = None, seed: int | None = None) -> Agent:
    """The agent a spec names, set up for ``system`` (point system spec) and ``rules`` (``Rules`` or dict).

    Unknown names and options raise ``ValueError`` listing what exists; so do an option given twice and a ``seed``
    that is not None or an integer >= 0.
    """
    from pokersquares_env.core import Rules
    from pokersquares_env.scoring import point_system

    name, arg, options = parse_spec(spec)
    kind = _REGISTRY[name][1]
    if seed is not None:
        from agents.evaluation import check_seed

        seed = check_seed(seed)
    ps = point_system("american" if system is None else system)
    if rules is None:
        rules = Rules()
    elif isinstance(rules, dict):
        rules = Rules.parse(rules)  # an unknown key is named, with the valid ones
    elif not isinstance(rules, Rules):
        raise TypeError(f"rules={rules!r}: expected a Rules, a dict of Rules fields or None")
    factory = _resolve(name)
    if kind == "path":
        if not arg:
            raise ValueError(f"agent spec {spec!r}: expected {name}:PATH (the saved model to load)"
                             f"{_path_kind_hint(name)}")
        try:
            agent = factory(arg, system=ps, rules=rules, seed=seed)
        except TypeError as exc:
            hint = _path_kind_hint(name)
            if not hint:
                raise
            raise TypeError(f"agent spec {spec!r}: {exc}{hint}") from exc
    else:
        _check_options(spec, name, factory, options)
        agent = factory(system=ps, rules=rules, seed=seed, **options)
    if not isinstance(agent, Agent):
        raise TypeError(f"agent factory for {name!r} returned {type(agent).__name__}: expected an agents.Agent")
    if getattr(agent, "spec", None) is None:
        agent.spec = spec.strip()
    return agent


# Built-in agents.
register_agent("random", "agents.simple:RandomAgent", kind="params")
register_agent("greedy", "agents.simple:GreedyAgent", kind="params")
register_agent("rules", "agents.simple:RuleAgent", kind="params")
register_agent("mc", "agents.mc:MonteCarloAgent", kind="params")
register_agent("expectimax", "agents.expectimax:ExpectimaxAgent", kind="params")
register_agent("search", "agents.search:RolloutSearchAgent", kind="params")
# Learned policies (written by the training work; loaded lazily, need the "train" extra).
register_agent("ppo", "agents.learned:load_ppo")
register_agent("dqn", "agents.learned:load_dqn")
register_agent("fastppo", "agents.learned:load_fastppo")
#: the entries above, to tell them from those register_agent adds later (:func:`custom_entry`)
_BUILT_IN: dict[str, tuple[Any, str]] = dict(_REGISTRY)
