"""Build an agent from a short text spec (used by ``smear-eval``, configs and the play CLI).

Specs:

* ``random`` -- :class:`~smear_env.agents.base.RandomAgent`;
* ``heuristic`` -- :class:`~smear_env.agents.heuristic.HeuristicAgent`;
* ``passer`` -- :class:`~smear_env.agents.fixed.PasserAgent`, a known-answer agent (lowest legal action id:
  always passes when it may);
* ``pimc`` or ``pimc:samples=16,budget_ms=80`` -- ``smear_env.agents.pimc.PimcAgent(rules, **options)``
  (imported lazily; option values are parsed as int, then float, then ``true``/``false``, else kept as text);
* a shipped agent's name (``default``; the table :data:`~smear_env.agents.shipped.SHIPPED_AGENTS`) -- its
  checkpoint file, found inside the installed package or in a clone's ``checkpoints/`` folder;
* a checkpoint path (a name ending ``.safetensors``, or any existing file) -- loaded lazily with
  ``smear_env.agents.checkpoint.load_agent(path, rules)`` (numpy only, no torch);
* ``openspiel:ismcts`` or ``openspiel:ismcts,simulations=100,uct_c=2`` -- OpenSpiel's ISMCTS bot
  (:mod:`smear_env.envs.integrations.openspiel_agent`; needs ``pip install "smear-rl[openspiel]"``);
* ``cmd:<command line>`` or ``cmd[timeout=5]:<command line>`` -- a bot in any language, run as a child
  process speaking the line-based JSON protocol of docs/PROTOCOL.md
  (:class:`~smear_env.agents.protocol_agent.ProtocolAgent`);
* ``rollout:base=default,samples=32,phases=trump+discard+play,...`` -- the rollout search
  (:func:`rollout_from_spec`), and ``split:bid=<spec>,play=<spec>`` -- one agent
  bids and names trump, the other discards and plays (:mod:`smear_env.agents.composite`): batched agents,
  seated here one seat at a time (:class:`~smear_env.agents.batched.OneSeatAgent`).

A ``cmd:`` spec runs a program. Programs run only with the user's consent: a spec the user typed on the
command line (``smear-eval``, ``smear-play``, ``smear-serve --agent``/``--hint``) or wrote in their own code
gives it; a spec read from a file (a ``smear-train`` config) or received over the network does not, unless
the user allows it (``smear-train --allow-commands``). :func:`make_agent` with ``allow_commands=False`` and
:func:`check_commands_allowed` refuse such specs with :class:`CommandNotAllowed` naming the spec and how to
allow it.

The agent's ``name`` is set to its spec, so records and tables show what was asked for.

:func:`smear_env.agents.batched.make_batched_agent` gives any of these specs in batched form (one call
for many seats) and :func:`smear_env.agents.batched.can_vectorise` says which ones are vectorised.
"""

from __future__ import annotations

import inspect
import os
import re
import warnings
from typing import Any

import numpy as np

from ..core.actions import short_repr
from ..core.config import SmearRules
from .base import Agent, RandomAgent
from .batched import BatchedAgent, BatchedCheckpointAgent, BatchedRandomAgent, OneSeatAgent, PerSlotAgent
from .checkpoint import load_agent
from .composite import CompositeAgent, parse_split_spec
from .fixed import PasserAgent
from .heuristic import HeuristicAgent
from .heuristic_batched import BatchedHeuristicAgent
from .pimc import PimcAgent
from .protocol_agent import ProtocolAgent
from .rollout import ROLLOUT_OPTIONS, ROLLOUT_PREFIX, RolloutAgent
from .shipped import SHIPPED_AGENTS, shipped_path
from .specs import parse_key_values, shown_spec
from .winprob import load_winprob

BUILTIN_NAMES = ("random", "heuristic", "pimc")
CHECKPOINT_SUFFIX = ".safetensors"


def _valid_specs() -> str:
    return (
        "valid specs: 'random', 'heuristic', 'passer', 'pimc' or 'pimc:key=value,...' "
        "(e.g. 'pimc:samples=16,budget_ms=80'), "
        f"a shipped agent ({', '.join(map(repr, SHIPPED_AGENTS))}), "
        f"the path of a checkpoint file ('*{CHECKPOINT_SUFFIX}'), "
        "'cmd:<command line>' for a bot speaking docs/PROTOCOL.md "
        "(e.g. 'cmd:python examples/random_bot.py'), "
        "'rollout:key=value,...' (a search, e.g. 'rollout:base=default,samples=8,phases=play'), "
        "'split:bid=<spec>,play=<spec>' "
        "or 'openspiel:ismcts,simulations=100' (OpenSpiel's ISMCTS; the openspiel extra)"
    )


def parse_agent_options(spec: str, text: str) -> dict[str, Any]:
    """``"samples=16,budget_ms=80"`` -> ``{"samples": 16, "budget_ms": 80}``; malformed -> ValueError."""
    return parse_key_values(spec, text, _valid_specs())


def _accepts(annotation: str, value: Any) -> bool:
    """Whether a spec value fits a constructor parameter annotated ``annotation`` (a string such as
    ``"int"``, ``"float | None"``; ``none`` is a spec's None)."""
    kinds = {k.strip() for k in str(annotation).split("|")}
    if "None" in kinds and isinstance(value, str) and value.lower() == "none":
        return True
    if isinstance(value, bool):
        return "bool" in kinds
    if isinstance(value, int):
        return bool(kinds & {"int", "float"})
    if isinstance(value, float):
        return "float" in kinds
    return "str" in kinds or not kinds & {"int", "float", "bool", "None"}


def check_options(spec: str, cls: type, options: dict[str, Any]) -> None:
    """Every option of ``spec`` names a keyword parameter of ``cls`` (other than ``rules``; any name when it
    takes ``**options``) and has a value of its type; else ``ValueError`` naming the option and the valid
    ones (or the expected type)."""

    sig = inspect.signature(cls).parameters
    params = {k: p for k, p in sig.items()
              if k != "rules" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    any_name = any(p.kind == p.VAR_KEYWORD for p in sig.values())
    for key, value in options.items():
        if key not in params:
            if any_name:
                continue
            raise ValueError(f"bad agent spec {shown_spec(spec)}: unknown option {key!r}; valid options: "
                             f"{', '.join(params)}")
        ann = params[key].annotation
        if ann is not inspect.Parameter.empty and not _accepts(ann, value):
            raise ValueError(f"bad agent spec {shown_spec(spec)}: option {key}={value!r} must be {ann}")


class CommandNotAllowed(ValueError):
    """A ``cmd:`` spec from a source the user has not allowed to run programs (see the module docstring)."""


_COMMAND_PART = re.compile(r"(?:^|[=,])\s*cmd[:\[]")


def is_command_spec(spec: Any) -> bool:
    """Whether ``spec`` runs a program: a ``cmd:`` / ``cmd[...]:`` spec, or a search or split spec with one
    inside it (``split:bid=cmd:...,play=heuristic``, ``rollout:base=cmd:...``)."""
    return isinstance(spec, str) and _COMMAND_PART.search(spec) is not None


def check_commands_allowed(specs: Any, allow_commands: bool, origin: str = "this source",
                           how: str = "pass --allow-commands") -> None:
    """Raise :class:`CommandNotAllowed` unless ``allow_commands`` or none of ``specs`` (agent specs; other
    values are ignored) runs a program. The message names the first such spec, where it came from
    (``origin``, e.g. ``"config key 'selfplay.opponents'"``) and how to allow it (``how``)."""
    if allow_commands:
        return
    for spec in specs:
        if is_command_spec(spec):
            raise CommandNotAllowed(
                f"agent spec {short_repr(spec.strip())} from {origin} runs a program; programs from a "
                f"file or the network run only with your consent: {how} if you trust it"
            )


def is_checkpoint_spec(spec: str) -> bool:
    return spec.endswith(CHECKPOINT_SUFFIX) or os.path.isfile(spec)


def _load_checkpoint(path: str, rules: SmearRules) -> Agent:
    return load_agent(path, rules)


def make_agent(spec: str, rules: SmearRules | None = None, *, allow_commands: bool = True) -> Agent:
    """The agent named by ``spec`` (see the module docstring). Unknown spec -> ``ValueError`` naming the
    valid ones; a checkpoint path that does not exist -> ``FileNotFoundError``. ``allow_commands=False``
    (a spec from a file or the network): a ``cmd:`` spec is :class:`CommandNotAllowed` (a ``ValueError``)
    and no program is started."""
    if not isinstance(spec, str):
        raise TypeError(f"agent spec must be a string, not {type(spec).__name__}; {_valid_specs()}")
    check_commands_allowed([spec], allow_commands, "an untrusted source",
                           "give it on the command line of the program that plays it")
    rules = rules if rules is not None else SmearRules()
    text = spec.strip()
    base, _, opts = text.partition(":")
    agent: Any
    if text.startswith(("cmd:", "cmd[")):
        return ProtocolAgent.from_spec(text)  # named by its spec
    if base in ("random", "heuristic") and not opts:
        if base == "random":
            agent = RandomAgent()
        else:
            agent = HeuristicAgent(rules)
    elif base == "passer" and not opts:
        agent = PasserAgent()
    elif base == "pimc":
        options = parse_agent_options(spec, opts)

        check_options(spec, PimcAgent, options)
        try:
            agent = PimcAgent(rules, **options)
        except TypeError as e:  # pragma: no cover - check_options names the bad option first
            raise ValueError(f"bad agent spec {spec!r}: {e}") from None
    elif text.startswith(("rollout:", "split:")):
        agent = OneSeatAgent(make_batched_agent(text, rules))
    elif base == "openspiel":
        try:
            from ..envs.integrations.openspiel_agent import agent_from_spec  # lazy: needs open_spiel
        except ImportError as e:
            raise ValueError(f"bad agent spec {spec!r}: OpenSpiel is not installed ({e.msg}); "
                             "pip install 'smear-rl[openspiel]'") from None

        agent = agent_from_spec(spec, rules, opts, parse_agent_options)
    elif base in SHIPPED_AGENTS:
        if opts:
            raise ValueError(
                f"bad agent spec {shown_spec(spec)}: shipped agent {base!r} takes no options; "
                f"{_valid_specs()}"
            )
        agent = _load_checkpoint(str(shipped_path(base)), rules)
    elif is_checkpoint_spec(text):
        if not os.path.exists(text):  # a directory or a device: load_agent says what it is
            raise FileNotFoundError(
                f"checkpoint {shown_spec(text)} not found: agent spec {shown_spec(spec)} names a checkpoint "
                "file that does not exist"
            )
        agent = _load_checkpoint(text, rules)
    else:
        raise ValueError(f"unknown agent spec {shown_spec(spec)}; {_valid_specs()}")
    try:
        agent.name = text
    except AttributeError:  # pragma: no cover - an agent with a read-only name keeps its own
        pass
    return agent


__all__ = ["BUILTIN_NAMES", "check_options", "is_checkpoint_spec", "make_agent", "parse_agent_options"]


# ------------------------------------------------------------------ batched agents and the search specs
SEARCH_PREFIXES = ("rollout:", "split:")
"""Specs whose agent is batched by nature (:func:`make_batched_agent` builds it directly)."""


def _kind(spec: str) -> str:
    """``"random"``, ``"heuristic"``, ``"checkpoint"``, ``"search"`` (a :data:`SEARCH_PREFIXES` spec) or
    ``"per_slot"`` for a spec, resolved in the order of
    :func:`~smear_env.agents.registry.make_agent` (not validated: a bad spec is ``"per_slot"``, and
    :func:`make_batched_agent` then raises what ``make_agent`` raises)."""
    text = spec.strip()
    base, _, opts = text.partition(":")
    if text.startswith(("cmd:", "cmd[")):
        return "per_slot"
    if text.startswith(SEARCH_PREFIXES):
        return "search"
    if base in ("random", "heuristic") and not opts:
        return base
    if base == "pimc":
        return "per_slot"
    if base in SHIPPED_AGENTS:
        return "per_slot" if opts else "checkpoint"
    if is_checkpoint_spec(text):
        return "checkpoint"
    return "per_slot"


def can_vectorise(spec: str) -> bool:
    """Whether :func:`make_batched_agent` ``(spec)`` gives a vectorised agent (no per-row Python agent loop):
    ``random``, ``heuristic``, a shipped agent's name, a checkpoint file, a ``rollout:`` search, a ``split:``
    of two such specs. ``pimc``/``cmd:`` specs (and specs that are not valid at all) give False."""
    if not isinstance(spec, str):
        return False
    text = spec.strip()
    if text.startswith("split:"):
        try:
            return all(can_vectorise(half) for half in parse_split_spec(text))
        except ValueError:
            return False
    return _kind(text) != "per_slot"


def make_batched_agent(spec: str, rules: SmearRules | None = None) -> BatchedAgent:
    """Any agent spec that :func:`~smear_env.agents.registry.make_agent` accepts, in batched form (see the
    module docstring), named by its spec. A bad spec raises what ``make_agent`` raises for it."""
    if not isinstance(spec, str):
        make_agent(spec, rules)  # raises TypeError naming the valid specs
    rules = rules if rules is not None else SmearRules()
    text = spec.strip()
    kind = _kind(text)
    if kind == "random":
        return BatchedRandomAgent(name=text)
    if kind == "heuristic":
        return BatchedHeuristicAgent(rules, name=text)
    if kind == "checkpoint":
        if text in SHIPPED_AGENTS:
            path = str(shipped_path(text))
        elif os.path.isfile(text):
            path = text
        else:
            make_agent(text, rules)  # raises FileNotFoundError naming the spec
            raise AssertionError("unreachable")  # pragma: no cover
        return BatchedCheckpointAgent.from_checkpoint(path, rules, name=text)
    if kind == "search":
        if text.startswith("rollout:"):
            return rollout_from_spec(text, rules)
        return composite_from_spec(text, rules)
    probe = make_agent(text, rules)  # validates the spec (options, program name) before any slot starts
    return PerSlotAgent(lambda: make_agent(text, rules), name=text, spare=probe)


def rollout_from_spec(spec: str, rules: SmearRules | None = None) -> RolloutAgent:
    """A :class:`RolloutAgent` from a ``rollout:key=value,...`` spec (keys ``base`` -- default ``default``
    --, ``opponent`` -- default the base --, ``samples``, ``phases``, ``margin``); an unknown key or a
    value of the wrong type is an error naming the allowed ones."""
    text = spec.strip()
    if not text.startswith(ROLLOUT_PREFIX):
        raise ValueError(f"bad rollout spec {spec!r}: it must start with {ROLLOUT_PREFIX!r}")
    hint = "valid options: " + ", ".join(f"{k} ({v})" for k, v in ROLLOUT_OPTIONS.items())
    options = parse_key_values(spec, text[len(ROLLOUT_PREFIX):], hint)
    unknown = sorted(set(options) - set(ROLLOUT_OPTIONS))
    if unknown:
        raise ValueError(f"bad rollout spec {spec!r}: unknown option(s) {unknown}; {hint}")
    rules = rules if rules is not None else SmearRules()
    base_spec = str(options.get("base", "default"))
    opp_spec = str(options.get("opponent", base_spec))
    samples = options.get("samples", 32)
    margin = options.get("margin", 0.0)
    if isinstance(margin, bool) or not isinstance(margin, int | float):
        raise ValueError(f"bad rollout spec {spec!r}: margin must be a number >= 0, not {margin!r}")
    phases = tuple(str(options.get("phases", "bid")).split("+"))
    objective = None
    try:
        if "winprob" in options:
            objective = load_winprob(str(options["winprob"]), rules)
    except ValueError as e:
        raise ValueError(f"bad rollout spec {spec!r}: {e}") from None
    try:
        team, opp = rollout_players(base_spec, opp_spec, rules)
    except ValueError as e:
        raise ValueError(f"bad rollout spec {spec!r}: {e}") from None
    base = make_batched_agent(base_spec, rules)
    try:
        return RolloutAgent(base, rules, team=team, opponent=opp, samples=samples, phases=phases,
                            margin=float(margin), name=text, objective=objective)
    except ValueError as e:
        for a in (team, opp, base):
            a.close()
        raise ValueError(f"bad rollout spec {spec!r}: {e}; {hint}") from None


def rollout_players(team: str, opponent: str, rules: SmearRules, rng: np.random.Generator | None = None
                    ) -> tuple[Any, Any]:
    """The rollouts' two players from agent specs, their slots 0-3 started as seats 0-3: what
    :func:`rollout_values` and :func:`play_out` take. They must not draw (a greedy checkpoint or the
    heuristic), so that a rollout depends only on the sampled deal -- unless ``rng`` is given: then a player
    that draws (``random``, a sampling checkpoint) is allowed, its slots' generators come from ``rng``, and a
    rollout is one sample of its continuation (the same seed gives the same samples). The rollout *search*
    never passes one."""
    seed_rng = np.random.default_rng(0) if rng is None else rng  # without rng: never drawn from (checked)
    players = []
    for spec in (team, opponent):
        agent = make_batched_agent(spec, rules)
        if rng is None and getattr(agent, "draws", True):
            for a in (*players, agent):
                a.close()
            raise ValueError(f"the rollout players must not draw (a greedy checkpoint or the heuristic), "
                             f"not {agent.name!r}")
        for seat in range(4):
            agent.start_game(seat, seat, rules, seed_rng)
        players.append(agent)
    return players[0], players[1]


def make_composite(bid_spec: str, play_spec: str, rules: SmearRules | None = None,
                   name: str | None = None) -> CompositeAgent:
    """A :class:`CompositeAgent` from two agent specs (``"scratch"``, ``"heuristic"``, a checkpoint file,
    ...), named ``split:bid=<bid_spec>,play=<play_spec>`` unless ``name`` is given."""
    rules = rules if rules is not None else SmearRules()
    bid = make_batched_agent(bid_spec, rules)
    try:
        play = make_batched_agent(play_spec, rules)
    except BaseException:
        bid.close()
        raise
    return CompositeAgent(bid, play, name if name is not None else f"split:bid={bid_spec},play={play_spec}")


def composite_from_spec(spec: str, rules: SmearRules | None = None) -> Any:
    """:func:`make_composite` of a ``split:bid=...,play=...`` spec."""
    bid, play = parse_split_spec(spec)
    return make_composite(bid, play, rules, name=spec)


def __getattr__(name: str) -> Any:
    """Deprecated names of this module (removed in the next minor version), with a DeprecationWarning."""
    if name == "parse_options":
        warnings.warn(f"{__name__}.parse_options is deprecated; use parse_agent_options",
                      DeprecationWarning, stacklevel=2)
        return parse_agent_options
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
