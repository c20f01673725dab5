"""Rule knowledge lives in the engine: one constructor path for Game, rule queries the views ask."""

from __future__ import annotations

import copy
import re
from pathlib import Path

import numpy as np
import pytest

from smear_env.core.config import SmearRules
from smear_env.engine.game import STATE_FIELDS, Game, deal_from, playable_led_card, shuffled_deal

ROOT = Path(__file__).resolve().parents[1]


def _random_walk(game: Game, rng: np.random.Generator, steps: int) -> None:
    for _ in range(steps):
        if game.phase >= 4:
            if game.is_over:
                return
            game.start_next_hand()
            continue
        legal = game.legal_actions()
        game.apply(legal[rng.integers(len(legal))])


def test_nothing_outside_the_engine_builds_a_game_or_touches_its_private_fields():
    pattern = re.compile(r"Game\.__new__|\._legal\b|\._next_dealer\b|\._deal_hand\b|\._setup\b")
    offenders = []
    for path in [*ROOT.glob("smear_env/**/*.py"), *ROOT.glob("training/**/*.py")]:
        if path.name in ("game.py", "vector.py") and path.parent.name == "engine":
            continue  # the engines themselves
        for i, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{i}: {line.strip()}")
    assert offenders == []


def test_copy_and_from_state_continue_identically():
    rng = np.random.default_rng(3)
    g = Game(SmearRules(target_score=7), seed=5)
    _random_walk(g, rng, 40)
    c = g.copy()
    assert all(getattr(c, k) == getattr(g, k) for k in STATE_FIELDS)
    assert c.next_dealer == g.next_dealer and c.legal_actions() == g.legal_actions()
    r1, r2 = np.random.default_rng(9), np.random.default_rng(9)
    _random_walk(g, r1, 200)
    _random_walk(c, r2, 200)
    assert c.to_record() == g.to_record()
    with pytest.raises(ValueError, match="missing fields"):
        Game.from_state(None, {"phase": 0})


def test_records_built_when_read_equal_records_built_at_once():
    """A finished hand's record is built on first read of ``history``: from the values the hand ended with,
    whatever the game (or a copy taken before the read) did since."""
    rng = np.random.default_rng(4)
    g = Game(SmearRules(target_score=21), seed=6)
    seen: list[dict] = []
    for _ in range(400):
        if g.is_over:
            break
        if g.phase >= 4:
            seen.append(copy.deepcopy(g.history[-1]))  # read at once, as the hand ends
            g.start_next_hand()
            continue
        legal = g.legal_actions()
        g.apply(legal[rng.integers(len(legal))])
    late = Game(SmearRules(target_score=21), seed=6)  # the same game, its records read only at the end
    rng = np.random.default_rng(4)
    copies = []
    for _ in range(400):
        if late.is_over:
            break
        if late.phase >= 4:
            copies.append(late.copy())
            late.start_next_hand()
            continue
        legal = late.legal_actions()
        late.apply(legal[rng.integers(len(legal))])
    n = len(seen) + (1 if g.is_over else 0)
    assert len(seen) >= 3 and late.history[:len(seen)] == seen and len(late.history) == n
    assert all(c.history == late.history[:len(c.history)] for c in copies)
    assert all(type(h) is dict for h in late.history)


def test_rule_queries():
    g = Game.from_deal(
        [["AS", "KS", "QS", "JS", "TS", "9S"], ["AH", "KH", "QH", "JH", "TH", "9H"],
         ["AD", "KD", "QD", "JD", "TD", "9D"], ["AC", "KC", "QC", "JC", "TC", "9C"]],
        ["7S", "8S", "7H", "8H", "7D", "8D", "7C", "8C"], dealer=3,
        rules=SmearRules(all_pass="dealer_must_bid"))
    for _ in range(3):
        assert not g.dealer_stuck()
        g.apply(0)  # three passes
    assert g.dealer_stuck() and g.dealer_stuck(3) and not g.dealer_stuck(0)
    assert 0 not in g.legal_actions()
    g.apply(1)  # the dealer bids 2
    g.apply(4 + 3)  # trump spades
    assert g.trump_known_to(3) and not g.trump_known_to(0) and not g.trump_public
    assert g.next_dealer == 3  # the hand is not over: R4 applies when it is


def test_dealing_and_playable():
    hands, stock = shuffled_deal(np.random.default_rng(0))
    assert sorted(c for h in hands for c in h) + sorted(stock) != [] and len(stock) == 8
    assert sorted([c for h in hands for c in h] + stock) == list(range(32))
    assert deal_from(list(range(32)))[0][0] == [0, 1, 2, 3, 4, 5]
    hand = 0b1111 | 1 << 8 | 1 << 24  # clubs 7-T, 7 of diamonds, 7 of spades
    assert playable_led_card(hand, -1, 3, True) == 1 << 24  # R10: first lead of trump
    assert playable_led_card(hand, 8 + 5, 3, False) == (1 << 8) | (1 << 24)  # R12: follow or trump
    assert playable_led_card(hand, 16, 3, False) == hand  # void in the suit led
