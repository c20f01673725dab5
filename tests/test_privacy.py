"""Information hiding (R22, R23): an observation depends on nothing its player cannot see.

For many random states and each player, every card hidden from that player (the other hands, the stock,
the kitty and discards unless the player is the bidder) is re-dealt by a random permutation of the hidden
cards, and a hidden trump choice (before the first lead, R10) is changed; the observation and the action
mask must stay identical. Changing the player's own hand must change it (so the test can fail).
"""

from __future__ import annotations

import numpy as np

from smear_env.core.cards import FULL_DECK, SUIT_MASKS
from smear_env.core.config import SmearRules
from smear_env.engine import observation as O
from smear_env.engine.game import BIDDING, GAME_OVER, HAND_OVER, Game
from smear_env.engine.infoset import view_of


def _states(n_games: int, seed: int):
    rng = np.random.default_rng(seed)
    for i in range(n_games):
        rules = SmearRules(kitty_size=i % 4, target_score=5)
        g = Game(rules, seed=int(rng.integers(2**31)))
        steps = 0
        while g.phase != GAME_OVER and steps < 120:
            if g.phase == HAND_OVER:
                g.start_next_hand()
            yield g
            la = g.legal_actions()
            g.apply(la[rng.integers(len(la))])
            steps += 1


def _hidden_from(g: Game, p: int) -> int:
    played = g.played_by[0] | g.played_by[1] | g.played_by[2] | g.played_by[3]
    known = g.hands[p] | played
    if g.bidder == p and g.phase != BIDDING:
        known |= sum(1 << c for c in g.discards) | sum(1 << c for c in g.kitty)  # R9, R23
    return FULL_DECK & ~known


def _redeal_hidden(g: Game, p: int, rng: np.random.Generator) -> Game:
    """A copy of g with the cards hidden from p permuted (and a hidden trump choice changed)."""
    hidden = [c for c in range(32) if _hidden_from(g, p) >> c & 1]
    perm = dict(zip(hidden, rng.permutation(hidden).tolist(), strict=True))

    def m(c: int) -> int:
        return perm.get(c, c)

    def mm(mask: int) -> int:
        return sum(1 << m(c) for c in range(32) if mask >> c & 1)

    h = g.copy()
    h.hands = [mm(x) for x in g.hands]
    h.discards = [m(c) for c in g.discards]
    h.kitty = [m(c) for c in g.kitty]
    h.stock = [m(c) for c in g.stock]
    h.deal = [[m(c) for c in d] for d in g.deal]
    h._legal = None
    trump_hidden = g.trump >= 0 and not g.tricks and not g.trick and g.bidder != p
    if trump_hidden:
        h.trump = (g.trump + 1 + int(rng.integers(3))) % 4  # R10: the trump choice is hidden until led
    return h


def test_observation_ignores_every_hidden_card_r23():
    rng = np.random.default_rng(0)
    n = changed_trump = 0
    for g in _states(16, seed=11):
        for p in range(4):
            before = O.observe(g, p)
            h = _redeal_hidden(g, p, rng)
            if h.trump != g.trump:
                changed_trump += 1
            after = O.observe(h, p)
            assert np.array_equal(before["observation"], after["observation"]), (p, g.phase)
            assert np.array_equal(before["action_mask"], after["action_mask"])
            assert view_of(h, p) == view_of(g, p)
            n += 1
    assert n > 1000 and changed_trump > 0


def test_own_hand_change_is_visible_so_the_test_can_fail():
    rng = np.random.default_rng(1)
    checked = 0
    for g in _states(6, seed=12):
        for p in range(4):
            hidden = _hidden_from(g, p)
            own = g.hands[p]
            if not hidden or not own:
                continue
            mine = (own & -own).bit_length() - 1
            others = [c for c in range(32) if hidden >> c & 1]
            theirs = others[int(rng.integers(len(others)))]
            h = g.copy()
            h.hands = [((x & ~(1 << theirs)) | (1 << mine)) if x >> theirs & 1 else x for x in g.hands]
            h.hands[p] = (own & ~(1 << mine)) | (1 << theirs)
            h._legal = None
            assert not np.array_equal(O.encode_game(h, p), O.encode_game(g, p))
            checked += 1
    assert checked > 100


def test_trump_visible_to_bidder_before_lead_and_to_all_after_r10():
    g = Game(SmearRules(kitty_size=3), seed=4, dealer=3)
    g.apply(1)  # seat 0 bids 2
    for _ in range(3):
        g.apply(0)
    suit = g.legal_actions()[0] - 4
    g.apply(g.legal_actions()[0])  # seat 0 names trump
    sl = O.SLICES["trump"]
    assert O.encode_game(g, 0)[sl].tolist() == [1.0 if s == suit else 0.0 for s in range(4)]
    for p in (1, 2, 3):
        assert not O.encode_game(g, p)[sl].any()
        assert not O.encode_game(g, p)[O.SLICES["kitty"]].any()
    while g.phase != 3:
        g.apply(g.legal_actions()[0])
    assert not O.encode_game(g, 2)[O.SLICES["discards"]].any()
    assert O.encode_game(g, 0)[O.SLICES["discards"]].sum() == 3
    g.apply(g.legal_actions()[0])  # first lead shows trump (R22)
    for p in range(4):
        assert O.encode_game(g, p)[sl].tolist() == [1.0 if s == suit else 0.0 for s in range(4)]
    assert SUIT_MASKS[suit] >> g.trick[0] & 1
