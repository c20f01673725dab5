"""Scenario tests for scoring and the end of the game: R13-R21 (every option value).

Each scenario is one k = 0 hand, dealer 3, seat 0 the bidder and first leader; the plays are listed
trick by trick in play order from the leader.
"""

from __future__ import annotations

import pytest

from smear_env.engine.game import GAME_OVER, HAND_OVER

# All four points to the bidder's team; JH played by seat 1 is captured by seat 0 (R15).
A_DEAL = ["AH KH 7H 9C 8D 7S", "QH JH 8C 9D TS AS", "TH 9H AC KC QD 8S", "8H TC 7C AD KD KS"]
A_STOCK = "QC JC JD TD 7D QS JS 9S"
A_TRICKS = ["AH JH 9H 8H", "KH QH TH KS", "7H 8C 8S 7C", "9C AS AC TC", "KC AD 8D TS", "QD KD 7S 9D"]

# Card points tie 30-30; high and low to team 0, jack to team 1 (R16 tie rule).
TIE_DEAL = ["AH 8H TC KC AD 9D", "KH TH 7C QC 7D KD", "7H 9H 8C JC TD 8D", "QH JH AC 9C JD QD"]
TIE_STOCK = "AS KS QS JS TS 9S 8S 7S"
TIE_TRICKS = ["AH KH 7H QH", "8H TH 9H JH", "AC TC 7C 8C", "9C KC QC JC", "AD 7D TD JD", "9D KD 8D QD"]

# The defenders (team 1) win all four points.
SET_DEAL = ["9H QH KC 9C KD 9D", "AH JH QC 8C QD 8D", "8H TH JC 7C JD 7D", "7H KH AC TC AD TD"]
SET_STOCK = TIE_STOCK
SET_TRICKS = ["9H AH 8H 7H", "JH TH KH QH", "AC KC QC JC", "TC 9C 8C 7C", "AD KD QD JD", "TD 9D 8D 7D"]

# AH and 7H stay in the stock: ace_seven gives high/low to nobody; in_play to KH (team 1) / 8H (team 0).
IN_DEAL = ["9H 8S JC 7C QD 8D", "KH JH AC TC 7D JD", "8H TH KC 9C AD TD", "QH 7S QC 8C KD 9D"]
IN_STOCK = "AH 7H AS KS QS JS TS 9S"
IN_TRICKS = ["9H KH 8H QH", "JH TH 7S 8S", "AC KC QC JC", "TC 9C 8C 7C", "7D AD KD QD", "TD 9D 8D JD"]

# Only one trump (9S) is played in the hand (R14: it is both high and low under in_play).
ONE_DEAL = ["9S AH KH QH JH TH", "9H 8H 7H AC KC QC", "JC TC 9C 8C 7C AD", "KD QD JD TD 9D 8D"]
ONE_STOCK = "AS KS QS JS TS 8S 7S 7D"
ONE_TRICKS = ["9S QC 7C 8D", "AH 9H 8C 9D", "KH 8H 9C TD", "QH 7H TC JD", "JH AC JC QD", "TH KC AD KD"]


def play_hand(make_game, act, deal, stock, tricks, bid="bid 2", scores=(0, 0), **opts):
    g = make_game(deal, stock, dealer=3, scores=scores, kitty_size=0, **opts)
    act(g, bid)
    if bid != "bid 4":
        act(g, "pass", "pass", "pass")
    for t in tricks:
        act(g, "play " + t)
    assert g.phase in (HAND_OVER, GAME_OVER)
    assert {k: g.history[-1][k] for k in g.hand_result} == g.hand_result
    return g


def test_R12_trick_winners_of_the_scenarios(make_game, act) -> None:
    winners = {
        "A": (A_DEAL, A_STOCK, A_TRICKS, [0, 0, 0, 2, 2, 3]),
        "TIE": (TIE_DEAL, TIE_STOCK, TIE_TRICKS, [0, 3, 3, 0, 0, 1]),
        "SET": (SET_DEAL, SET_STOCK, SET_TRICKS, [1, 3, 3, 3, 3, 3]),
        "IN": (IN_DEAL, IN_STOCK, IN_TRICKS, [1, 1, 1, 1, 2, 1]),
        "ONE": (ONE_DEAL, ONE_STOCK, ONE_TRICKS, [0] * 6),
    }
    for deal, stock, tricks, expected in winners.values():
        g = play_hand(make_game, act, deal, stock, tricks)
        assert [t[3] for t in g.tricks] == expected
        assert [t[0] for t in g.tricks] == [0, *expected[:-1]]  # R12: the winner leads the next trick


@pytest.mark.parametrize("high_low", ["ace_seven", "in_play"])
def test_R13_R14_R15_R16_R17_all_four_points_to_bidder(make_game, act, high_low: str) -> None:
    g = play_hand(make_game, act, A_DEAL, A_STOCK, A_TRICKS, high_low=high_low)
    assert g.hand_result == {
        "points": {"high": 0, "low": 0, "jack": 0, "game": 0},
        "card_points": [58, 5],
        "made_contract": True,
        "score_change": [4, 0],  # R17: all points won, more than the contract
        "scores": [4, 0],
    }
    assert g.phase == HAND_OVER and g.winner is None


@pytest.mark.parametrize("high_low", ["ace_seven", "in_play"])
def test_R13_R14_high_and_low_to_the_defenders(make_game, act, high_low: str) -> None:
    g = play_hand(make_game, act, SET_DEAL, SET_STOCK, SET_TRICKS, bid="bid 3", high_low=high_low)
    assert g.hand_result["points"] == {"high": 1, "low": 1, "jack": 1, "game": 1}
    assert g.hand_result["card_points"] == [0, 60]


def test_R13_R14_ace_seven_unplayed_ace_and_seven_count_for_nobody(make_game, act) -> None:
    g = play_hand(make_game, act, IN_DEAL, IN_STOCK, IN_TRICKS, high_low="ace_seven")
    r = g.hand_result
    assert r["points"] == {"high": None, "low": None, "jack": 1, "game": 1}
    assert r["card_points"] == [9, 47]
    assert (r["made_contract"], r["score_change"], r["scores"]) == (False, [-2, 2], [-2, 2])


def test_R13_R14_in_play_highest_and_lowest_trump_played(make_game, act) -> None:
    g = play_hand(make_game, act, IN_DEAL, IN_STOCK, IN_TRICKS, high_low="in_play")
    r = g.hand_result
    assert r["points"] == {"high": 1, "low": 0, "jack": 1, "game": 1}  # KH by seat 1, 8H by seat 2
    assert (r["made_contract"], r["score_change"], r["scores"]) == (False, [-2, 3], [-2, 3])


def test_R14_in_play_single_trump_is_both_high_and_low(make_game, act) -> None:
    g = play_hand(make_game, act, ONE_DEAL, ONE_STOCK, ONE_TRICKS, high_low="in_play")
    r = g.hand_result
    assert r["points"] == {"high": 0, "low": 0, "jack": None, "game": 0}  # JS in the stock: nobody (R15)
    assert r["card_points"] == [60, 0]
    assert (r["made_contract"], r["score_change"]) == (True, [3, 0])


def test_R13_R14_ace_seven_single_trump_wins_neither(make_game, act) -> None:
    g = play_hand(make_game, act, ONE_DEAL, ONE_STOCK, ONE_TRICKS, high_low="ace_seven")
    r = g.hand_result
    assert r["points"] == {"high": None, "low": None, "jack": None, "game": 0}
    assert (r["made_contract"], r["score_change"], r["scores"]) == (False, [-2, 0], [-2, 0])


def test_R15_jack_goes_to_the_team_winning_its_trick(make_game, act) -> None:
    g = play_hand(make_game, act, A_DEAL, A_STOCK, A_TRICKS)
    assert g.tricks[0][3] == 0 and g.hand_result["points"]["jack"] == 0  # played by seat 1, won by seat 0
    g = play_hand(make_game, act, TIE_DEAL, TIE_STOCK, TIE_TRICKS)
    assert g.hand_result["points"]["jack"] == 1  # played and won by seat 3


@pytest.mark.parametrize(("tie", "game", "change"), [("nobody", None, [2, 1]), ("bidder", 0, [3, 1])])
def test_R16_game_point_tie(make_game, act, tie: str, game: int | None, change: list[int]) -> None:
    g = play_hand(make_game, act, TIE_DEAL, TIE_STOCK, TIE_TRICKS, game_point_tie=tie)
    r = g.hand_result
    assert r["card_points"] == [30, 30]
    assert r["points"] == {"high": 0, "low": 0, "jack": 1, "game": game}
    assert (r["made_contract"], r["score_change"], r["scores"]) == (True, change, change)


@pytest.mark.parametrize("tie", ["nobody", "bidder"])
def test_R16_tie_rule_does_not_matter_without_a_tie(make_game, act, tie: str) -> None:
    g = play_hand(make_game, act, A_DEAL, A_STOCK, A_TRICKS, game_point_tie=tie)
    assert g.hand_result["points"]["game"] == 0


def test_R17_contract_made_exactly_adds_points(make_game, act) -> None:
    g = play_hand(make_game, act, TIE_DEAL, TIE_STOCK, TIE_TRICKS, scores=(5, 6))
    assert g.hand_result["made_contract"] is True
    assert g.scores == [7, 7]


def test_R7_R17_bid_4_set_subtracts_contract_scores_go_negative(make_game, act) -> None:
    g = play_hand(make_game, act, TIE_DEAL, TIE_STOCK, TIE_TRICKS, bid="bid 4", scores=(1, -3))
    assert g.bids == [(0, 4)]
    r = g.hand_result
    assert (r["made_contract"], r["score_change"], r["scores"]) == (False, [-4, 1], [-3, -2])


def test_R17_set_bidder_defenders_add_their_points(make_game, act) -> None:
    g = play_hand(make_game, act, SET_DEAL, SET_STOCK, SET_TRICKS, bid="bid 3")
    r = g.hand_result
    assert (r["made_contract"], r["score_change"], r["scores"]) == (False, [-3, 4], [-3, 4])


def test_R18_bidder_reaching_target_wins(make_game, act) -> None:
    g = play_hand(make_game, act, A_DEAL, A_STOCK, A_TRICKS, scores=(11, 14), target_score=15)
    assert (g.phase, g.winner, g.scores) == (GAME_OVER, 0, [15, 14])
    rec = g.to_record()
    assert (rec["winner"], rec["final_scores"], rec["truncated"]) == (0, [15, 14], False)


def test_R18_below_target_the_game_goes_on(make_game, act) -> None:
    g = play_hand(make_game, act, A_DEAL, A_STOCK, A_TRICKS, scores=(10, 14), target_score=15)
    assert (g.phase, g.winner, g.scores) == (HAND_OVER, None, [14, 14])


def test_R18_both_reach_target_bidder_wins(make_game, act) -> None:
    g = play_hand(make_game, act, TIE_DEAL, TIE_STOCK, TIE_TRICKS, scores=(13, 14), target_score=15)
    assert g.scores == [15, 15]
    assert (g.phase, g.winner) == (GAME_OVER, 0)


def test_R18_defenders_reaching_target_win(make_game, act) -> None:
    g = play_hand(make_game, act, SET_DEAL, SET_STOCK, SET_TRICKS, scores=(14, 11), target_score=15)
    assert (g.phase, g.winner, g.scores) == (GAME_OVER, 1, [12, 15])


def test_R18_set_bidder_still_above_target_wins(make_game, act) -> None:
    g = play_hand(make_game, act, SET_DEAL, SET_STOCK, SET_TRICKS, scores=(20, 0), target_score=15)
    assert (g.winner, g.scores) == (0, [18, 4])


@pytest.mark.parametrize("target", [1, 4])
def test_R18_low_targets(make_game, act, target: int) -> None:
    g = play_hand(make_game, act, A_DEAL, A_STOCK, A_TRICKS, target_score=target)
    assert (g.phase, g.winner) == (GAME_OVER, 0)
    g = play_hand(make_game, act, A_DEAL, A_STOCK, A_TRICKS, target_score=5)
    assert (g.phase, g.winner) == (HAND_OVER, None)


def test_R19_defenders_at_target_do_not_win(make_game, act) -> None:
    g = play_hand(make_game, act, SET_DEAL, SET_STOCK, SET_TRICKS, scores=(0, 11), win_requires_bid=True)
    assert (g.phase, g.winner, g.scores) == (HAND_OVER, None, [-2, 15])
    g.start_next_hand()  # plays on


def test_R19_bidder_making_contract_wins(make_game, act) -> None:
    g = play_hand(make_game, act, A_DEAL, A_STOCK, A_TRICKS, scores=(11, 20), win_requires_bid=True)
    assert (g.phase, g.winner, g.scores) == (GAME_OVER, 0, [15, 20])


def test_R19_both_reach_target_bidder_who_made_it_wins(make_game, act) -> None:
    g = play_hand(
        make_game, act, TIE_DEAL, TIE_STOCK, TIE_TRICKS, scores=(13, 14), win_requires_bid=True
    )
    assert (g.winner, g.scores) == (0, [15, 15])


def test_R19_set_bidder_above_target_does_not_win(make_game, act) -> None:
    g = play_hand(make_game, act, SET_DEAL, SET_STOCK, SET_TRICKS, scores=(20, 0), win_requires_bid=True)
    assert (g.phase, g.winner, g.scores) == (HAND_OVER, None, [18, 4])


@pytest.mark.parametrize(
    ("cap", "wrb", "scores", "after", "winner"),
    [
        (False, False, (0, 13), [-2, 17], 1),
        (True, False, (0, 13), [-2, 15], 1),  # R20: +4 counted as +2
        (True, True, (0, 13), [-2, 15], None),
        (False, True, (0, 13), [-2, 17], None),
        (True, True, (0, 16), [-2, 16], None),  # already above: no rise
        (True, False, (0, 5), [-2, 9], None),  # far below: not capped
    ],
)
def test_R20_cap_defenders(make_game, act, cap, wrb, scores, after, winner) -> None:
    g = play_hand(
        make_game, act, SET_DEAL, SET_STOCK, SET_TRICKS, scores=scores, cap_defenders=cap,
        win_requires_bid=wrb,
    )
    assert g.scores == after
    assert g.hand_result["score_change"] == [after[0] - scores[0], after[1] - scores[1]]
    assert g.winner == winner


def test_R20_cap_never_applies_to_the_bidding_team(make_game, act) -> None:
    g = play_hand(make_game, act, A_DEAL, A_STOCK, A_TRICKS, scores=(13, 0), cap_defenders=True)
    assert (g.scores, g.winner, g.hand_result["score_change"]) == ([17, 0], 0, [4, 0])


def test_R21_record_marks_truncation(make_game, act) -> None:
    g = make_game(TIE_DEAL, TIE_STOCK, kitty_size=0)
    act(g, "bid 2", "pass", "pass", "pass", "play AH KH")
    rec = g.to_record(players=["a", "b", "c", "d"], truncated=True)
    assert (rec["truncated"], rec["winner"], rec["final_scores"]) == (True, None, [0, 0])
    assert rec["players"] == ["a", "b", "c", "d"]
    hand = rec["hands"][-1]
    assert hand["incomplete"] is True
    assert hand["current_trick"] == [{"seat": 0, "card": "AH"}, {"seat": 1, "card": "KH"}]
    assert "points" not in hand and "scores" not in hand
    done = play_hand(make_game, act, A_DEAL, A_STOCK, A_TRICKS, target_score=1).to_record()
    assert done["truncated"] is False and done["winner"] == 0
