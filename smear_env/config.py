"""The rule options of RULES.md as one frozen, validated dataclass."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any

from .actions import short_repr

HIGH_LOW_VALUES = ("ace_seven", "in_play")
GAME_POINT_TIE_VALUES = ("nobody", "bidder")
ALL_PASS_VALUES = ("redeal", "dealer_must_bid")
KITTY_SIZE_VALUES = (0, 1, 2, 3)
MAX_TARGET_SCORE = 2**20
"""Largest target_score: scores and the target stay exact in the float32 observation (bounds +-2**24)."""


class RuleOptionError(ValueError):
    """A rule option has a bad name or value."""


@dataclass(frozen=True)
class SmearRules:
    """Options of the game (RULES.md table); every field is validated on creation."""

    kitty_size: int = 3
    """R9: how many stock cards the bidder takes, 0..3."""
    target_score: int = 15
    """R18: the score that wins the game (integer, 1 .. MAX_TARGET_SCORE = 2**20)."""
    high_low: str = "ace_seven"
    """R13/R14: ``"ace_seven"`` (ace and 7 of trump) or ``"in_play"`` (highest and lowest trump played)."""
    game_point_tie: str = "nobody"
    """R16: who wins the Game point on a tie: ``"nobody"`` or ``"bidder"``."""
    all_pass: str = "redeal"
    """R8: ``"redeal"`` (throw in, same dealer) or ``"dealer_must_bid"`` (the dealer is stuck)."""
    win_requires_bid: bool = False
    """R19: only the bidding team can win, in a hand where it made its contract."""
    cap_defenders: bool = False
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
