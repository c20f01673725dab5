"""Property tests over random games under random rule options (hypothesis draws options and seeds; a fast
driver plays uniformly random legal actions from a seeded numpy Generator).

Every game has a low target (1..5) and a hand cap, so it ends quickly; checked at every step: the 32 cards
are conserved (R2, R5, R9, R11), hand sizes, legal actions are never empty when someone is to act; at
every scored hand: at most 4 points (R13-R16), card points, score changes (R17, R20), winners (R18, R19);
per game: the record validates and replays to the same record, same seed -> same game, copy() independence.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from smear_env.core.cards import FULL_DECK
from smear_env.core.config import SmearRules
from smear_env.core.rules import game_points
from smear_env.engine.game import BIDDING, DISCARD, GAME_OVER, HAND_OVER, TRUMP, Game
from smear_env.engine.record import replay, validate_record

MAX_HANDS = 15

OPTIONS = st.fixed_dictionaries({
    "kitty_size": st.sampled_from([0, 1, 2, 3]),
    "target_score": st.integers(1, 5),
    "high_low": st.sampled_from(["ace_seven", "in_play"]),
    "game_point_tie": st.sampled_from(["nobody", "bidder"]),
    "all_pass": st.sampled_from(["redeal", "dealer_must_bid"]),
    "win_requires_bid": st.booleans(),
    "cap_defenders": st.booleans(),
})
SEEDS = st.integers(0, 2**32 - 1)
FAST = settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _mask(cards: list[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def check_state(g: Game) -> None:
    """Card conservation and hand sizes at any point of a hand."""
    k = g.rules.kitty_size
    taken = g.bidder is not None and g.phase != BIDDING and not g.hand_thrown_in
    stock_rest = _mask(g.stock[k:] if taken else g.stock)
    union = 0
    for part in (*g.hands, *g.played_by, stock_rest, _mask(g.discards)):
        assert union & part == 0
        union |= part
    assert union == FULL_DECK
    played = g.played_by[0] | g.played_by[1] | g.played_by[2] | g.played_by[3]
    assert g.won[0] & g.won[1] == 0
    assert g.won[0] | g.won[1] | _mask(g.trick) == played
    assert len(g.tricks) * 4 + len(g.trick) == played.bit_count()
    sizes = [h.bit_count() for h in g.hands]
    if g.phase == BIDDING or g.hand_thrown_in:
        assert sizes == [6, 6, 6, 6] and not g.kitty and not g.discards
    elif g.phase in (TRUMP, DISCARD):
        assert g.kitty == g.stock[:k]
        assert sizes[g.bidder] == 6 + k - len(g.discards)
    else:
        assert g.kitty == g.stock[:k] and len(g.discards) == k
        assert sizes == [6 - pb.bit_count() for pb in g.played_by]
    if g.current_player is not None:
        legal = g.legal_actions()
        assert legal and all(0 <= a < 72 for a in legal) and len(set(legal)) == len(legal)
    else:
        assert g.legal_actions() == ()


def check_scored_hand(g: Game, old: list[int]) -> None:
    """R13-R20 consistency of the hand just scored, recomputed independently."""
    r = g.hand_result
    rules = g.rules
    pts = r["points"]
    won = [0, 0]
    for t in pts.values():
        if t is not None:
            won[t] += 1
    assert sum(won) <= 4
    bteam = g.bidder & 1
    dteam = 1 - bteam
    cp = [game_points(g.won[0]), game_points(g.won[1])]
    cp[bteam] += game_points(_mask(g.discards))
    assert r["card_points"] == cp and sum(cp) <= 80
    assert pts["game"] == (0 if cp[0] > cp[1] else 1 if cp[1] > cp[0] else
                           (bteam if rules.game_point_tie == "bidder" else None))
    made = won[bteam] >= g.contract
    assert r["made_contract"] == made
    change = r["score_change"]
    assert change[bteam] == (won[bteam] if made else -g.contract)
    if rules.cap_defenders and old[dteam] + won[dteam] > rules.target_score:
        assert change[dteam] == max(0, rules.target_score - old[dteam])
    else:
        assert change[dteam] == won[dteam]
    new = [old[0] + change[0], old[1] + change[1]]
    assert r["scores"] == new == g.scores
    target = rules.target_score
    if rules.win_requires_bid:
        expected = bteam if made and new[bteam] >= target else None
    else:
        expected = bteam if new[bteam] >= target else dteam if new[dteam] >= target else None
    assert g.winner == expected
    assert g.phase == (GAME_OVER if expected is not None else HAND_OVER)


def play(g: Game, rng: np.random.Generator, checks: bool, max_hands: int = MAX_HANDS,
         stop_after: int | None = None) -> Game:
    """Uniform random legal play until the game is over, ``max_hands`` hands are done, or ``stop_after``
    actions were taken."""
    steps = 0
    floats = rng.random(4096).tolist()
    old = g.scores[:]
    while True:
        if checks:
            check_state(g)
        phase = g.phase
        if phase == GAME_OVER:
            return g
        if phase == HAND_OVER:
            if len(g.history) >= max_hands:
                return g
            g.start_next_hand()
            old = g.scores[:]
            continue
        if stop_after is not None and steps >= stop_after:
            return g
        legal = g.legal_actions()
        g.apply(legal[int(floats[steps % 4096] * len(legal))])
        steps += 1
        if checks and g.phase >= HAND_OVER and not g.hand_thrown_in:
            check_scored_hand(g, old)
        if checks and g.phase == HAND_OVER and g.hand_thrown_in:
            assert g.scores == old and g.hand_result is None and g.dealer == g.next_dealer


def new_game(options: dict, seed: int) -> tuple[Game, np.random.Generator]:
    return Game(SmearRules(**options), seed=seed), np.random.default_rng(seed)


@FAST
@given(options=OPTIONS, seed=SEEDS)
def test_random_games_keep_every_invariant(options: dict, seed: int) -> None:
    for i in range(8):  # 800 fully checked games
        g, rng = new_game(options, seed + i)
        play(g, rng, checks=True)
        assert g.phase == GAME_OVER or len(g.history) == MAX_HANDS


@FAST
@given(options=OPTIONS, seed=SEEDS)
def test_records_validate_and_replay_and_same_seed_same_game(options: dict, seed: int) -> None:
    for i in range(8):  # 800 games
        g, rng = new_game(options, seed + i)
        rec = play(g, rng, checks=False).to_record()
        if i == 0:
            validate_record(rec)
        assert replay(rec).to_record(truncated=rec["truncated"]) == rec
        g2, rng2 = new_game(options, seed + i)
        assert play(g2, rng2, checks=False).to_record() == rec


@FAST
@given(options=OPTIONS, seed=SEEDS, cut=st.integers(0, 300))
def test_copy_is_independent_and_continues_identically(options: dict, seed: int, cut: int) -> None:
    for i in range(3):  # 300 games
        g, rng = new_game(options, seed + i)
        play(g, rng, checks=False, stop_after=cut)
        if g.phase == HAND_OVER:
            g.start_next_hand()
        before = g.to_record()
        c = g.copy()
        assert c.to_record() == before and c.legal_actions() == g.legal_actions()
        state = rng.bit_generator.state
        play(c, rng, checks=True)  # the copy runs on
        assert g.to_record() == before  # the original is untouched
        rng.bit_generator.state = state
        play(g, rng, checks=False)
        assert g.to_record() == c.to_record()


@FAST
@given(options=OPTIONS, seed=SEEDS, cut=st.integers(1, 200))
def test_truncated_records_validate_and_replay(options: dict, seed: int, cut: int) -> None:
    g, rng = new_game(options, seed)
    play(g, rng, checks=False, stop_after=cut)
    rec = g.to_record(truncated=True)
    validate_record(rec)
    r = replay(rec)
    assert r.to_record(truncated=True) == rec
    assert (r.phase, r.current_player, r.hands, r.legal_actions()) == (
        g.phase, g.current_player, g.hands, g.legal_actions())


def test_bulk_random_games_under_every_option_combination() -> None:
    """A fast loop: 256 games, each of the 128 combinations of the other options twice (targets 1..5)."""
    rng = np.random.default_rng(2024)
    combos = [
        {"kitty_size": k, "high_low": hl, "game_point_tie": t, "all_pass": ap, "win_requires_bid": w,
         "cap_defenders": c}
        for k in range(4) for hl in ("ace_seven", "in_play") for t in ("nobody", "bidder")
        for ap in ("redeal", "dealer_must_bid") for w in (False, True) for c in (False, True)
    ]
    assert len(combos) == 128
    for n in range(256):
        opts = {**combos[n % 128], "target_score": int(rng.integers(1, 6))}
        g = Game(SmearRules(**opts), seed=n)
        play(g, rng, checks=True)
        rec = g.to_record()
        assert replay(rec).to_record(truncated=rec["truncated"]) == rec


@pytest.mark.slow
def test_slow_default_rules_games_to_15() -> None:
    """Default rules, target 15: scaled by SMEAR_SLOW_SCALE (default 1 = 20 games of up to 60 hands)."""
    scale = float(os.environ.get("SMEAR_SLOW_SCALE", "1"))
    rng = np.random.default_rng(15)
    n_games = max(1, int(20 * scale))
    finished = 0
    for n in range(n_games):
        g = Game(SmearRules(), seed=10_000 + n)
        play(g, rng, checks=True, max_hands=60)
        finished += g.phase == GAME_OVER
        rec = g.to_record()
        if n < 3:
            validate_record(rec)
        assert replay(rec).to_record(truncated=rec["truncated"]) == rec
