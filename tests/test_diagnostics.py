"""The composite ("which half is weak") agent and the bid statistics of training.diagnostics."""

from __future__ import annotations

import numpy as np
import pytest

from smear_env.agents.composite import CompositeAgent, parse_split_spec, row_phases
from smear_env.agents.registry import make_composite
from smear_env.core.config import SmearRules
from smear_env.engine.game import BIDDING, DISCARD, PLAY, TRUMP
from smear_env.engine.vector import VectorGame
from training.diagnostics import BidStats, match_with_bids


class _First:
    """A batched stub: the last legal action (a bid of 4, so hands are played); remembers the phases of
    the rows it was asked about."""

    vectorised = True

    def __init__(self, name: str) -> None:
        self.name = name
        self.phases: list[int] = []
        self.started: list[int] = []

    def start_game(self, slot, seat, rules, rng):
        self.started.append(slot)

    def act_batch(self, obs, mask, slots):
        self.phases += row_phases(obs).tolist()
        return (mask.shape[1] - 1 - np.argmax(mask[:, ::-1], axis=1)).astype(np.int64)

    def close(self):
        pass


def test_composite_sends_bid_and_trump_rows_to_one_agent_and_discard_and_play_rows_to_the_other():
    bid, play = _First("b"), _First("p")
    agent = CompositeAgent(bid, play)
    rules = SmearRules()
    vg = VectorGame(32, rules, seed=3)
    rng = np.random.default_rng(0)
    for slot in range(32):
        agent.start_game(slot, 0, rules, rng)
    assert bid.started == play.started == list(range(32))
    for _ in range(120):
        a = agent.act_batch(vg.observe(), vg.legal_mask(), np.arange(32))
        vg.step(a)
    assert set(bid.phases) == {BIDDING, TRUMP}
    assert set(play.phases) == {DISCARD, PLAY}
    assert agent.name == "split:bid=b,play=p"


def test_split_spec_parses_both_halves_and_rejects_bad_ones():
    assert parse_split_spec("split:bid=scratch,play=heuristic") == ("scratch", "heuristic")
    assert parse_split_spec("split:play=heuristic, bid=random") == ("random", "heuristic")
    assert parse_split_spec("split:bid=pimc:samples=2,bid_samples=8,play=rollout:base=default,samples=4") == (
        "pimc:samples=2,bid_samples=8", "rollout:base=default,samples=4")
    for bad in ("split:bid=scratch", "split:bid=a,bid=b", "split:bid=,play=x", "bid=a,play=b",
                "split:x=c,bid=a,play=b", "split:bid=a,play=b,"):
        with pytest.raises(ValueError, match="bad composite spec"):
            parse_split_spec(bad)
    with pytest.raises(ValueError, match="unknown agent spec 'nope'"):
        make_composite("nope", "heuristic")


def test_bid_stats_count_decisions_contracts_and_made_per_player():
    rec = {"players": ["A", "B", "A", "B"], "hands": [
        {"bids": [{"seat": 1, "bid": "pass"}, {"seat": 2, "bid": 3}, {"seat": 3, "bid": 4},
                  {"seat": 0, "bid": "pass"}], "bidder": 3, "contract": 4, "made_contract": False,
         "points": {}},
        {"bids": [{"seat": 2, "bid": "pass"}, {"seat": 3, "bid": "pass"}, {"seat": 0, "bid": "pass"},
                  {"seat": 1, "bid": "pass"}]},  # thrown in
        {"bids": [{"seat": 3, "bid": 2}, {"seat": 0, "bid": "pass"}, {"seat": 1, "bid": "pass"},
                  {"seat": 2, "bid": "pass"}], "bidder": 3, "contract": 2, "made_contract": True,
         "points": {}},
    ]}
    s = BidStats()
    s(rec)
    a, b = s.players["A"], s.players["B"]
    assert a.decisions == {"pass": 5, "2": 0, "3": 1, "4": 0}
    assert b.decisions == {"pass": 4, "2": 1, "3": 0, "4": 1}
    assert b.contracts == {"2": 1, "3": 0, "4": 1} and b.made == {"2": 1, "3": 0, "4": 0}
    assert a.hands == b.hands == 4
    sb = b.summary()
    assert sb["contract_success"] == 0.5 and sb["average_contract"] == 3.0
    assert sb["bid_share"]["pass"] == 4 / 6


def test_heuristic_bidding_with_heuristic_play_is_the_heuristic():
    """split:bid=heuristic,play=heuristic plays the heuristic's games exactly (same summary)."""
    split = match_with_bids("split:bid=heuristic,play=heuristic", "random", 16, seed=4)
    plain = match_with_bids("heuristic", "random", 16, seed=4)
    for key in ("win_rate_a", "margin_per_hand_a", "hands_played"):
        assert split["summary"][key] == plain["summary"][key]
    assert split["bids"]["split:bid=heuristic,play=heuristic"] == plain["bids"]["heuristic"]
