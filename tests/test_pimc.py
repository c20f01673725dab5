"""PIMC agent: always legal (R6-R12), deterministic under a seed with budget_ms=None."""

from __future__ import annotations

import numpy as np
import pytest

from smear_env.agents.base import Agent, RandomAgent
from smear_env.agents.pimc import PimcAgent, greedy_discards
from smear_env.cards import SUIT_MASKS, mask_of
from smear_env.config import SmearRules
from smear_env.game import HAND_OVER, Game
from smear_env.observation import observe


def _play_hands(rules: SmearRules, seed: int, hands: int, samples: int = 2) -> list[int]:
    agents = [PimcAgent(rules, samples=samples, budget_ms=None), RandomAgent(),
              PimcAgent(rules, samples=samples, budget_ms=None), RandomAgent()]
    for i, a in enumerate(agents):
        a.start_game(i, rules, np.random.default_rng([seed, i]))
    g = Game(rules, seed=seed)
    actions = []
    done = 0
    while done < hands and not g.is_over:
        if g.phase == HAND_OVER:
            done += 1
            g.start_next_hand()
            continue
        s = g.current_player
        a = agents[s].act(observe(g, s))
        assert a in g.legal_actions()  # apply() would raise too; this names the decision
        actions.append(a)
        g.apply(a)
    return actions


def test_pimc_is_an_agent():
    assert isinstance(PimcAgent(SmearRules()), Agent)
    assert PimcAgent(SmearRules()).name == "pimc"


@pytest.mark.parametrize("kitty", [0, 1, 3])
def test_r6_r12_pimc_never_plays_illegal(kitty):
    all_pass = "dealer_must_bid" if kitty == 1 else "redeal"
    rules = SmearRules(kitty_size=kitty, target_score=1000, all_pass=all_pass)
    actions = _play_hands(rules, seed=kitty, hands=3)
    assert len(actions) > 30


def test_pimc_deterministic_under_seed():
    rules = SmearRules(target_score=1000)
    assert _play_hands(rules, seed=11, hands=2) == _play_hands(rules, seed=11, hands=2)


def test_r8_stuck_dealer_bids():
    rules = SmearRules(all_pass="dealer_must_bid")
    g = Game(rules, seed=5)
    for _ in range(3):
        g.apply(0)  # three passes: the dealer is stuck
    agent = PimcAgent(rules, samples=2, budget_ms=None)
    agent.start_game(g.current_player, rules, np.random.default_rng(0))
    a = agent.act(observe(g, g.current_player))
    assert a != 0 and a in g.legal_actions()


def test_r11_greedy_discards_keep_trump_and_bank_points():
    hand = mask_of(["AS", "KS", "7S", "TH", "7D", "8D", "AC", "9C", "QH"])
    d = greedy_discards(hand, 3, 3)
    assert not d & SUIT_MASKS[3]
    assert d == mask_of(["TH", "QH", "7D"])
    all_trump = mask_of(["AS", "KS", "QS", "JS", "TS", "9S", "8S", "7S", "AH"])
    d = greedy_discards(all_trump, 3, 3)
    assert d & mask_of(["AH"]) and d.bit_count() == 3


def test_bad_options_named():
    with pytest.raises(ValueError, match="samples"):
        PimcAgent(SmearRules(), samples=0)
    with pytest.raises(ValueError, match="budget_ms"):
        PimcAgent(SmearRules(), budget_ms=-1)
