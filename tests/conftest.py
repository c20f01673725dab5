"""Shared fixtures: build a game from a constructed deal and drive it by action names."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from smear_env.actions import action_name, parse_action
from smear_env.config import SmearRules
from smear_env.game import Game


def _make_game(
    hands: list[str], stock: str, dealer: int = 3, scores: tuple[int, int] = (0, 0), **options: object
) -> Game:
    """``hands``: four strings of 6 card names (seats 0..3); ``stock``: 8 names, kitty first (R9)."""
    rules = SmearRules.from_dict(dict(options))
    return Game.from_deal([h.split() for h in hands], stock.split(), dealer, rules, scores=scores, seed=0)


def _act(game: Game, *names: str) -> None:
    """Apply actions given by name (``"bid 2"``, ``"pass"``, ``"trump H"``, ``"discard TS"``, ``"play AH"``);
    a name holding several cards (``"play AH KH QH JH"``) plays them one after the other."""
    for name in names:
        verb, *rest = name.split()
        if verb in ("play", "discard") and len(rest) > 1:
            for c in rest:
                game.apply(parse_action(f"{verb} {c}"))
        else:
            game.apply(parse_action(name))


def _legal(game: Game) -> set[str]:
    return {action_name(a) for a in game.legal_actions()}


@pytest.fixture
def make_game() -> Callable[..., Game]:
    return _make_game


@pytest.fixture
def act() -> Callable[..., None]:
    return _act


@pytest.fixture
def legal() -> Callable[[Game], set[str]]:
    return _legal
