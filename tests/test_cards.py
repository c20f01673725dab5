"""Cards (R2, R3) and the game-point values (R16, smear_env.core.rules)."""

from __future__ import annotations

import pytest

from smear_env.core import cards as C
from smear_env.core.rules import game_points


def test_R2_deck_has_32_cards_in_4_suits_of_8_ranks() -> None:
    assert (C.NUM_CARDS, C.NUM_SUITS, C.NUM_RANKS) == (32, 4, 8)
    assert C.FULL_DECK == (1 << 32) - 1
    assert C.cards_of(C.FULL_DECK) == list(range(32))
    assert C.HAND_SIZE == 6 and C.STOCK_SIZE == 8 and C.NUM_TRICKS == 6
    for s in range(4):
        assert C.cards_of(C.SUIT_MASKS[s]) == [C.card(s, r) for r in range(8)]
    assert sum(C.SUIT_MASKS) == C.FULL_DECK


def test_R2_rank_order_within_suit_is_7_to_ace() -> None:
    spades = [C.card_name(C.card(C.SPADES, r)) for r in range(8)]
    assert spades == ["7S", "8S", "9S", "TS", "JS", "QS", "KS", "AS"]
    assert C.suit_of(C.parse_card("QH")) == C.HEARTS and C.rank_of(C.parse_card("QH")) == C.RANK_QUEEN


def test_R3_card_names_round_trip_for_every_card() -> None:
    names = [C.card_name(c) for c in range(32)]
    assert len(set(names)) == 32
    assert names[:8] == ["7C", "8C", "9C", "TC", "JC", "QC", "KC", "AC"]
    assert names[-1] == "AS"
    for c, n in enumerate(names):
        assert C.parse_card(n) == c
        assert C.to_card(n) == c == C.to_card(c)


@pytest.mark.parametrize("bad", ["10S", "ts", "TX", "", "T", "AS ", 5, None, "1S", "JK"])
def test_R3_parse_card_rejects_bad_names(bad: object) -> None:
    with pytest.raises(ValueError, match="is not a card name"):
        C.parse_card(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [-1, 32, 100])
def test_R2_card_ids_out_of_range_are_rejected(bad: int) -> None:
    with pytest.raises(ValueError, match=r"not in 0\.\.31"):
        C.card_name(bad)
    with pytest.raises(ValueError, match=r"not in 0\.\.31"):
        C.to_card(bad)


def test_masks_and_names_helpers() -> None:
    m = C.mask_of(["AS", "7C", 8])
    assert C.cards_of(m) == [0, 8, 31]
    assert C.names(m) == ["7C", "7D", "AS"]
    assert C.names([31, 0]) == ["AS", "7C"]
    assert C.popcount(m) == 3
    assert C.mask_of([]) == 0 and C.cards_of(0) == []


def test_R16_game_point_values_of_each_rank() -> None:
    expected = {"A": 4, "K": 3, "Q": 2, "J": 1, "T": 10, "9": 0, "8": 0, "7": 0}
    for s in "CDHS":
        for r, v in expected.items():
            assert game_points(C.mask_of([r + s])) == v
    assert game_points(C.FULL_DECK) == 80
    assert game_points(C.mask_of(["AS", "TS", "JH", "KD", "QC", "9C"])) == 4 + 10 + 1 + 3 + 2
    assert game_points(0) == 0
