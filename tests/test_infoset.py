"""Info-set sampling (R22, R23): every sampled deal is consistent with the observer's view."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from smear_env.core.cards import FULL_DECK, SUIT_MASKS
from smear_env.core.config import SmearRules
from smear_env.engine.game import HAND_OVER, Game
from smear_env.engine.infoset import hidden_discard_count, sample_hidden, sample_hidden_many, view_of


def _check(game: Game, seat: int, deal, view) -> None:
    played = view.played_by[0] | view.played_by[1] | view.played_by[2] | view.played_by[3]
    assert deal.hands[seat] == game.hands[seat]  # own hand
    for s in range(4):
        assert deal.hands[s].bit_count() == game.hands[s].bit_count()  # sizes
        assert not deal.hands[s] & played  # played cards excluded
        for suit in range(4):
            if view.voids[s] >> suit & 1:
                assert not deal.hands[s] & SUIT_MASKS[suit]  # shown void
    parts = [*deal.hands, deal.discards, deal.stock, played]
    assert sum(p.bit_count() for p in parts) == 32  # 32 cards conserved, all disjoint
    union = 0
    for p in parts:
        union |= p
    assert union == FULL_DECK
    k = game.rules.kitty_size
    assert deal.discards.bit_count() == len(game.discards)
    assert deal.stock.bit_count() == (8 if game.phase == 0 or game.bidder is None else 8 - k)
    if game.bidder == seat and game.phase != 0:
        assert deal.discards == sum(1 << c for c in game.discards)  # R23: the bidder knows its discards
    elif view.trump is not None and deal.discards:
        assert not deal.discards & SUIT_MASKS[view.trump]  # R11 (see sample_hidden)


@settings(max_examples=40, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**31), kitty=st.integers(0, 3), steps=st.integers(0, 40), seat=st.integers(0, 3))
def test_r22_r23_sampled_deals_are_consistent(seed, kitty, steps, seat):
    rules = SmearRules(kitty_size=kitty, target_score=1000)
    g = Game(rules, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if g.phase == HAND_OVER:
            g.start_next_hand()
        la = g.legal_actions()
        g.apply(la[int(rng.integers(len(la)))])
    if g.phase == HAND_OVER:
        g.start_next_hand()
    view = view_of(g, seat)
    assert hidden_discard_count(view) == (len(g.discards) if g.bidder is not None and g.phase != 0 else 0)
    for _ in range(5):
        _check(g, seat, sample_hidden(view, rng), view)
    for deal in sample_hidden_many(view, rng, 5):
        _check(g, seat, deal, view)
    rel = view.relative()
    d = sample_hidden(rel, rng)
    assert d.hands[0] == g.hands[seat]


def test_sampler_is_uniform_over_consistent_assignments():
    """Exact uniformity: 6 cards (3 clubs, 3 diamonds) into slots of 2 / 2 / 2 where slot 0 may hold no
    club (a shown void) and slot 1 no diamond; every consistent assignment is drawn equally often."""
    from itertools import permutations

    from smear_env.engine.infoset import _allocate

    cards = [0, 1, 2, 8, 9, 10]
    unknown = sum(1 << c for c in cards)
    slots = [(2, 0b0001), (2, 0b0010), (2, 0)]
    valid = set()
    for p in permutations(cards):
        a = (1 << p[0] | 1 << p[1], 1 << p[2] | 1 << p[3], 1 << p[4] | 1 << p[5])
        if not a[0] & SUIT_MASKS[0] and not a[1] & SUIT_MASKS[1]:
            valid.add(a)
    rng = np.random.default_rng(0)
    n = 4000
    seen: dict[tuple, int] = {}
    for _ in range(n):
        got = tuple(_allocate(unknown, slots, rng))
        assert got in valid
        seen[got] = seen.get(got, 0) + 1
    assert len(seen) == len(valid) == 9  # slot 0: 2 diamonds (3 ways), slot 1: 2 clubs (3 ways)
    for c in seen.values():
        assert abs(c / n - 1 / 9) < 0.025
    assert _allocate(unknown, [(4, 0b0001), (1, 0), (1, 0)], rng) is None  # 3 diamonds cannot fill 4


@pytest.mark.slow
def test_r12_voids_respected_in_play(scale):
    """Sampled deals respect every shown void, over SMEAR_SLOW_SCALE x 60 random hands."""
    rules = SmearRules(kitty_size=3, target_score=1000)
    rng = np.random.default_rng(0)
    checked = 0
    for seed in range(max(1, round(60 * scale))):
        g = Game(rules, seed=seed)
        while g.phase != HAND_OVER:
            if any(g.voids):
                for seat in range(4):
                    view = view_of(g, seat)
                    for _ in range(3):
                        _check(g, seat, sample_hidden(view, rng), view)
                    checked += 1
            la = g.legal_actions()
            g.apply(la[int(rng.integers(len(la)))])
    assert checked > 100 * min(scale, 1)


def test_sampling_is_seeded():
    g = Game(SmearRules(), seed=1)
    view = view_of(g, 2)
    a = [sample_hidden(view, np.random.default_rng(9)) for _ in range(2)]
    assert a[0] == a[1]


def _exact_frequencies(allocate, unknown: int, slots, valid: set, n: int) -> dict[tuple, int]:
    seen: dict[tuple, int] = {}
    for got in allocate(unknown, slots, n):
        got = tuple(got)
        assert got in valid
        seen[got] = seen.get(got, 0) + 1
    return seen


def _valid_assignments(cards: list[int], slots) -> set:
    from itertools import permutations

    valid = set()
    for p in permutations(cards):
        a, pos = [], 0
        for size, forbidden in slots:
            bits = sum(1 << c for c in p[pos:pos + size])
            pos += size
            if any(forbidden >> s & 1 and bits & SUIT_MASKS[s] for s in range(4)):
                break
            a.append(bits)
        else:
            valid.add(tuple(a))
    return valid


@pytest.mark.parametrize("slots", [
    [(2, 0b0001), (2, 0b0010), (2, 0)],  # the scalar sampler's case
    [(1, 0b0001), (2, 0), (1, 0b0010), (2, 0)],  # two unconstrained slots share the free cards
    [(3, 0), (3, 0)],  # no constraint at all
])
def test_the_many_sampler_is_uniform_over_consistent_assignments(slots) -> None:
    """_allocate_many draws every consistent assignment equally often (each within 2.5 points of its
    share), and nothing else; an impossible split is None, as for _allocate."""
    from smear_env.engine.infoset import _allocate_many

    cards = [0, 1, 2, 8, 9, 10]
    unknown = sum(1 << c for c in cards)
    valid = _valid_assignments(cards, slots)
    n = 12000
    seen = _exact_frequencies(lambda u, s, k: _allocate_many(u, s, np.random.default_rng(5), k).tolist(),
                              unknown, slots, valid, n)
    assert set(seen) == valid
    for c in seen.values():
        assert abs(c / n - 1 / len(valid)) < 0.025
    assert _allocate_many(unknown, [(4, 0b0001), (1, 0), (1, 0)], np.random.default_rng(0), 3) is None


def test_the_many_sampler_matches_the_scalar_one_on_game_positions() -> None:
    """On real views (cards played, voids, a bidder's hidden discards), the chance of each card being in
    each place is the same for both samplers (2,000 deals each: within 5 points everywhere)."""
    rules = SmearRules(kitty_size=3, target_score=1000)
    checked = 0
    for seed in range(40):
        g = Game(rules, seed=seed)
        rng = np.random.default_rng(seed)
        for _ in range(int(rng.integers(10, 30))):
            if g.phase == HAND_OVER:
                break
            la = g.legal_actions()
            g.apply(la[int(rng.integers(len(la)))])
        if g.phase == HAND_OVER or not any(g.voids) or len(g.discards) == 0:
            continue
        seat = (g.bidder + 1) % 4
        view = view_of(g, seat)
        n = 2000
        a = np.zeros((6, 32))
        b = np.zeros((6, 32))
        for table, deals in ((a, [sample_hidden(view, rng) for _ in range(n)]),
                             (b, sample_hidden_many(view, rng, n))):
            for d in deals:
                _check(g, seat, d, view)
                for place, bits in enumerate((*d.hands, d.discards, d.stock)):
                    table[place] += [(bits >> c) & 1 for c in range(32)]
        assert np.abs(a - b).max() / n < 0.05
        checked += 1
        if checked == 3:
            break
    assert checked == 3


def test_the_many_sampler_is_seeded_and_checks_n() -> None:
    g = Game(SmearRules(), seed=1)
    view = view_of(g, 2)
    assert sample_hidden_many(view, np.random.default_rng(9), 4) == sample_hidden_many(
        view, np.random.default_rng(9), 4)
    assert sample_hidden_many(view, np.random.default_rng(9), 0) == []
    for bad in (-1, 2.0, True):
        with pytest.raises(ValueError, match="n must be an integer"):
            sample_hidden_many(view, np.random.default_rng(9), bad)


@settings(max_examples=30, deadline=None, derandomize=True)
@given(seed=st.integers(0, 2**31), kitty=st.integers(0, 3), steps=st.integers(0, 60))
def test_relative_view_rotates_seats_and_teams_field_by_field(seed, kitty, steps):
    """``relative()`` against its definition: relative seat r is absolute seat (r + s) % 4, the observer's
    team is team 0, every other field unchanged; a view of seat 0 is its own relative form."""
    from smear_env.engine.game import Phase

    g = Game(SmearRules(kitty_size=kitty, target_score=1000), seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(steps):
        if g.phase == HAND_OVER:
            g.start_next_hand()
        la = g.legal_actions()
        g.apply(la[int(rng.integers(len(la)))])
    for s in range(4):
        v = view_of(g, s)
        assert type(v.phase) is Phase and v.phase == g.phase
        r = v.relative()

        def seat_of(x, s=s):
            return None if x is None else (x - s) % 4

        assert (r.seat, r.to_act, r.dealer, r.bidder, r.trick_leader) == (
            0, seat_of(v.to_act), seat_of(v.dealer), seat_of(v.bidder), seat_of(v.trick_leader))
        for name in ("bids", "played_by", "voids", "hand_sizes"):
            assert getattr(r, name) == tuple(getattr(v, name)[(k + s) % 4] for k in range(4)), name
        assert r.scores == (v.scores[s % 2], v.scores[1 - s % 2])
        assert r.won_by_team == (v.won_by_team[s % 2], v.won_by_team[1 - s % 2])
        for name in ("phase", "target_score", "kitty_size", "hand", "contract", "trump", "kitty", "discards",
                     "trick", "legal_actions"):
            assert getattr(r, name) == getattr(v, name), name
        assert r.relative() == r
