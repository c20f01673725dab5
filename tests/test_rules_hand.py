"""Scenario tests for kitty, trump, discards and tricks: R9-R12."""

from __future__ import annotations

import pytest

from smear_env.core.cards import SUIT_MASKS, mask_of, names, parse_card
from smear_env.engine.game import DISCARD, HAND_OVER, PLAY, TRUMP, IllegalActionError

# Seat 0 holds hearts, clubs and diamonds but no spade; the stock starts with QS JH 8D (R9 kitty order).
KDEAL = ["AH KH 7C 8C 9D TD", "QH TH AC KC AD KD", "9H 8H QC JC QD JD", "7H TC 9C AS KS JS"]
KSTOCK = "QS JH 8D 7D TS 9S 8S 7S"

# Seat 0 is dealt six hearts; the kitty brings two more and the ace of spades.
TDEAL = ["AH KH QH JH TH 9H", "AC KC QC JC TC 9C", "8C 7C AD KD QD JD", "TD 9D KS QS JS TS"]
TSTOCK = "8H 7H AS 7S 8S 9S 7D 8D"

# k = 0 deal for following rules (R12): hearts are made trump by the first lead.
FDEAL = ["AH AC KC 7S 8S 9S", "KH 7H QC JC AD KD", "QH 8C 9C QD JD TD", "JH TC 7C 9D 8D 7D"]
FSTOCK = "TH 9H 8H AS KS QS JS TS"


@pytest.mark.parametrize("k", [0, 1, 2, 3])
def test_R9_bidder_takes_the_first_k_stock_cards(make_game, act, k: int) -> None:
    g = make_game(KDEAL, KSTOCK, dealer=3, kitty_size=k)
    dealt = list(g.hands)
    act(g, "bid 2", "pass", "pass", "pass")
    kitty = KSTOCK.split()[:k]
    assert names(g.kitty) == kitty
    assert g.hands[0] == dealt[0] | mask_of(kitty)
    assert g.hands[0].bit_count() == 6 + k
    assert g.hands[1:] == dealt[1:]
    assert names(g.stock) == KSTOCK.split()  # the stock record is unchanged; the rest counts for nobody
    assert g.phase == (PLAY if k == 0 else TRUMP) and g.current_player == 0


def test_R9_kitty_goes_to_the_bidder_not_the_first_player(make_game, act) -> None:
    g = make_game(KDEAL, KSTOCK, dealer=3, kitty_size=2)
    act(g, "pass", "pass", "bid 3", "pass")
    assert g.hands[2] == mask_of(KDEAL[2].split() + ["QS", "JH"])
    assert g.hands[0] == mask_of(KDEAL[0].split())


@pytest.mark.parametrize(("k", "suits"), [(1, {"C", "D", "H", "S"}), (2, {"C", "D", "H", "S"})])
def test_R10_trump_choice_among_suits_in_hand_after_kitty(make_game, act, legal, k: int, suits: set) -> None:
    g = make_game(KDEAL, KSTOCK, dealer=3, kitty_size=k)
    act(g, "bid 2", "pass", "pass", "pass")
    assert legal(g) == {f"trump {s}" for s in suits}  # spades only through the kitty card QS


def test_R10_trump_choice_excludes_suits_not_held(make_game, act, legal) -> None:
    # Seat 3 bids; with k = 1 it holds 7H TC 9C AS KS JS + QS: no diamond.
    g = make_game(KDEAL, KSTOCK, dealer=2, kitty_size=1)
    act(g, "bid 2", "pass", "pass", "pass")
    assert g.bidder == 3
    assert legal(g) == {"trump C", "trump H", "trump S"}
    with pytest.raises(IllegalActionError, match=r"action 5 \(trump D\) is not legal"):
        act(g, "trump D")


def test_R10_R11_first_lead_must_be_the_chosen_trump(make_game, act, legal) -> None:
    g = make_game(KDEAL, KSTOCK, dealer=3, kitty_size=3)
    act(g, "bid 2", "pass", "pass", "pass", "trump H")
    assert g.phase == DISCARD and g.trump == 2
    # R11: trumps AH KH JH may not be discarded while non-trumps remain.
    assert legal(g) == {f"discard {c}" for c in ["7C", "8C", "9D", "TD", "QS", "8D"]}
    act(g, "discard TD", "discard 7C")
    assert g.phase == DISCARD
    act(g, "discard 8C")
    assert g.phase == PLAY and g.current_player == 0
    assert g.hands[0] == mask_of("AH KH JH 9D QS 8D".split())
    assert g.discards == [parse_card("TD"), parse_card("7C"), parse_card("8C")]
    assert legal(g) == {"play AH", "play KH", "play JH"}
    with pytest.raises(IllegalActionError, match=r"play 9D"):
        act(g, "play 9D")
    act(g, "play KH")
    assert g.trump == 2


def test_R10_kitty_0_first_lead_is_free_and_shows_trump(make_game, act, legal) -> None:
    g = make_game(KDEAL, KSTOCK, dealer=3, kitty_size=0)
    act(g, "bid 2", "pass", "pass", "pass")
    assert g.phase == PLAY and g.trump == -1
    assert legal(g) == {f"play {c}" for c in KDEAL[0].split()}
    act(g, "play 9D")
    assert g.trump == 1  # diamonds
    assert legal(g) == {"play AD", "play KD"}  # R12: trump led, seat 1 must play trump


def test_R11_trump_discarded_only_when_all_cards_are_trump(make_game, act, legal) -> None:
    g = make_game(TDEAL, TSTOCK, dealer=3, kitty_size=3)
    act(g, "bid 3", "pass", "pass", "pass")
    assert g.hands[0].bit_count() == 9
    act(g, "trump H")  # 8 hearts + AS
    assert legal(g) == {"discard AS"}
    act(g, "discard AS")
    assert legal(g) == {f"discard {r}H" for r in "AKQJT987"}  # every card left is a trump
    act(g, "discard JH", "discard 7H")
    assert g.phase == PLAY and g.hands[0] == mask_of("AH KH QH TH 9H 8H".split())


def test_R11_choosing_the_lone_suit_as_trump_forces_other_discards(make_game, act, legal) -> None:
    g = make_game(TDEAL, TSTOCK, dealer=3, kitty_size=3)
    act(g, "bid 3", "pass", "pass", "pass", "trump S")
    assert legal(g) == {f"discard {r}H" for r in "AKQJT987"}
    act(g, "discard 7H", "discard 8H", "discard 9H")
    assert legal(g) == {"play AS"}


def _seat0_wins_every_trick_with_hearts(g, act, leads: list[str]) -> None:
    for c in leads:
        act(g, f"play {c}")
        for _ in range(3):
            g.apply(g.legal_actions()[0])  # others are void in hearts: any card
        assert g.tricks[-1][3] == 0


@pytest.mark.parametrize(("high_low", "low"), [("ace_seven", None), ("in_play", 0)])
def test_R11_R14_R15_R16_discards_count_for_game_only(make_game, act, high_low: str, low: int | None) -> None:
    g = make_game(TDEAL, TSTOCK, dealer=3, kitty_size=3, high_low=high_low)
    act(g, "bid 2", "pass", "pass", "pass", "trump H", "discard AS", "discard JH", "discard 7H")
    _seat0_wins_every_trick_with_hearts(g, act, ["AH", "KH", "QH", "TH", "9H", "8H"])
    r = g.hand_result
    # Jack and 7 of trump were discarded: not played, so nobody wins jack (R15) or ace_seven low (R14).
    assert r["points"] == {"high": 0, "low": low, "jack": None, "game": 0}
    # R16: team 0 won all 24 played cards; the discards AS JH 7H add 5; the stock rest has no points.
    assert r["card_points"] == [80, 0]
    assert r["made_contract"] is True
    assert r["score_change"] == ([2, 0] if low is None else [3, 0])


def test_R11_R16_discarded_ten_decides_the_game_point(make_game, act) -> None:
    # The tied deal of test_rules_scoring (30-30 in tricks) with kitty 1 = TS, discarded by the bidder.
    deal = ["AH 8H TC KC AD 9D", "KH TH 7C QC 7D KD", "7H 9H 8C JC TD 8D", "QH JH AC 9C JD QD"]
    g = make_game(deal, "TS AS KS QS JS 9S 8S 7S", dealer=3, kitty_size=1)
    act(g, "bid 2", "pass", "pass", "pass", "trump H", "discard TS")
    act(g, "play AH KH 7H QH", "play 8H TH 9H JH", "play AC TC 7C 8C", "play 9C KC QC JC")
    act(g, "play AD 7D TD JD", "play 9D KD 8D QD")
    r = g.hand_result
    assert r["card_points"] == [40, 30]
    assert r["points"] == {"high": 0, "low": 0, "jack": 1, "game": 0}
    assert r["score_change"] == [3, 1]


def test_R12_trump_led_must_follow_trump(make_game, act, legal) -> None:
    g = make_game(FDEAL, FSTOCK, dealer=3, kitty_size=0)
    act(g, "bid 2", "pass", "pass", "pass", "play AH")
    assert legal(g) == {"play KH", "play 7H"}
    act(g, "play KH")
    assert legal(g) == {"play QH"}
    act(g, "play QH")
    assert legal(g) == {"play JH"}
    act(g, "play JH")
    cards = tuple(parse_card(c) for c in "AH KH QH JH".split())
    assert g.tricks[-1] == (0, (0, 1, 2, 3), cards, 0)


def test_R12_must_follow_suit_or_trump(make_game, act, legal) -> None:
    g = make_game(FDEAL, FSTOCK, dealer=3, kitty_size=0)
    act(g, "bid 2", "pass", "pass", "pass", "play AH KH QH JH")
    assert g.current_player == 0  # R12: the winner leads
    act(g, "play AC")
    assert legal(g) == {"play QC", "play JC", "play 7H"}  # suit led or trump, not diamonds
    with pytest.raises(IllegalActionError, match=r"play AD"):
        act(g, "play AD")
    act(g, "play 7H")  # trumping while holding the suit led is allowed
    assert legal(g) == {"play 8C", "play 9C"}
    act(g, "play 8C", "play 7C")
    # R12: the only trump wins, although it is the 7.
    assert g.tricks[-1][3] == 1 and g.current_player == 1 and g.won[1] == mask_of("AC 7H 8C 7C".split())


def test_R12_void_player_may_play_any_card_and_highest_of_suit_led_wins(make_game, act, legal) -> None:
    g = make_game(FDEAL, FSTOCK, dealer=3, kitty_size=0)
    act(g, "bid 2", "pass", "pass", "pass", "play AH KH QH JH", "play AC 7H 8C 7C")
    act(g, "play AD")
    assert legal(g) == {"play QD", "play JD", "play TD"}
    act(g, "play TD")
    assert legal(g) == {"play 9D", "play 8D", "play 7D"}
    act(g, "play 7D")
    assert legal(g) == {"play KC", "play 7S", "play 8S", "play 9S"}  # void in diamonds and trump
    act(g, "play KC")
    # No trump in the trick: the highest diamond wins; the higher-ranked off-suit KC does not.
    assert g.tricks[-1][3] == 1
    assert g.voids[0] == 1 << 1  # seat 0 showed void in diamonds


def test_R12_hand_has_six_tricks_then_is_over(make_game, act) -> None:
    g = make_game(FDEAL, FSTOCK, dealer=3, kitty_size=0)
    act(g, "bid 2", "pass", "pass", "pass", "play AH KH QH JH", "play AC 7H 8C 7C", "play AD TD 7D KC")
    act(g, "play KD QD 9D 7S", "play QC 9C TC 8S")
    assert [t[3] for t in g.tricks] == [0, 1, 1, 1, 1]  # QC beats TC
    assert len(g.tricks) == 5 and g.phase == PLAY and g.current_player == 1
    assert g.hands == [mask_of(["9S"]), mask_of(["JC"]), mask_of(["JD"]), mask_of(["8D"])]
    act(g, "play JC JD 8D 9S")
    assert len(g.tricks) == 6 and g.phase == HAND_OVER
    assert g.tricks[-1][3] == 1
    assert all(h == 0 for h in g.hands)
    assert sum(SUIT_MASKS) & (g.won[0] | g.won[1]) == g.won[0] | g.won[1]
    assert (g.won[0] | g.won[1]).bit_count() == 24
