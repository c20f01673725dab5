"""Illegal actions and calls out of phase: clear errors, and the state is left exactly as it was."""

from __future__ import annotations

import copy

import numpy as np
import pytest

from smear_env.engine.game import Game, GameStateError, IllegalActionError

DEAL = ["AH 8H TC KC AD 9D", "KH TH 7C QC 7D KD", "7H 9H 8C JC TD 8D", "QH JH AC 9C JD QD"]
STOCK = "AS KS QS JS TS 9S 8S 7S"


def snapshot(g: Game) -> tuple:
    """Every slot of the game (deep-copied) plus the generator state and the record."""
    assert all(type(h) is dict for h in g.history)  # the records built (a slot holds them or their calls)
    slots = tuple(copy.deepcopy(getattr(g, s)) for s in Game.__slots__ if s not in ("rng", "_legal"))
    return slots, g.rng.bit_generator.state, g.to_record(), g.legal_actions()


# Action sequences reaching each decision, with kitty_size 3 (BIDDING, TRUMP, DISCARD, PLAY first lead,
# PLAY mid-trick).
PREFIXES = {
    "bidding": ["pass", "bid 3"],
    "trump": ["bid 2", "pass", "pass", "pass"],
    "discard": ["bid 2", "pass", "pass", "pass", "trump H", "discard AS"],
    "first_lead": ["bid 2", "pass", "pass", "pass", "trump H", "discard AS", "discard KS", "discard QS"],
    "mid_trick": ["bid 2", "pass", "pass", "pass", "trump H", "discard AS KS QS", "play AH"],
}


@pytest.mark.parametrize("where", list(PREFIXES))
def test_illegal_action_names_action_and_legal_ones_and_changes_nothing(make_game, act, where: str) -> None:
    g = make_game(DEAL, STOCK, dealer=3, kitty_size=3)
    act(g, *PREFIXES[where])
    legal = set(g.legal_actions())
    illegal = [a for a in range(72) if a not in legal]
    assert legal and illegal
    before = snapshot(g)
    for a in [*illegal, -1, 72, 10**9, True, False, 1.0, "1", None, np.float32(40)]:
        with pytest.raises(IllegalActionError) as e:
            g.apply(a)  # type: ignore[arg-type]
        msg = str(e.value)
        assert "legal actions: " in msg
        for la in legal:
            assert f"{la} (" in msg.split("legal actions: ")[1]
        if isinstance(a, int) and not isinstance(a, bool):
            assert msg.startswith(f"action {a} (")
        assert snapshot(g) == before
    # A numpy integer is accepted like an int.
    a = sorted(legal)[0]
    g.apply(np.int64(a))


def test_illegal_action_message_example(make_game, act) -> None:
    g = make_game(DEAL, STOCK, dealer=3, kitty_size=3)
    act(g, "pass", "bid 3")
    with pytest.raises(IllegalActionError) as e:
        act(g, "bid 2")
    assert str(e.value) == (
        "action 1 (bid 2) is not legal for player 2 in phase BIDDING; legal actions: 0 (pass), 3 (bid 4)"
    )


def test_apply_after_game_over_is_a_state_error(make_game, act) -> None:
    g = make_game(DEAL, STOCK, dealer=3, kitty_size=0, target_score=1)
    act(g, "bid 2", "pass", "pass", "pass")
    act(g, "play AH KH 7H QH", "play 8H TH 9H JH", "play AC TC 7C 8C", "play 9C KC QC JC")
    act(g, "play AD 7D TD JD", "play 9D KD 8D QD")
    assert g.is_over and g.winner == 0 and g.current_player is None and g.legal_actions() == ()
    before = snapshot(g)
    with pytest.raises(GameStateError, match="the game is over"):
        g.apply(0)
    with pytest.raises(GameStateError, match="needs phase HAND_OVER, not GAME_OVER"):
        g.start_next_hand()
    assert snapshot(g) == before


def test_start_next_hand_mid_hand_is_a_state_error(make_game, act) -> None:
    g = make_game(DEAL, STOCK)
    with pytest.raises(GameStateError, match="needs phase HAND_OVER, not BIDDING"):
        g.start_next_hand()


@pytest.mark.parametrize("seed", [1.5, "7", True])
def test_bad_seed_type(seed: object) -> None:
    with pytest.raises(TypeError, match="seed must be an int, a numpy Generator or None"):
        Game(seed=seed)  # type: ignore[arg-type]


def test_bad_rules_type() -> None:
    with pytest.raises(TypeError, match="rules must be a SmearRules"):
        Game({"kitty_size": 3})  # type: ignore[arg-type]
