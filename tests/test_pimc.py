"""PIMC agent: always legal (R6-R12), deterministic under a seed with budget_ms=None."""

from __future__ import annotations

import numpy as np
import pytest

from smear_env.agents.base import Agent, RandomAgent
from smear_env.agents.pimc import PimcAgent, greedy_discards
from smear_env.core.cards import SUIT_MASKS, mask_of
from smear_env.core.config import SmearRules
from smear_env.engine.game import HAND_OVER, Game
from smear_env.engine.observation import observe


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


def _view_with_play(hand, played_by=((), (), (), ()), trick=()):
    from smear_env.engine.game import Phase
    from smear_env.engine.infoset import PlayerView

    pb = tuple(mask_of(list(p)) for p in played_by)
    return PlayerView(
        seat=0, phase=Phase.PLAY, to_act=0, dealer=3, scores=(0, 0), target_score=15, kitty_size=3,
        hand=mask_of(hand), bids=(2, None, None, None), bidder=0, contract=2, trump=3, kitty=0, discards=0,
        played_by=pb, won_by_team=(0, 0), trick_leader=None, trick=tuple(trick), voids=(0, 0, 0, 0),
        hand_sizes=(len(hand), len(hand), len(hand), len(hand)), legal_actions=(),
    )


def test_r12_r16_one_class_only_when_every_deal_agrees():
    from smear_env.agents.pimc import _one_class
    from smear_env.core.cards import parse_card

    c = parse_card
    # 7H and 8H: nothing between them, same card-point class (0): one search-free choice
    v = _view_with_play(["7H", "8H", "AS"])
    assert _one_class(v, [c("7H"), c("8H")]) == c("8H")
    # 7H and 9H with 8H unseen (may be in another hand): not equivalent
    assert _one_class(v, [c("7H"), c("9H")]) is None
    # once 8H is played (in an earlier trick) they are
    v2 = _view_with_play(["7H", "9H", "AS"], played_by=((), ("8H",), (), ()))
    assert _one_class(v2, [c("7H"), c("9H")]) == c("9H")
    # a card in the current trick stays between them (it decides who wins the trick, R12)
    v3 = _view_with_play(["7H", "9H", "AS"], played_by=((), ("8H",), (), ()), trick=(c("8H"),))
    assert _one_class(v3, [c("7H"), c("9H")]) is None
    # different card points (R16: the ten) or suits are never merged
    assert _one_class(_view_with_play(["9H", "TH"]), [c("9H"), c("TH")]) is None
    assert _one_class(_view_with_play(["7H", "7D"]), [c("7H"), c("7D")]) is None


def test_r10_r11_heuristic_plan_is_legal():
    from smear_env.agents.heuristic import heuristic_plan

    rules = SmearRules()
    hand = mask_of(["AS", "KS", "7S", "TH", "7D", "8D", "AC", "9C", "QH"])
    trump, disc = heuristic_plan(hand, rules, [0, 1, 2, 3])
    assert hand & SUIT_MASKS[trump] and disc.bit_count() == 3 and disc & hand == disc
    assert not disc & SUIT_MASKS[trump]  # R11: side cards go first
    all_trump = mask_of(["AS", "KS", "QS", "JS", "TS", "9S", "8S", "7S", "AH"])
    trump, disc = heuristic_plan(all_trump, rules, [2, 3])
    assert trump == 3 and disc & mask_of(["AH"]) and disc.bit_count() == 3


@pytest.mark.parametrize("kitty, extra, want", [
    (1, ["JH"], (3, ["TH"])),
    (2, ["JH", "TC"], (3, ["TH", "TC"])),
    (3, ["JH", "TC", "8S"], (3, ["TH", "TC", "JH"])),
])
def test_r10_r11_heuristic_plan_known_answers(kitty, extra, want):
    """Spades with the ace, king and 7; the side tens are banked first (R11, R16), then the side card it
    keeps least (the answers of the rule-by-rule heuristic of commit a87c7e0)."""
    from smear_env.agents.heuristic import heuristic_plan

    hand = mask_of(["AS", "KS", "7S", "TH", "7D", "8D", "AC", "9C", "QH"] + extra)
    assert heuristic_plan(hand, SmearRules(kitty_size=kitty), [0, 1, 2, 3]) == (want[0], mask_of(want[1]))


def test_bad_new_options_named():
    with pytest.raises(ValueError, match="node_cap"):
        PimcAgent(SmearRules(), node_cap=0)
    with pytest.raises(ValueError, match="bid_node_cap"):
        PimcAgent(SmearRules(), bid_node_cap=-1)
    with pytest.raises(ValueError, match="bid_samples"):
        PimcAgent(SmearRules(), bid_samples=0)
    with pytest.raises(ValueError, match="trump_samples"):
        PimcAgent(SmearRules(), trump_samples=0)
    assert PimcAgent(SmearRules(), budget_ms="none", node_cap="none").budget_ms is None


def test_bad_correction_options_named():
    with pytest.raises(ValueError, match="switch_margin"):
        PimcAgent(SmearRules(), switch_margin=-0.5)
    with pytest.raises(ValueError, match="switch_margin"):
        PimcAgent(SmearRules(), switch_margin="big")
    with pytest.raises(ValueError, match="trump_margin"):
        PimcAgent(SmearRules(), trump_margin=-1)
    with pytest.raises(ValueError, match="switch_frac"):
        PimcAgent(SmearRules(), switch_frac=1.5)
    with pytest.raises(ValueError, match="bid_mode"):
        PimcAgent(SmearRules(), bid_mode="bold")
    a = PimcAgent(SmearRules(), switch_margin="none", trump_margin="None")
    assert a.switch_margin is None and a.trump_margin is None
    assert PimcAgent(SmearRules(), switch_margin=float("inf")).switch_margin == float("inf")


def test_r12_infinite_switch_margin_plays_the_heuristics_cards():
    """switch_margin=inf never leaves the heuristic's card (R12), though every card is still searched; a
    pure PIMC agent (switch_margin=None) disagrees with the heuristic somewhere in these hands."""
    from smear_env.agents.heuristic import HeuristicAgent
    from smear_env.engine.game import PLAY
    from smear_env.engine.infoset import view_of

    rules = SmearRules(target_score=1000)
    inf_agent = PimcAgent(rules, samples=2, budget_ms=None, switch_margin=float("inf"))
    pure = PimcAgent(rules, samples=4, budget_ms=None, switch_margin=None)
    heur = HeuristicAgent(rules)
    for a in (inf_agent, pure, heur):
        a.start_game(0, rules, np.random.default_rng(3))
    searched = disagree = 0
    for seed in range(4):
        g = Game(rules, seed=seed)
        while g.phase != HAND_OVER:
            s = g.current_player
            if g.phase == PLAY and len(g.legal_actions()) > 1:
                v = view_of(g, s).relative()
                h = heur.act_view(v)
                assert inf_agent.act_view(v) == h
                assert inf_agent.act(observe(g, s)) == h
                disagree += pure.act_view(v) != h
                searched += 1
            g.apply(heur.act(observe(g, s)))
    assert searched > 20 and disagree > 0


def test_r6_r8_bid_modes_bound_the_heuristics_bid():
    """bid_mode=heuristic bids as the heuristic; max never bids lower, min never higher (R6: pass = 0 <
    bid 2 < bid 3 < bid 4 as action ids)."""
    from smear_env.agents.heuristic import HeuristicAgent
    from smear_env.engine.game import BIDDING
    from smear_env.engine.infoset import view_of

    rules = SmearRules(target_score=1000)
    agents = {m: PimcAgent(rules, bid_samples=4, budget_ms=None, bid_mode=m)
              for m in ("heuristic", "max", "min")}
    heur = HeuristicAgent(rules)
    for a in (*agents.values(), heur):
        a.start_game(0, rules, np.random.default_rng(5))
    n = raised = 0
    for seed in range(12):
        g = Game(rules, seed=100 + seed)
        while g.phase == BIDDING:
            v = view_of(g, g.current_player).relative()
            h = heur.act_view(v)
            assert agents["heuristic"].act_view(v) == h
            hi = agents["max"].act_view(v)
            assert hi >= h and hi in g.legal_actions()
            assert agents["min"].act_view(v) <= h
            raised += hi > h
            n += 1
            g.apply(h)
    assert n == 46 and raised == 3  # the search raised (or opened) the heuristic's bid 3 times here


@pytest.mark.parametrize("kitty, want", [
    (0, {0: 0.0, 1: 1.5, 2: 0.5, 3: -1.0}),
    (2, {0: 0.0, 1: -4 / 3, 2: -3.5, 3: -13 / 3}),
])
def test_r6_r17_hint_bid_values_are_pimc_bid_samples(kitty, want):
    """The web hints value a bid with pimc's own bid estimate (one function, bid_sample): the mean over
    samples of contract_change(pB, b) - pD, a pass 0 (known answers of a seeded deal; scale 0.5: 6
    samples)."""
    from smear_env.agents.pimc import bid_sample
    from smear_env.core.rules import contract_change
    from smear_env.engine.decoding import decode
    from smear_env.engine.game import Game
    from smear_env.engine.observation import observe
    from smear_env.play.hints import PLAN_NODE_CAP, move_values

    rules = SmearRules(kitty_size=kitty)
    game = Game(rules, seed=np.random.default_rng(11))
    seat = game.current_player
    got = move_values(game, seat, np.random.default_rng(5), scale=0.5)
    assert got == pytest.approx(want)
    o = observe(game, seat)
    view = decode(o["observation"], np.asarray(o["action_mask"]))
    rng = np.random.default_rng(5)
    samples = [bid_sample(view, rules, rng, PLAN_NODE_CAP) for _ in range(6)]
    for a in (1, 2, 3):  # bid 2, 3, 4
        worth = [contract_change(pb, a + 1, rules) - pd for pb, pd in samples]
        assert got[a] == pytest.approx(np.mean(worth))
