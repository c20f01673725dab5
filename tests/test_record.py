"""Game records (smear-record/1): schema validation, files, replay and mismatch detection."""

from __future__ import annotations

import copy
import json
import sys

import numpy as np
import pytest

from smear_env.core.config import SmearRules
from smear_env.engine import record as R
from smear_env.engine.game import GAME_OVER, HAND_OVER, Game

DEAL = ["AH 8H TC KC AD 9D", "KH TH 7C QC 7D KD", "7H 9H 8C JC TD 8D", "QH JH AC 9C JD QD"]
STOCK = "AS KS QS JS TS 9S 8S 7S"
TRICKS = ["AH KH 7H QH", "8H TH 9H JH", "AC TC 7C 8C", "9C KC QC JC", "AD 7D TD JD", "9D KD 8D QD"]


def random_game(rules: SmearRules, seed: int, max_hands: int = 12, max_steps: int = 10**6) -> Game:
    g = Game(rules, seed=seed)
    rng = np.random.default_rng(seed + 1)
    steps = 0
    while g.phase != GAME_OVER and steps < max_steps:
        if g.phase == HAND_OVER:
            if len(g.history) >= max_hands:
                break
            g.start_next_hand()
            continue
        legal = g.legal_actions()
        g.apply(legal[int(rng.integers(len(legal)))])
        steps += 1
    return g


def scenario_records(make_game, act) -> dict[str, dict]:
    """Records of one game in every kind of state."""
    out = {}
    g = make_game(DEAL, STOCK, dealer=3, kitty_size=3)
    out["start"] = g.to_record()
    act(g, "pass", "pass")
    out["bidding"] = g.to_record(truncated=True)
    act(g, "pass", "pass")
    out["thrown_in"] = g.to_record()
    g.start_next_hand(deal=([h.split() for h in DEAL], STOCK.split()))
    act(g, "bid 2", "pass", "pass", "pass")
    out["trump"] = g.to_record()
    act(g, "trump H", "discard AS")
    out["discard"] = g.to_record()
    act(g, "discard KS", "discard QS")
    out["first_lead"] = g.to_record()
    act(g, "play AH KH 7H")
    out["mid_trick"] = g.to_record(players=["p0", "p1", "p2", "p3"], truncated=True)
    act(g, "play QH", *("play " + t for t in TRICKS[1:]))
    out["hand_over"] = g.to_record()
    g.start_next_hand()
    out["next_hand"] = g.to_record()
    g0 = make_game(DEAL, STOCK, dealer=3, kitty_size=0, target_score=2)
    act(g0, "bid 2", "pass", "pass", "pass", *("play " + t for t in TRICKS))
    out["game_over"] = g0.to_record()
    return out


def test_engine_records_validate_and_replay_to_the_same_record(make_game, act) -> None:
    recs = scenario_records(make_game, act)
    assert recs["thrown_in"]["hands"][0] == {
        "dealer": 3, "deal": [h.split() for h in DEAL], "stock": STOCK.split(),
        "bids": [{"seat": s, "bid": "pass"} for s in (0, 1, 2, 3)], "thrown_in": True,
    }
    assert recs["game_over"]["winner"] == 0 and recs["game_over"]["truncated"] is False
    assert recs["game_over"]["hands"][0]["scores"] == [2, 1]
    for name, rec in recs.items():
        R.validate_record(rec)
        g = R.replay(rec)
        assert g.to_record(players=rec.get("players"), truncated=rec["truncated"]) == rec, name


def test_records_are_independent_of_the_game(make_game, act) -> None:
    g = make_game(DEAL, STOCK, dealer=3, kitty_size=0)
    act(g, "bid 2", "pass", "pass", "pass", *("play " + t for t in TRICKS))
    rec = g.to_record()
    rec["hands"][0]["points"]["high"] = 1
    rec["hands"][0]["scores"][0] = 99
    assert g.to_record()["hands"][0]["points"]["high"] == 0
    assert g.hand_result["scores"] == [2, 1]


def test_random_game_records_replay() -> None:
    for seed in range(20):
        rules = SmearRules(kitty_size=seed % 4, target_score=3)
        rec = random_game(rules, seed).to_record()
        R.validate_record(rec)
        assert R.replay(rec).to_record(truncated=rec["truncated"]) == rec


def test_replay_of_truncated_record_stops_where_it_stops() -> None:
    g = random_game(SmearRules(), seed=5, max_steps=57)
    rec = g.to_record(truncated=True)
    assert rec["hands"][-1].get("incomplete") is True
    r = R.replay(rec)
    assert (r.phase, r.current_player, r.hands, r.scores) == (g.phase, g.current_player, g.hands, g.scores)
    assert r.legal_actions() == g.legal_actions()


def test_replay_states_yields_a_copy_after_every_action(make_game, act) -> None:
    rec = scenario_records(make_game, act)["hand_over"]
    states = list(R.replay_states(rec))
    # 4 passes (thrown in) + 4 bids + trump + 3 discards + 24 plays, plus the final state.
    assert len(states) == 4 + 4 + 1 + 3 + 24 + 1
    assert [s.phase for s in states[-2:]] == [HAND_OVER, HAND_OVER]
    assert states[7].bidder == 0 and states[8].trump == 2 and len(states[11].discards) == 3
    assert states[12].trick == [R.parse_card("AH")]
    assert len({id(s) for s in states}) == len(states)
    assert states[-1].to_record() == rec


def test_save_and_load_json_lines_and_json(tmp_path, make_game, act) -> None:
    recs = list(scenario_records(make_game, act).values())
    p = tmp_path / "games.jsonl"
    R.save_records(p, recs)
    assert len(p.read_text().splitlines()) == len(recs)
    assert R.load_records(p, validate=True) == recs
    one = tmp_path / "one.json"
    R.save_records(one, recs[-1])
    assert json.loads(one.read_text()) == recs[-1]
    assert R.load_records(one) == [recs[-1]]
    arr = tmp_path / "all.json"
    R.save_records(arr, recs)
    assert R.load_records(arr) == recs
    single_line = tmp_path / "single.jsonl"
    R.save_records(single_line, recs[:1])
    assert R.load_records(single_line) == recs[:1]
    empty = tmp_path / "empty.jsonl"
    R.save_records(empty, [])
    assert R.load_records(empty) == []


def test_load_reports_bad_lines(tmp_path) -> None:
    p = tmp_path / "bad.jsonl"
    p.write_text('{"format": "smear-record/1"}\n{oops\n')
    with pytest.raises(ValueError, match="line 2 is not JSON"):
        R.load_records(p)
    p.write_text("[1, 2]")
    with pytest.raises(ValueError, match="record 0 is a int, not a JSON object"):
        R.load_records(p)
    with pytest.raises(TypeError, match="record 0 is a list"):
        R.save_records(tmp_path / "x.jsonl", [[1]])  # type: ignore[list-item]


@pytest.mark.parametrize(
    ("path", "value", "where"),
    [
        (["format"], "smear-record/2", "format"),
        (["hands", 0, "deal", 0, 0], "XX", "hands/0/deal/0/0"),
        (["hands", 0, "bids", 0, "bid"], 5, "hands/0/bids/0/bid"),
        (["hands", 0, "stock"], ["AS"], "hands/0/stock"),
        (["rules", "kitty_size"], 4, "rules/kitty_size"),
        (["winner"], 2, "winner"),
        (["final_scores"], [1], "final_scores"),
    ],
)
def test_validate_rejects_bad_records(make_game, act, path, value, where) -> None:
    rec = copy.deepcopy(scenario_records(make_game, act)["game_over"])
    node = rec
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    with pytest.raises(R.RecordValidationError, match=f"at {where}:"):
        R.validate_record(rec)


def test_validate_rejects_missing_fields() -> None:
    with pytest.raises(R.RecordValidationError, match="'format' is a required property"):
        R.validate_record(
            {"rules": SmearRules().to_dict(), "hands": [], "final_scores": [0, 0], "winner": None}
        )


def tamper(rec: dict, path: list, value) -> dict:
    rec = copy.deepcopy(rec)
    node = rec
    for k in path[:-1]:
        node = node[k]
    node[path[-1]] = value
    return rec


@pytest.mark.parametrize(
    ("path", "value", "hand", "field"),
    [
        (["hands", 1, "points", "jack"], 0, 1, "points"),
        (["hands", 1, "card_points"], [30, 30], 1, "card_points"),
        (["hands", 1, "made_contract"], False, 1, "made_contract"),
        (["hands", 1, "score_change"], [2, 1], 1, "score_change"),
        (["hands", 1, "scores"], [2, 2], 1, "scores"),
        (["hands", 1, "bidder"], 2, 1, "bidder"),
        (["hands", 1, "kitty"], ["AS", "KS", "JS"], 1, "kitty"),
        (["hands", 1, "trump"], "D", 1, "tricks[0]"),  # the first lead AH is then illegal (R10)
        (["hands", 1, "tricks", 0, "winner"], 1, 1, "tricks[0]"),
        (["hands", 1, "tricks", 2, "plays", 1, "card"], "TD", 1, "tricks[2]"),  # must follow clubs (R12)
        (["hands", 1, "tricks", 0, "plays", 0, "seat"], 2, 1, "tricks[0]"),
        (["hands", 1, "dealer"], 0, 1, "dealer"),
        (["hands", 0, "thrown_in"], False, 0, "thrown_in"),
        (["hands", 0, "incomplete"], True, 0, "incomplete"),
        (["hands", 1, "bids", 0, "bid"], 4, 1, "bids"),  # R7: nobody acts after a bid of 4
        (["final_scores"], [3, 0], None, "final_scores"),
        (["winner"], 1, None, "winner"),
    ],
)
def test_replay_detects_mismatches(make_game, act, path, value, hand, field) -> None:
    g = make_game(DEAL, STOCK, dealer=3, kitty_size=3, target_score=2)
    act(g, "pass", "pass", "pass", "pass")
    g.start_next_hand(deal=([h.split() for h in DEAL], STOCK.split()))
    act(g, "bid 2", "pass", "pass", "pass", "trump H", "discard AS", "discard KS", "discard QS")
    act(g, *("play " + t for t in TRICKS))
    rec = g.to_record()
    assert rec["winner"] == 0 and rec["hands"][1]["scores"] == [3, 1]  # discards AS KS QS win the game
    assert R.replay(rec).to_record() == rec
    bad = tamper(rec, path, value)
    with pytest.raises(R.RecordMismatchError) as e:
        R.replay(bad)
    assert (e.value.hand, e.value.field) == (hand, field), str(e.value)
    where = "game" if hand is None else f"hand {hand}"
    assert str(e.value).startswith(f"{where}, field {field!r}: ")


def test_replay_detects_hands_after_game_over_and_bad_format(make_game, act) -> None:
    rec = scenario_records(make_game, act)["game_over"]
    more = copy.deepcopy(rec)
    more["hands"].append(copy.deepcopy(rec["hands"][0]))
    with pytest.raises(R.RecordMismatchError, match="hand 1, field 'hands'"):
        R.replay(more)
    with pytest.raises(R.RecordMismatchError, match="field 'format'"):
        R.replay({**rec, "format": "other"})
    with pytest.raises(R.RecordMismatchError, match="at least one hand"):
        R.replay({**rec, "hands": []})


def test_validate_without_jsonschema_names_the_dev_extra(monkeypatch) -> None:
    R._validator.cache_clear()
    monkeypatch.setitem(sys.modules, "jsonschema", None)
    try:
        with pytest.raises(ImportError, match=r"install the dev extra: pip install -e '\.\[dev\]'"):
            R.validate_record({})
    finally:
        R._validator.cache_clear()


def test_schema_is_packaged_and_inlined_validator_agrees() -> None:
    schema = R.load_schema()
    assert schema["$id"] == "smear-record/1"
    import jsonschema

    full = jsonschema.Draft202012Validator(schema)
    rec = random_game(SmearRules(kitty_size=2, target_score=4), seed=3).to_record()
    assert full.is_valid(rec)
    R.validate_record(rec)
    bad = tamper(rec, ["hands", 0, "dealer"], 7)
    assert not full.is_valid(bad)
    with pytest.raises(R.RecordValidationError):
        R.validate_record(bad)
