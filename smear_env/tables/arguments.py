"""The command-line arguments every front end that plays games shares: one flag per rule option
(:func:`add_rule_arguments`, :func:`rules_from_args`) and the checks of ``--seed`` and ``--max-hands``
(:func:`check_run_arguments`). Importable from :mod:`smear_env.tables.table` too."""

from __future__ import annotations

import argparse
import dataclasses

from ..core.actions import short_repr
from ..core.config import RuleOptionError, SmearRules
from ..core.seeding import SEED_LIMIT
from ..engine.vector import MAX_HANDS_LIMIT


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def add_rule_arguments(parser: argparse.ArgumentParser, title: str = "rule options (docs/RULES.md)") -> None:
    """One command-line flag per :class:`SmearRules` field (``kitty_size`` -> ``--kitty-size``), with the
    field's choices and rule id from its metadata; booleans are ``--x`` / ``--no-x``."""
    g = parser.add_argument_group(title)
    for f in dataclasses.fields(SmearRules):
        meta = f.metadata
        rule = meta.get("rule", "")
        choices = meta.get("choices")
        if f.type in ("bool", bool):
            g.add_argument(_flag(f.name), action=argparse.BooleanOptionalAction, default=f.default,
                           help=f"{rule} (default {'on' if f.default else 'off'})")
        elif f.type in ("int", int):
            allowed = ", ".join(map(str, choices)) if choices else "an integer >= 1"
            g.add_argument(_flag(f.name), type=int, default=f.default, metavar="N",
                           help=f"{rule}: {allowed} (default {f.default})")
        else:
            g.add_argument(_flag(f.name), default=f.default, choices=choices,
                           help=f"{rule} (default {f.default})")


def rules_from_args(args: argparse.Namespace, parser: argparse.ArgumentParser | None = None) -> SmearRules:
    """The :class:`SmearRules` of the flags of :func:`add_rule_arguments`. A bad value raises
    ``RuleOptionError``, or with ``parser`` exits through ``parser.error`` (one usage line, status 2)."""
    try:
        return SmearRules.from_dict({name: getattr(args, name) for name in SmearRules.option_names()})
    except RuleOptionError as e:
        if parser is None:
            raise
        parser.error(str(e))
        raise  # pragma: no cover - parser.error exits


def check_run_arguments(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """The ``--seed`` (when given: an integer ``0 <= seed < 2**64``) and ``--max-hands`` (1 to
    ``MAX_HANDS_LIMIT - 1``) of a front end that plays games (``smear-eval``, ``smear-play``); anything else
    exits through ``parser.error`` (one usage line naming the flag and its range, status 2)."""
    if not 1 <= args.max_hands < MAX_HANDS_LIMIT:
        parser.error(f"--max-hands must be from 1 to {MAX_HANDS_LIMIT - 1:,}, not "
                     f"{short_repr(args.max_hands)}")
    if args.seed is not None and not 0 <= args.seed < SEED_LIMIT:
        parser.error(f"--seed must be an integer 0 <= seed < 2**64, not {short_repr(args.seed)}")
