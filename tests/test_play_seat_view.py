"""The seat view (smear-seat-view/1): schema, exact inverse, and privacy over many games (R22, R23)."""

from __future__ import annotations

import numpy as np
import pytest

from smear_env.core.config import SmearRules
from smear_env.engine.game import GAME_OVER, HAND_OVER, Game
from smear_env.engine.infoset import view_of
from smear_env.engine.seat_view import (
    absolute_view,
    public_action,
    seat_view,
    seat_view_of,
    validate_seat_view,
    view_from_json,
)
from tests.play_helpers import card_names_in, known_names
from tests.test_privacy import _redeal_hidden


def _states(n_games: int, seed: int):
    rng = np.random.default_rng(seed)
    for i in range(n_games):
        g = Game(SmearRules(kitty_size=i % 4, target_score=3), seed=int(rng.integers(2**31)))
        for _ in range(150):
            yield g
            if g.phase == GAME_OVER:
                break
            if g.phase == HAND_OVER:
                g.start_next_hand()
                continue
            la = g.legal_actions()
            g.apply(la[rng.integers(len(la))])


def test_seat_view_is_valid_exact_and_private_over_many_states_r22_r23():
    rng = np.random.default_rng(1)
    n = hidden_changed = 0
    for g in _states(8, seed=5):
        for p in range(4):
            d = seat_view_of(g, p)
            if n % 16 == 0 or (g.phase >= HAND_OVER and p == 0):
                validate_seat_view(d)
            view = view_of(g, p)
            assert view_from_json(d) == view  # exact inverse
            assert absolute_view(view.relative(), p) == view
            assert card_names_in(d) <= known_names(g, p), (p, g.phase)
            h = _redeal_hidden(g, p, rng)
            if h.hands != g.hands:
                hidden_changed += 1
            d.pop("hand_result", None)  # announced at the end of a hand; holds no card
            assert seat_view(view_of(h, p)) == d  # changing hidden cards changes nothing
            n += 1
    assert n > 400 and hidden_changed > 300


def test_seat_view_names_own_cards_and_legal_actions():
    hands = ["AH KH QH JH TH 9H", "AS KS QS JS TS 9S", "AD KD QD JD TD 9D", "AC KC QC JC TC 9C"]
    g = Game.from_deal([h.split() for h in hands],
                       "7H 8H 7S 8S 7D 8D 7C 8C".split(), dealer=3, rules=SmearRules(kitty_size=2), seed=0)
    d = seat_view_of(g, 0)
    assert d["hand"] == ["9H", "TH", "JH", "QH", "KH", "AH"]
    assert d["to_act"] == 0 and d["phase"] == "BIDDING"
    assert d["legal_actions"] == [{"id": 0, "name": "pass"}, {"id": 1, "name": "bid 2"},
                                  {"id": 2, "name": "bid 3"}, {"id": 3, "name": "bid 4"}]
    assert seat_view_of(g, 1)["legal_actions"] == []
    assert card_names_in(seat_view_of(g, 1)) == {"AS", "KS", "QS", "JS", "TS", "9S"}


def test_public_action_hides_trump_choice_and_discards_of_others_r23():
    assert public_action(1, 0, 6) == {"seat": 0, "name": "names trump"}
    assert public_action(1, 0, 8 + 5) == {"seat": 0, "name": "discards a card"}
    assert public_action(0, 0, 6) == {"seat": 0, "id": 6, "name": "trump H"}
    assert public_action(2, 1, 2) == {"seat": 1, "id": 2, "name": "bid 3"}


def test_view_from_json_rejects_malformed_views():
    g = Game(SmearRules(), seed=3)
    d = seat_view_of(g, 0)
    with pytest.raises(ValueError, match="hand"):
        view_from_json({**d, "hand": ["ZZ"]})
    with pytest.raises(ValueError, match="format"):
        view_from_json({**d, "format": "x"})
    with pytest.raises(ValueError, match="seat"):
        validate_seat_view({**d, "seat": 7})
