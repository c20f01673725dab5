"""Which agents can play a set of rules, and why: the one decision both ``smear-play`` and ``smear-serve``
use.

A checkpoint agent (a shipped agent such as ``default``, or a ``.safetensors`` file) plays only the rules it
was trained on (its metadata's ``rules``); every other agent (``heuristic``, ``random``, ``pimc``, a
``cmd:`` bot) plays any rules. :func:`agent_options` says, for each offered spec, whether it can play the
chosen rules and, if not, why in words a player reads (rule names and values, never a file path);
:func:`fallback` is the agent that takes a seat (or gives a hint) when the one asked for cannot:
``heuristic``.

Agents are shown by :func:`display_name`: a shipped agent by its shipped name (``default``), a checkpoint
file by its file name without folder or suffix, anything else by its spec.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from ..agents.checkpoint import check_compatible, read_checkpoint
from ..agents.composite import parse_split_spec
from ..agents.shipped import SHIPPED_AGENTS, shipped_path
from ..agents.specs import parse_key_values
from ..core.config import SmearRules

FALLBACK = "heuristic"
SHIPPED_DEFAULT = "default"
CHECKPOINT_SUFFIX = ".safetensors"


@dataclass(frozen=True)
class AgentOption:
    """One offered agent under some rules: ``spec`` (what the server or CLI runs), ``name`` (what a player
    sees), ``playable`` (it plays these rules) and ``why`` (a sentence when it does not, else None)."""

    spec: str
    name: str
    playable: bool
    why: str | None

    def to_json(self) -> dict[str, Any]:
        return {"id": self.name, "name": self.name, "playable": self.playable, "why": self.why}


def _shipped_files() -> dict[str, str]:
    """Resolved checkpoint path -> shipped name, for the shipped agents whose files are here."""

    out = {}
    for name in SHIPPED_AGENTS:
        try:
            out[str(Path(shipped_path(name)).resolve())] = name
        except (FileNotFoundError, ValueError):
            continue
    return out


def shipped_name(spec: str) -> str | None:
    """The shipped name of ``spec`` (``"default"`` for ``default`` or the path of its checkpoint file)."""

    if spec in SHIPPED_AGENTS:
        return spec
    if spec.endswith(CHECKPOINT_SUFFIX):
        return _shipped_files().get(str(Path(spec).resolve()))
    return None


def display_name(spec: str) -> str:
    """What a player sees for ``spec``: the shipped name, a checkpoint's file stem, or the spec itself."""
    name = shipped_name(spec)
    if name is not None:
        return name
    if spec.startswith(("cmd:", "cmd[")):  # a bot's command line: program and file names, no folders
        head, _, cmd = spec.partition(":")
        return head + ":" + " ".join(Path(t).name if "/" in t or "\\" in t else t for t in cmd.split())
    if spec.endswith(CHECKPOINT_SUFFIX):
        return Path(spec).name[: -len(CHECKPOINT_SUFFIX)] or spec
    return spec


def is_checkpoint(spec: str) -> bool:
    return spec in SHIPPED_AGENTS or spec.endswith(CHECKPOINT_SUFFIX)


@lru_cache(maxsize=64)
def _trained_rules(path: str) -> tuple[dict[str, Any] | None, str | None]:
    """(rules the checkpoint at ``path`` was trained on, None) or (None, why it cannot be read)."""

    try:
        meta = read_checkpoint(path)[1]
        check_compatible(meta, path)  # environment version, observation layout (no rules)
    except FileNotFoundError:
        return None, "its checkpoint file is missing"
    except Exception as e:  # unreadable, or made for another environment version
        text = str(e).replace(repr(str(path)), "").replace(str(path), "")
        return None, f"its checkpoint cannot be used here ({' '.join(text.split())})"
    return dict(meta.get("rules") or {}), None


def _checkpoint_path(spec: str) -> str:
    return str(shipped_path(spec)) if spec in SHIPPED_AGENTS else spec


RULE_LABELS: dict[str, tuple[str, dict[Any, str]]] = {
    "target_score": ("points to win", {}),
    "kitty_size": ("kitty cards for the bidder", {}),
    "high_low": ("High and Low", {"ace_seven": "ace and 7 of trump",
                                  "in_play": "highest and lowest trump played"}),
    "game_point_tie": ("Game point on a tie", {"nobody": "nobody", "bidder": "the bidder's team"}),
    "all_pass": ("when all four pass", {"redeal": "throw in and redeal",
                                        "dealer_must_bid": "the dealer must bid"}),
    "win_requires_bid": ("win only on your own bid", {True: "yes", False: "no"}),
    "cap_defenders": ("defenders' score capped at the target", {True: "yes", False: "no"}),
}
"""Words a player reads for each rule option and its values (the setup form shows the same)."""


def rule_words(key: str) -> str:
    return RULE_LABELS[key][0] if key in RULE_LABELS else key.replace("_", " ")


def value_words(key: str, value: Any) -> str:
    """A rule option's value in words (``"in_play"`` -> ``"highest and lowest trump played"``)."""
    words = RULE_LABELS.get(key, ("", {}))[1]
    try:
        return words.get(value, str(value))
    except TypeError:  # an unhashable value from a file
        return str(value)


def _players_of(spec: str) -> list[str]:
    """The agent specs a search spec (``split:``, ``rollout:``) plays with; none for any other spec."""
    if spec.startswith("split:"):
        try:
            return list(parse_split_spec(spec))
        except ValueError:
            return []
    if spec.startswith("rollout:"):
        try:
            options = parse_key_values(spec, spec[len("rollout:"):], "")
        except ValueError:
            return []
        base = str(options.get("base", SHIPPED_DEFAULT))
        return [base, str(options.get("opponent", base))]
    return []


def why_not(spec: str, rules: SmearRules) -> str | None:
    """``None`` when ``spec`` plays ``rules``; else why not (a sentence naming the rule options). A search
    spec plays the rules its players play."""
    for player in _players_of(spec):
        why = why_not(player, rules)
        if why is not None:
            return f"{display_name(spec)}: {why}"
    if not is_checkpoint(spec):
        return None
    name = display_name(spec)
    try:
        path = _checkpoint_path(spec)
    except FileNotFoundError:
        return f"{name} is not available: its checkpoint file is missing"
    trained, problem = _trained_rules(path)
    if trained is None:
        return f"{name} is not available: {problem}"
    want = rules.to_dict()
    diff = rules.differences_from(trained)  # by meaning: an option the checkpoint predates is at its default
    if not diff:
        return None
    full = SmearRules.with_defaults(trained)
    parts = "; ".join(f"{rule_words(k)}: {value_words(k, want[k]) if k in want else 'unknown'} "
                      f"(trained on: {value_words(k, full.get(k))})" for k in diff)
    return f"{name} plays only the rules it was trained on; these differ: {parts}"


def agent_options(specs: Sequence[str], rules: SmearRules) -> list[AgentOption]:
    """Each of ``specs`` under ``rules``: playable or not, and why."""
    out = []
    for spec in specs:
        why = why_not(spec, rules)
        out.append(AgentOption(spec, display_name(spec), why is None, why))
    return out


def fallback(spec: str, rules: SmearRules) -> tuple[str, str | None]:
    """(the spec that plays, note): ``spec`` itself when it plays ``rules``, else :data:`FALLBACK` and a
    note saying why (for the CLI's message and the web table's notice)."""
    why = why_not(spec, rules)
    if why is None:
        return spec, None
    return FALLBACK, f"{why}; {FALLBACK!r} plays instead"


def default_agent(rules: SmearRules) -> tuple[str, str | None]:
    """(spec, note) of the default partner/opponent: the shipped agent ``default`` when it plays ``rules``,
    else :data:`FALLBACK` with the reason."""
    return fallback(SHIPPED_DEFAULT, rules)


def hint_specs(specs: Sequence[str], rules: SmearRules) -> tuple[list[str], list[str]]:
    """(hint agents that play ``rules``, notes): an agent that cannot is replaced by :data:`FALLBACK` (once),
    the same fallback as for a seat."""
    out: list[str] = []
    notes: list[str] = []
    for spec in specs:
        s, note = fallback(spec, rules)
        if note:
            notes.append(note)
        if s not in out:
            out.append(s)
    return out, notes


__all__ = ["FALLBACK", "RULE_LABELS", "AgentOption", "agent_options", "default_agent", "display_name",
           "fallback", "hint_specs", "shipped_name", "rule_words", "value_words", "why_not"]
