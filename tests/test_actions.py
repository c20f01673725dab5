"""The action-id layout (pass, bids, trump, discards, plays)."""

from __future__ import annotations

import pytest

from smear_env.core import actions as A


def test_layout_constants() -> None:
    assert (A.PASS_ACTION, A.TRUMP_ACTION_BASE, A.DISCARD_ACTION_BASE, A.PLAY_ACTION_BASE, A.NUM_ACTIONS) == (
        0, 4, 8, 40, 72,
    )
    assert [A.bid_action(b) for b in (0, 2, 3, 4)] == [0, 1, 2, 3]
    assert [A.action_bid(a) for a in (0, 1, 2, 3)] == [0, 2, 3, 4]
    assert [A.trump_action(s) for s in range(4)] == [4, 5, 6, 7]
    assert A.discard_action(0) == 8 and A.discard_action(31) == 39
    assert A.play_action(0) == 40 and A.play_action(31) == 71


def test_every_action_has_one_kind_and_a_round_tripping_name() -> None:
    names = set()
    for a in range(A.NUM_ACTIONS):
        kinds = [A.is_bid(a), A.is_trump(a), A.is_discard(a), A.is_play(a)]
        assert sum(kinds) == 1
        name = A.action_name(a)
        names.add(name)
        assert A.parse_action(name) == a
    assert len(names) == A.NUM_ACTIONS
    assert A.action_name(0) == "pass" and A.action_name(3) == "bid 4" and A.action_name(6) == "trump H"
    assert A.action_name(8 + 31) == "discard AS" and A.action_name(40 + 3) == "play TC"


def test_action_card() -> None:
    assert A.action_card(A.discard_action(17)) == 17
    assert A.action_card(A.play_action(17)) == 17
    with pytest.raises(ValueError, match="not a discard or a card play"):
        A.action_card(2)


@pytest.mark.parametrize("bad", [-1, 72, 1000])
def test_invalid_action_ids_have_a_marked_name(bad: int) -> None:
    assert A.action_name(bad) == f"<invalid action {bad}>"
    assert not (A.is_bid(bad) or A.is_trump(bad) or A.is_discard(bad) or A.is_play(bad))


@pytest.mark.parametrize("bad", [1, 5, -2])
def test_R6_bids_are_2_to_4(bad: int) -> None:
    with pytest.raises(ValueError, match=r"is not 0 \(pass\) or 2\.\.4"):
        A.bid_action(bad)


@pytest.mark.parametrize("bad", ["bid 5", "bid 0", "bid", "trump X", "play 10S", "discard", "fold", "", 3])
def test_parse_action_rejects_bad_names(bad: object) -> None:
    with pytest.raises(ValueError):
        A.parse_action(bad)  # type: ignore[arg-type]
