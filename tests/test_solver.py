"""The perfect-information solver (R12-R17) against hand-computed endings and brute-force minimax."""

from __future__ import annotations

import numpy as np
import pytest

from smear_env.agents.solver import SolverState, contract_value, solve, solve_all_moves
from smear_env.core.actions import TRUMP_ACTION_BASE
from smear_env.core.cards import SUIT_MASKS, mask_of, parse_card
from smear_env.core.config import SmearRules
from smear_env.engine.game import HAND_OVER, PLAY, TRUMP, Game


def _random_until_play(g: Game, rng: np.random.Generator) -> None:
    """Random legal bids/trump/discards (redealing thrown-in hands) until the play phase starts."""
    while g.phase != PLAY:
        if g.phase == HAND_OVER:
            g.start_next_hand()
            continue
        la = g.legal_actions()
        g.apply(la[int(rng.integers(len(la)))])


def _state(hands, trump="S", to_move=0, bidder=0, contract=2, **kw) -> SolverState:
    return SolverState(
        hands=tuple(mask_of(h) for h in hands), trump="CDHS".index(trump), to_move=to_move, bidder=bidder,
        contract=contract, **kw,
    )


def test_r15_r16_last_trick_jack_and_game_to_the_winner():
    # One trick left, spades trump. Seat 0 (bidder team) leads AS and wins JS and TH:
    # High (AS), Jack, Game (all card points) to team 0; Low (7S) played by seat 1 -> team 1. 3-1, contract 2.
    st = _state([["AS"], ["7S"], ["JS"], ["TH"]], won=(0, 0), played_by=(0, 0, 0, 0))
    assert solve(st) == 3 - 1
    assert solve_all_moves(st) == {parse_card("AS"): 2}


def test_r17_set_bidder_value_from_defender_view():
    # Bidder seat 1 (team 1) contract 4 gets only Low (7S): set by 4; defenders win High, Jack, Game: 3.
    st = _state([["AS"], ["7S"], ["JS"], ["TH"]], bidder=1, contract=4)
    # value for the mover's team (team 0, defenders): 3 - (-4) = 7
    assert solve(st) == 7


def test_r13_r16_r17_two_tricks_hand_computed():
    # Hearts trump; only trump in play is AH (seat 0): High to team 0, no Low/Jack in play (R13-R15).
    # Whatever seat 0 leads, team 1 takes TC with KC or QC and wins Game (>= 12 card points against <= 8).
    # Bidder seat 0, contract 2: team 0 has 1 point -> set: -2 - 1 = -3 (R17) for either lead.
    hands = [["AH", "TC"], ["KC", "7C"], ["8C", "9C"], ["QC", "JC"]]
    assert solve_all_moves(_state(hands, trump="H")) == {parse_card("AH"): -3, parse_card("TC"): -3}
    # Bidder seat 1 (team 1), contract 2: team 1 has only Game -> set: -2 - 1 = -3 for the bidder team,
    # i.e. +3 for seat 0's team (values are for the mover's team).
    assert solve_all_moves(_state(hands, trump="H", bidder=1)) == {parse_card("AH"): 3, parse_card("TC"): 3}


def _brute(game: Game, bteam: int) -> float:
    if game.phase != PLAY:
        ch = game.hand_result["score_change"]
        return ch[bteam] - ch[1 - bteam]
    vals = []
    for a in game.legal_actions():
        g = game.copy()
        g.apply(a)
        vals.append(_brute(g, bteam))
    return max(vals) if (game.to_act & 1) == bteam else min(vals)


@pytest.mark.parametrize("seed", range(3))
def test_r12_r17_solver_equals_engine_brute_force_on_endings(seed):
    """Every legal card's value equals brute-force minimax through the real engine (2-3 tricks left),
    over all rule options that change hand scoring."""
    rng = np.random.default_rng(seed)
    for i in range(25):
        rules = SmearRules(
            kitty_size=int(rng.integers(4)), high_low=("ace_seven", "in_play")[i % 2],
            game_point_tie=("nobody", "bidder")[(i // 2) % 2], target_score=1000,
        )
        g = Game(rules, seed=int(rng.integers(1 << 30)))
        _random_until_play(g, rng)
        left = int(rng.integers(2, 4))
        for _ in range((6 - left) * 4 + int(rng.integers(4))):
            la = g.legal_actions()
            g.apply(la[int(rng.integers(len(la)))])
        st = SolverState.from_game(g)
        bteam = g.bidder & 1
        sign = 1 if (g.to_act & 1) == bteam else -1
        expect = {}
        for a in g.legal_actions():
            h = g.copy()
            h.apply(a)
            expect[a - 40] = sign * _brute(h, bteam)
        assert solve_all_moves(st) == expect
        assert solve(st) == max(expect.values())


def test_r10_unknown_trump_kitty0_first_lead_names_trump():
    # kitty_size 0: trump -1 before the first lead; every card of the hand is a candidate lead.
    rng = np.random.default_rng(7)
    g = Game(SmearRules(kitty_size=0, target_score=1000), seed=3)
    _random_until_play(g, rng)
    st = SolverState.from_game(g)
    assert st.trump == -1
    vals = solve_all_moves(st)
    assert sorted(vals) == sorted(a - 40 for a in g.legal_actions())
    assert solve(st) == max(vals.values())


def test_custom_value_fn_and_contract_value():
    v = contract_value(3)
    assert v(3, 1) == 2 and v(2, 1) == -4
    st = _state([["AS"], ["7S"], ["JS"], ["TH"]])
    assert solve(st, lambda pb, pd: pb) == 3


def test_bad_state_is_rejected_with_names():
    with pytest.raises(ValueError, match="hand sizes"):
        _state([["AS", "KS"], ["7S"], ["JS"], ["TH"]])
    with pytest.raises(TypeError, match="rules must be a SmearRules, not dict"):
        _state([["AS"], ["7S"], ["JS"], ["TH"]], rules={"high_low": "in_play"})


def test_solver_state_takes_the_rules_object_and_reads_its_options_through_rules_py():
    from smear_env.core.config import GAME_POINT_TIE_BIDDER, HIGH_LOW_IN_PLAY

    hands = [["KS"], ["8S"], ["JS"], ["TH"]]  # KS wins the last trick for team 0: Jack and Game (14-0)
    # ace_seven: no ace or 7 of trump in play -> team 0 has 2 points < contract 3: set, -3 - 0
    assert solve(_state(hands, contract=3)) == -3
    # in_play: High KS (team 0) and Low 8S (team 1) -> 3 points, contract made: 3 - 1
    assert solve(_state(hands, contract=3, rules=SmearRules(high_low=HIGH_LOW_IN_PLAY))) == 2
    # R16 tie: no card points in play (0-0), no ace/7/jack of trump: Game only, to the bidder with "bidder"
    tie = [["9S"], ["8S"], ["7H"], ["8H"]]
    points = lambda pb, pd: pb  # noqa: E731 -- the bidder team's points
    assert solve(_state(tie), points) == 0
    assert solve(_state(tie, rules=SmearRules(game_point_tie=GAME_POINT_TIE_BIDDER)), points) == 1


def _first_lead_state(rules: SmearRules, rng: np.random.Generator) -> SolverState:
    """A first-lead position: random bids until someone bids, trump = the suit the bidder holds most of,
    random discards (R6-R11)."""
    for _ in range(1000):
        g = Game(rules, seed=int(rng.integers(1 << 62)))
        while g.phase not in (PLAY, HAND_OVER):
            la = g.legal_actions()
            if g.phase == TRUMP:
                hand = g.hands[g.to_act]
                g.apply(max(la, key=lambda a: (hand & SUIT_MASKS[a - TRUMP_ACTION_BASE]).bit_count()))
            else:
                g.apply(la[int(rng.integers(len(la)))])
        if g.phase == PLAY:
            return SolverState.from_game(g)
    raise AssertionError("no deal reached the play phase in 1000 tries")


def _first_lead_states(n: int, seed: int) -> list[SolverState]:
    rng = np.random.default_rng(seed)
    return [_first_lead_state(SmearRules(), rng) for _ in range(n)]


def test_r12_r17_node_cap_exact_below_cap_and_leaf_valued_above():
    """A cap the search never reaches changes nothing; a tiny cap still returns values the exact search can
    take (leaf values of the R17 contract rule) for every legal card, within the exact bounds."""
    for st in _first_lead_states(6, seed=4):
        exact = solve_all_moves(st)
        assert solve_all_moves(st, node_cap=10**9) == exact
        assert solve(st, node_cap=10**9) == solve(st)
        capped = solve_all_moves(st, node_cap=5)
        assert sorted(capped) == sorted(exact)
        c = st.contract
        possible = {(pb if pb >= c else -c) - (4 - pb - u) for pb in range(5) for u in range(4 - pb + 1)}
        possible |= {-v for v in possible}
        assert set(capped.values()) <= possible


def test_r12_r16_endings_unchanged_with_large_cap():
    # the capped entry point is exact on small endings (the cap is never reached)
    st = _state([["AH", "TC"], ["KC", "7C"], ["8C", "9C"], ["QC", "JC"]], trump="H")
    assert solve_all_moves(st, node_cap=1000) == {parse_card("AH"): -3, parse_card("TC"): -3}


def test_node_cap_rejected_with_name():
    st = _state([["AS"], ["7S"], ["JS"], ["TH"]])
    for bad in (0, -3, 1.5, True, "10"):
        with pytest.raises(ValueError, match="node_cap"):
            solve(st, node_cap=bad)
