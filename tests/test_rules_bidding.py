"""Scenario tests for the table and the bidding: R1, R4-R8."""

from __future__ import annotations

from collections import Counter

import pytest

from smear_env.core.cards import FULL_DECK, HAND_SIZE, mask_of
from smear_env.core.config import SmearRules
from smear_env.engine.game import (
    BIDDING,
    HAND_OVER,
    PLAY,
    TRUMP,
    Game,
    GameStateError,
    IllegalActionError,
    team_of,
)

# Every card dealt; spades all in the stock.
DEAL = ["AH 8H TC KC AD 9D", "KH TH 7C QC 7D KD", "7H 9H 8C JC TD 8D", "QH JH AC 9C JD QD"]
STOCK = "AS KS QS JS TS 9S 8S 7S"
ALL = {"pass", "bid 2", "bid 3", "bid 4"}


def test_R1_partners_sit_opposite() -> None:
    assert [team_of(s) for s in range(4)] == [0, 1, 0, 1]


def test_R4_first_dealer_is_uniformly_random_and_seeded() -> None:
    dealers = Counter(Game(seed=s).dealer for s in range(800))
    assert set(dealers) == {0, 1, 2, 3}
    assert all(150 <= n <= 250 for n in dealers.values()), dealers
    assert [Game(seed=7).dealer for _ in range(3)] == [Game(seed=7).dealer] * 3


def test_R4_deal_passes_left_after_a_played_hand(make_game, act) -> None:
    g = make_game(DEAL, STOCK, dealer=3, kitty_size=0)
    act(g, "bid 2", "pass", "pass", "pass")
    act(g, "play AH KH 7H QH", "play 8H TH 9H JH", "play AC TC 7C 8C", "play 9C KC QC JC")
    act(g, "play AD 7D TD JD", "play 9D KD 8D QD")
    assert g.phase == HAND_OVER and not g.hand_thrown_in
    g.start_next_hand()
    assert (g.dealer, g.current_player, g.hand_number, g.phase) == (0, 1, 1, BIDDING)
    assert [h.bit_count() for h in g.hands] == [6, 6, 6, 6]


@pytest.mark.parametrize("dealer", [0, 1, 2, 3])
def test_R4_R8_thrown_in_hand_is_redealt_by_the_same_dealer(make_game, act, dealer: int) -> None:
    g = make_game(DEAL, STOCK, dealer=dealer)
    act(g, "pass", "pass", "pass", "pass")
    assert g.phase == HAND_OVER and g.hand_thrown_in
    assert g.scores == [0, 0] and g.hand_result is None and g.winner is None
    assert g.history[-1]["thrown_in"] is True and g.history[-1]["bids"][-1] == {"seat": dealer, "bid": "pass"}
    with pytest.raises(GameStateError, match="start_next_hand"):
        g.apply(0)
    g.start_next_hand()
    assert (g.dealer, g.current_player, g.hand_number) == (dealer, (dealer + 1) % 4, 1)
    assert not g.hand_thrown_in and g.bids == []


def test_R4_dealers_over_a_seeded_game_follow_rotation() -> None:
    g = Game(SmearRules(kitty_size=2), seed=3)
    choices = iter(range(10_000))
    hands = 0
    while hands < 40:
        if g.phase == HAND_OVER:
            before, thrown = g.dealer, g.hand_thrown_in
            g.start_next_hand()
            assert g.dealer == (before if thrown else (before + 1) % 4)
            hands += 1
            continue
        if g.phase > HAND_OVER:
            break
        legal = g.legal_actions()
        g.apply(legal[next(choices) % len(legal)])


def test_R5_deal_is_6_cards_each_and_8_in_stock() -> None:
    for seed in range(50):
        g = Game(seed=seed)
        assert [h.bit_count() for h in g.hands] == [HAND_SIZE] * 4
        assert len(g.stock) == 8 and len(set(g.stock)) == 8
        stock = mask_of(g.stock)
        assert g.hands[0] | g.hands[1] | g.hands[2] | g.hands[3] | stock == FULL_DECK
        assert sum(h.bit_count() for h in g.hands) + stock.bit_count() == 32


@pytest.mark.parametrize(
    ("hands", "stock", "match"),
    [
        (DEAL[:3], STOCK, "needs 4 hands"),
        ([*DEAL[:3], "QH JH AC 9C JD"], STOCK + " QD", "seat 3 has 5 cards"),
        (DEAL, "AS KS QS JS TS 9S 8S", "stock has 7 cards"),
        ([*DEAL[:3], "QH JH AC 9C JD AS"], "QD KS QS JS TS 9S 8S 7S", None),
        ([*DEAL[:3], "QH JH AC 9C JD AH"], STOCK, "AH appears twice"),
        ([*DEAL[:3], "QH JH AC 9C JD XX"], STOCK, "not a card name"),
    ],
)
def test_R5_from_deal_checks_the_deal(hands: list[str], stock: str, match: str | None) -> None:
    args = ([h.split() for h in hands], stock.split(), 0)
    if match is None:
        Game.from_deal(*args)  # a legal deal
        return
    with pytest.raises(ValueError, match=match):
        Game.from_deal(*args)


@pytest.mark.parametrize("dealer", [True, -1, 4, "0", 1.0])
def test_R4_dealer_must_be_a_seat(dealer: object) -> None:
    with pytest.raises(ValueError, match=r"dealer must be a seat 0\.\.3"):
        Game.from_deal([h.split() for h in DEAL], STOCK.split(), dealer)  # type: ignore[arg-type]


@pytest.mark.parametrize("dealer", [0, 1, 2, 3])
def test_R6_bidding_starts_left_of_dealer_and_goes_clockwise(make_game, act, dealer: int) -> None:
    g = make_game(DEAL, STOCK, dealer=dealer)
    order = []
    while g.phase == BIDDING:
        order.append(g.current_player)
        act(g, "pass" if len(order) < 4 else "bid 2")
    assert order == [(dealer + k) % 4 for k in range(1, 5)]
    assert g.bidder == dealer and g.contract == 2


def test_R6_bid_must_exceed_every_earlier_bid(make_game, act, legal) -> None:
    g = make_game(DEAL, STOCK, dealer=3)
    assert legal(g) == ALL
    act(g, "pass")
    assert legal(g) == ALL
    act(g, "bid 2")
    assert legal(g) == {"pass", "bid 3", "bid 4"}
    with pytest.raises(IllegalActionError, match=r"action 1 \(bid 2\) is not legal for player 2"):
        act(g, "bid 2")
    act(g, "bid 3")
    assert legal(g) == {"pass", "bid 4"}
    act(g, "pass")  # the dealer acts last (R7)
    assert g.phase == TRUMP and (g.bidder, g.contract) == (2, 3)
    assert g.bids == [(0, 0), (1, 2), (2, 3), (3, 0)]


def test_R7_highest_bidder_wins_after_dealer_acts(make_game, act) -> None:
    g = make_game(DEAL, STOCK, dealer=1, kitty_size=0)
    act(g, "bid 2", "pass", "bid 3")  # seats 2, 3, 0
    assert g.phase == BIDDING and g.current_player == 1
    act(g, "pass")
    assert g.phase == PLAY and (g.bidder, g.contract, g.current_player) == (0, 3, 0)


@pytest.mark.parametrize("kitty_size", [0, 3])
def test_R7_bid_of_4_ends_bidding_at_once(make_game, act, kitty_size: int) -> None:
    g = make_game(DEAL, STOCK, dealer=3, kitty_size=kitty_size)
    act(g, "pass", "bid 4")
    assert g.phase == (PLAY if kitty_size == 0 else TRUMP)
    assert (g.bidder, g.contract, g.current_player) == (1, 4, 1)
    assert g.bids == [(0, 0), (1, 4)]  # seats 2 and 3 never act


def test_R7_first_bidder_bidding_4_ends_bidding(make_game, act) -> None:
    g = make_game(DEAL, STOCK, dealer=2, kitty_size=1)
    act(g, "bid 4")
    assert (g.phase, g.bidder, g.contract, g.bids) == (TRUMP, 3, 4, [(3, 4)])


def test_R8_redeal_dealer_may_pass_after_three_passes(make_game, act, legal) -> None:
    g = make_game(DEAL, STOCK, dealer=3, all_pass="redeal")
    act(g, "pass", "pass", "pass")
    assert legal(g) == ALL


def test_R8_dealer_must_bid_when_stuck(make_game, act, legal) -> None:
    g = make_game(DEAL, STOCK, dealer=3, all_pass="dealer_must_bid")
    act(g, "pass", "pass", "pass")
    assert g.current_player == 3
    assert legal(g) == {"bid 2", "bid 3", "bid 4"}
    with pytest.raises(IllegalActionError, match=r"action 0 \(pass\) is not legal for player 3.*actions: 1 "):
        act(g, "pass")
    act(g, "bid 2")
    assert (g.phase, g.bidder, g.contract, g.hand_thrown_in) == (TRUMP, 3, 2, False)


def test_R8_dealer_must_bid_only_when_all_others_passed(make_game, act, legal) -> None:
    g = make_game(DEAL, STOCK, dealer=3, all_pass="dealer_must_bid")
    assert legal(g) == ALL  # the first bidder may pass
    act(g, "pass", "bid 2", "pass")
    assert legal(g) == {"pass", "bid 3", "bid 4"}
    act(g, "pass")
    assert (g.bidder, g.contract) == (1, 2)


def test_R8_dealer_must_bid_never_throws_in() -> None:
    rules = SmearRules(all_pass="dealer_must_bid")
    for seed in range(100):
        g = Game(rules, seed=seed)
        while g.phase == BIDDING:
            g.apply(g.legal_actions()[0])  # always pass when allowed
        assert not g.hand_thrown_in and g.bidder == g.dealer and g.contract == 2
