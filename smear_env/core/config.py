"""The rule options of RULES.md as one frozen, validated dataclass."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from .actions import short_repr

# The values of the closed-set options: compare option strings with these names, not with literals.
HIGH_LOW_ACE_SEVEN = "ace_seven"
HIGH_LOW_IN_PLAY = "in_play"
HIGH_LOW_VALUES = (HIGH_LOW_ACE_SEVEN, HIGH_LOW_IN_PLAY)
GAME_POINT_TIE_NOBODY = "nobody"
GAME_POINT_TIE_BIDDER = "bidder"
GAME_POINT_TIE_VALUES = (GAME_POINT_TIE_NOBODY, GAME_POINT_TIE_BIDDER)
ALL_PASS_REDEAL = "redeal"
ALL_PASS_DEALER_MUST_BID = "dealer_must_bid"
ALL_PASS_VALUES = (ALL_PASS_REDEAL, ALL_PASS_DEALER_MUST_BID)
KITTY_SIZE_VALUES = (0, 1, 2, 3)
MAX_TARGET_SCORE = 2**20
"""Largest target_score: scores and the target stay exact in the float32 observation (bounds +-2**24)."""


class RuleOptionError(ValueError):
    """A rule option has a bad name or value."""


@dataclass(frozen=True)
class SmearRules:
    """Options of the game (RULES.md table); every field is validated on creation.

    Each field's metadata gives its rule id (``"rule"``) and, for a closed set, its ``"choices"``: the
    command-line flags of every front end are derived from them
    (:func:`smear_env.tables.arguments.add_rule_arguments`), so a new option is added here, read in
    :mod:`smear_env.core.rules` (which every engine, the solver and the agents ask, passing this object
    unchanged), described in ``docs/RULES.md`` and tested -- and read in :mod:`smear_env.core.transitions`
    when it changes the state machine (whose turn, which phase)."""

    kitty_size: int = field(default=3, metadata={"rule": "R9", "choices": KITTY_SIZE_VALUES})
    """R9: how many stock cards the bidder takes, 0..3."""
    target_score: int = field(default=15, metadata={"rule": "R18"})
    """R18: the score that wins the game (integer, 1 .. MAX_TARGET_SCORE = 2**20)."""
    high_low: str = field(
        default=HIGH_LOW_ACE_SEVEN, metadata={"rule": "R13/R14", "choices": HIGH_LOW_VALUES}
    )
    """R13/R14: ``"ace_seven"`` (ace and 7 of trump) or ``"in_play"`` (highest and lowest trump played)."""
    game_point_tie: str = field(
        default=GAME_POINT_TIE_NOBODY, metadata={"rule": "R16", "choices": GAME_POINT_TIE_VALUES}
    )
    """R16: who wins the Game point on a tie: ``"nobody"`` or ``"bidder"``."""
    all_pass: str = field(default=ALL_PASS_REDEAL, metadata={"rule": "R8", "choices": ALL_PASS_VALUES})
    """R8: ``"redeal"`` (throw in, same dealer) or ``"dealer_must_bid"`` (the dealer is stuck)."""
    win_requires_bid: bool = field(default=False, metadata={"rule": "R19"})
    """R19: only the bidding team can win, in a hand where it made its contract."""
    cap_defenders: bool = field(default=False, metadata={"rule": "R20"})
    """R20: a defending team's score never rises above target_score as a result of a hand."""

    def __post_init__(self) -> None:
        def bad(name: str, allowed: str) -> RuleOptionError:
            value = getattr(self, name)
            return RuleOptionError(
                f"rule option {name}={short_repr(value)} is not allowed; allowed values: {allowed}"
            )

        # bool is a subclass of int: reject it where an integer is meant (never silently coerce).
        if type(self.kitty_size) is not int or self.kitty_size not in KITTY_SIZE_VALUES:
            raise bad("kitty_size", "0, 1, 2, 3")
        if type(self.target_score) is not int or not 1 <= self.target_score <= MAX_TARGET_SCORE:
            raise bad("target_score", f"an integer from 1 to {MAX_TARGET_SCORE} (2**20)")
        if self.high_low not in HIGH_LOW_VALUES or not isinstance(self.high_low, str):
            raise bad("high_low", ", ".join(map(repr, HIGH_LOW_VALUES)))
        if self.game_point_tie not in GAME_POINT_TIE_VALUES or not isinstance(self.game_point_tie, str):
            raise bad("game_point_tie", ", ".join(map(repr, GAME_POINT_TIE_VALUES)))
        if self.all_pass not in ALL_PASS_VALUES or not isinstance(self.all_pass, str):
            raise bad("all_pass", ", ".join(map(repr, ALL_PASS_VALUES)))
        if type(self.win_requires_bid) is not bool:
            raise bad("win_requires_bid", "True, False")
        if type(self.cap_defenders) is not bool:
            raise bad("cap_defenders", "True, False")

    @classmethod
    def option_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def from_dict(cls, options: dict[str, Any]) -> SmearRules:
        """Build from a mapping; an unknown key is an error naming it and the valid keys."""
        names = cls.option_names()
        for key in options:
            if key not in names:
                raise RuleOptionError(f"unknown rule option {key!r}; valid options: {', '.join(names)}")
        return cls(**options)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def with_defaults(cls, recorded: dict[str, Any]) -> dict[str, Any]:
        """The options a record of rules (e.g. a checkpoint's metadata, written by an older version) means:
        every option it lacks at its default value -- an option added later with its default changes
        nothing that was recorded before it. Keys this version does not know are kept as they are."""
        return {**cls().to_dict(), **recorded}

    def differences_from(self, recorded: dict[str, Any]) -> list[str]:
        """Names of the options on which ``recorded`` (an older or newer record of rules, e.g. a
        checkpoint's metadata) differs from these rules, by meaning: an option missing from ``recorded``
        reads as its default (:meth:`with_defaults`); a key this version does not know is a difference
        (rules it cannot play). Options in declaration order, then unknown keys in their order."""
        full = self.with_defaults(recorded)
        mine = self.to_dict()
        return [k for k in mine if full[k] != mine[k] or type(full[k]) is not type(mine[k])] + [
            k for k in recorded if k not in mine
        ]
