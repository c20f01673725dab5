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
  (:mod:`smear_env.integrations.openspiel_agent`; needs ``pip install "smear-rl[openspiel]"``);
* ``cmd:<command line>`` or ``cmd[timeout=5]:<command line>`` -- a bot in any language, run as a child
  process speaking the line-based JSON protocol of docs/PROTOCOL.md
  (:class:`~smear_env.agents.protocol.ProtocolAgent`).

The agent's ``name`` is set to its spec, so records and tables show what was asked for.

:func:`smear_env.agents.batched.make_batched_agent` gives any of these specs in batched form (one call
for many seats) and :func:`smear_env.agents.batched.can_vectorise` says which ones are vectorised.
"""

from __future__ import annotations

import os
from typing import Any

from ..config import SmearRules
from .base import Agent, RandomAgent
from .shipped import SHIPPED_AGENTS, shipped_path
from .specs import parse_key_values

BUILTIN_NAMES = ("random", "heuristic", "pimc")
CHECKPOINT_SUFFIX = ".safetensors"


def _valid_specs() -> str:
    return (
        "valid specs: 'random', 'heuristic', 'passer', 'pimc' or 'pimc:key=value,...' "
        "(e.g. 'pimc:samples=16,budget_ms=80'), "
        f"a shipped agent ({', '.join(map(repr, SHIPPED_AGENTS))}), "
        f"the path of a checkpoint file ('*{CHECKPOINT_SUFFIX}'), "
        "or 'cmd:<command line>' for a bot speaking docs/PROTOCOL.md "
        "(e.g. 'cmd:python examples/random_bot.py')"
    )


def parse_options(spec: str, text: str) -> dict[str, Any]:
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
    import inspect

    sig = inspect.signature(cls).parameters
    params = {k: p for k, p in sig.items()
              if k != "rules" and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)}
    any_name = any(p.kind == p.VAR_KEYWORD for p in sig.values())
    for key, value in options.items():
        if key not in params:
            if any_name:
                continue
            raise ValueError(f"bad agent spec {spec!r}: unknown option {key!r}; valid options: "
                             f"{', '.join(params)}")
        ann = params[key].annotation
        if ann is not inspect.Parameter.empty and not _accepts(ann, value):
            raise ValueError(f"bad agent spec {spec!r}: option {key}={value!r} must be {ann}")


def is_checkpoint_spec(spec: str) -> bool:
    return spec.endswith(CHECKPOINT_SUFFIX) or os.path.isfile(spec)


def _load_checkpoint(path: str, rules: SmearRules) -> Agent:
    from .checkpoint import load_agent  # lazy: reads safetensors, plays with numpy (no torch)

    return load_agent(path, rules)


def make_agent(spec: str, rules: SmearRules | None = None) -> Agent:
    """The agent named by ``spec`` (see the module docstring). Unknown spec -> ``ValueError`` naming the
    valid ones; a checkpoint path that does not exist -> ``FileNotFoundError``."""
    if not isinstance(spec, str):
        raise TypeError(f"agent spec must be a string, not {type(spec).__name__}; {_valid_specs()}")
    rules = rules if rules is not None else SmearRules()
    text = spec.strip()
    base, _, opts = text.partition(":")
    agent: Any
    if text.startswith(("cmd:", "cmd[")):
        from .protocol import ProtocolAgent

        return ProtocolAgent.from_spec(text)  # named by its spec
    if base in ("random", "heuristic") and not opts:
        if base == "random":
            agent = RandomAgent()
        else:
            from .heuristic import HeuristicAgent

            agent = HeuristicAgent(rules)
    elif base == "passer" and not opts:
        from .fixed import PasserAgent

        agent = PasserAgent()
    elif base == "pimc":
        options = parse_options(spec, opts)
        from .pimc import PimcAgent  # lazy: may be heavy

        check_options(spec, PimcAgent, options)
        try:
            agent = PimcAgent(rules, **options)
        except TypeError as e:  # pragma: no cover - check_options names the bad option first
            raise ValueError(f"bad agent spec {spec!r}: {e}") from None
    elif base == "openspiel":
        from ..integrations.openspiel_agent import agent_from_spec  # lazy: needs open_spiel

        agent = agent_from_spec(spec, rules, opts, parse_options)
    elif base in SHIPPED_AGENTS:
        if opts:
            raise ValueError(
                f"bad agent spec {spec!r}: shipped agent {base!r} takes no options; {_valid_specs()}"
            )
        agent = _load_checkpoint(str(shipped_path(base)), rules)
    elif is_checkpoint_spec(text):
        if not os.path.exists(text):  # a directory or a device: load_agent says what it is
            raise FileNotFoundError(
                f"checkpoint {text!r} not found: agent spec {spec!r} names a checkpoint file that does not "
                "exist"
            )
        agent = _load_checkpoint(text, rules)
    else:
        raise ValueError(f"unknown agent spec {spec!r}; {_valid_specs()}")
    try:
        agent.name = text
    except AttributeError:  # pragma: no cover - an agent with a read-only name keeps its own
        pass
    return agent


__all__ = ["BUILTIN_NAMES", "check_options", "is_checkpoint_spec", "make_agent", "parse_options"]
