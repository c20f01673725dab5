"""The rule-based baseline: legal everywhere, its documented choices on constructed deals, and strength."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from smear_env.agents.base import RandomAgent
from smear_env.agents.heuristic import HeuristicAgent, best_suit
from smear_env.core.actions import action_name
from smear_env.core.cards import mask_of
from smear_env.core.config import SmearRules
from smear_env.engine.game import GAME_OVER, HAND_OVER, Game
from smear_env.engine.infoset import view_of
from smear_env.engine.observation import observe
from smear_env.evaluation import run_match

# seat 0 is strong in hearts; the kitty (first 3 stock cards) is 9H QS 7S
HANDS = [
    "AH KH JH 7H TC 8D",
    "7C 8C 9C JC QC KC",
    "AC 7D 9D TD JD QD",
    "KD AD 8H TH QH 8S",
]
STOCK = "9H QS 7S 9S TS JS KS AS"


def _decide(agent: HeuristicAgent, game: Game) -> str:
    seat = game.current_player
    agent.start_game(seat, game.rules, np.random.default_rng(0))
    return action_name(agent.act(observe(game, seat)))


def test_R6_R10_R11_bids_names_best_trump_and_banks_side_ten(make_game, act):
    game = make_game(HANDS, STOCK, dealer=3)
    h = HeuristicAgent(game.rules)
    assert _decide(h, game) == "bid 4"  # A, J and 7 of hearts: High, Low, Jack nearly sure
    act(game, "bid 4")  # R7: a bid of 4 ends the bidding
    assert _decide(h, game) == "trump H"
    act(game, "trump H")
    # R11/R16: the side ten goes to the discards, where it counts for the bidder's Game total
    assert _decide(h, game) == "discard TC"
    act(game, "discard TC")
    for _ in range(2):
        d = _decide(h, game)
        assert d.startswith("discard") and not d.endswith("H")  # trump is kept
        act(game, d)
    # R12/R15: holding the ace, lead it to pull trump
    assert _decide(h, game) == "play AH"


def test_R15_R16_feeds_ten_to_partner_who_wins_and_keeps_points_from_opponents(make_game, act):
    game = make_game(HANDS, STOCK, dealer=3)
    act(game, "bid 4", "trump H", "discard TC QS 7S", "play AH", "play 7C")
    h = HeuristicAgent(game.rules)
    # partner (seat 0) wins with the ace of trump, nobody can beat it: feed the ten of diamonds
    assert game.current_player == 2
    assert _decide(h, game) == "play TD"
    act(game, "play TD")
    # seat 3 cannot beat the ace: it plays its lowest trump, not the ten or the queen
    assert _decide(h, game) == "play 8H"


def test_weak_hand_passes_and_R8_stuck_dealer_bids(make_game, act):
    weak = ["8C 9C 8D 9D 8S 9S", "7C TC JC QC KC AC", "7D TD JD QD KD AD", "7H 8H 9H TH JH QH"]
    stock = "KH AH 7S TS JS QS KS AS"
    game = make_game(weak, stock, dealer=3)
    h = HeuristicAgent(game.rules)
    assert _decide(h, game) == "pass"
    stuck = make_game(weak, stock, dealer=0, all_pass="dealer_must_bid")
    act(stuck, "pass", "pass", "pass")
    assert stuck.current_player == 0
    assert _decide(HeuristicAgent(stuck.rules), stuck) == "bid 2"  # R8: may not pass; bids the minimum


def test_estimate_respects_high_low_option():
    hand = mask_of("KH QH 8H 9D 9S 8C".split())
    ace_seven = best_suit(hand, SmearRules(high_low="ace_seven"), 0)
    in_play = best_suit(hand, SmearRules(high_low="in_play"), 0)
    assert ace_seven[1] == in_play[1] == 2
    # R13/R14 in_play: a king and an 8 may well be the highest and lowest trump played
    assert in_play[0] > ace_seven[0] + 0.5


RULE_SETS = [
    SmearRules(kitty_size=k, high_low=hl, all_pass=ap)
    for k, hl, ap in itertools.product((0, 1, 3), ("ace_seven", "in_play"), ("redeal", "dealer_must_bid"))
]


@pytest.mark.parametrize("rules", RULE_SETS, ids=lambda r: f"k{r.kitty_size}-{r.high_low}-{r.all_pass}")
def test_R10_R12_act_equals_act_view_and_is_legal_under_every_option(rules):
    """Through the observation vector (decode) and the fast path the agent takes the same, legal action."""
    rng = np.random.default_rng(rules.kitty_size)
    heur = [HeuristicAgent(rules) for _ in range(4)]
    for s, a in enumerate(heur):
        a.start_game(s, rules, np.random.default_rng(s))
    game = Game(rules, seed=int(rng.integers(1 << 30)))
    decisions = 0
    while game.phase != GAME_OVER and decisions < 400:
        if game.phase == HAND_OVER:
            game.start_next_hand()
            continue
        seat = game.current_player
        a = heur[seat].act(observe(game, seat))
        assert a == heur[seat].act_view(view_of(game, seat).relative())
        assert a in game.legal_actions()
        # mix in random moves so that odd states are visited too
        game.apply(a if rng.random() < 0.7 else int(rng.choice(game.legal_actions())))
        decisions += 1
    assert decisions > 50


def test_heuristic_beats_random_in_at_least_90_percent_of_duplicate_games():
    res = run_match("heuristic", "random", games=60, rules=SmearRules(), seed=2024).summary()
    assert res["win_rate_a"] >= 0.9
    assert res["win_rate_a_ci95"][0] > 0.8
    assert res["margin_per_hand_a"] > 1.0


def test_random_agent_fast_path_matches_act():
    rules = SmearRules()
    game = Game(rules, seed=3)
    a, b = RandomAgent(), RandomAgent()
    a.start_game(game.current_player, rules, np.random.default_rng(9))
    b.start_game(game.current_player, rules, np.random.default_rng(9))
    for _ in range(30):
        if game.phase >= HAND_OVER:
            break
        seat = game.current_player
        x = a.act(observe(game, seat))
        assert x == b.act_view(view_of(game, seat).relative())
        game.apply(x)
