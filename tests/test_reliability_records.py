"""Issue 20 item 15 and beyond: records with float integers, contradictory truncation, bad seeds, and
hostile record files (over-long lines, repeated keys, NaN, huge integers, bytes that are not UTF-8)."""

from __future__ import annotations

import copy
import json
import tracemalloc

import numpy as np
import pytest

from smear_env.agents.heuristic import HeuristicAgent
from smear_env.core.config import SmearRules
from smear_env.engine import record as R
from smear_env.engine.game import HAND_OVER, Game
from smear_env.engine.observation import observe
from smear_env.engine.record import (
    MAX_RECORD_LINE_BYTES,
    RecordFileError,
    RecordMismatchError,
    RecordValidationError,
    load_records,
    replay,
    save_records,
    validate_record,
)


def _finished(seed: int = 0) -> dict:
    """A whole game (target 5) between heuristic players: a finished record."""
    rules = SmearRules(target_score=5)
    game = Game(rules, seed=seed)
    agents = [HeuristicAgent(rules) for _ in range(4)]
    for s, a in enumerate(agents):
        a.start_game(s, rules, np.random.default_rng(s))
    for _ in range(2000):
        if game.is_over:
            break
        if game.phase == HAND_OVER:
            game.start_next_hand()
            continue
        game.apply(agents[game.to_act].act(observe(game, game.to_act)))
    assert game.is_over
    return game.to_record()


def _first_bid(rec: dict) -> dict:
    for h in rec["hands"]:
        for b in h["bids"]:
            if b["bid"] != "pass":
                return b
    raise AssertionError("no bid")


# ------------------------------------------------------------------------------------------- item 15
def test_float_bid_fails_validation():
    rec = _finished()
    validate_record(rec)
    bad = copy.deepcopy(rec)
    b = _first_bid(bad)
    b["bid"] = float(b["bid"])  # 3.0: JSON Schema's number model calls it an integer
    with pytest.raises(RecordValidationError, match=r"bids/\d+/bid"):
        validate_record(bad)


@pytest.mark.parametrize(("where", "value"), [
    ("seat", 1.0), ("seat", True), ("dealer", 0.0), ("scores", [1.0, 2]), ("kitty_size", 2.0),
    ("winner", 1.0), ("contract", 2.0),
])
def test_integers_must_be_ints_not_floats_or_bools(where, value):
    rec = _finished()
    bad = copy.deepcopy(rec)
    h = bad["hands"][0]
    if where == "seat":
        h["bids"][0]["seat"] = value
    elif where == "dealer":
        h["dealer"] = value
    elif where == "scores":
        bad["final_scores"] = value
    elif where == "kitty_size":
        bad["rules"]["kitty_size"] = value
    elif where == "winner":
        bad["winner"] = value
    else:
        next(x for x in bad["hands"] if "contract" in x)["contract"] = value
    with pytest.raises(RecordValidationError):
        validate_record(bad)


def test_truncated_true_on_a_finished_game_is_rejected():
    rec = _finished()
    assert rec["winner"] in (0, 1) and rec["truncated"] is False
    bad = dict(rec, truncated=True)
    with pytest.raises(RecordValidationError, match="truncated"):
        validate_record(bad)
    with pytest.raises(RecordMismatchError, match="truncated"):
        replay(bad)
    replay(rec)


def test_unfinished_truncated_record_still_valid():
    game = Game(seed=1)
    for _ in range(5):
        game.apply(game.legal_actions()[-1])  # bid high, then play on
    rec = game.to_record(truncated=True)
    validate_record(rec)
    replay(rec)


@pytest.mark.parametrize("seed", [-1, 2**64, 1.5, True])
def test_record_seed_outside_the_seed_range_is_rejected(seed):
    rec = dict(_finished(), seed=seed)
    with pytest.raises(RecordValidationError, match="seed"):
        validate_record(rec)
    with pytest.raises(RecordValidationError, match="seed"):
        replay(rec)


def test_over_long_line_is_refused_without_reading_it_whole(tmp_path):
    rec = _finished()
    p = tmp_path / "games.jsonl"
    n = 6 * MAX_RECORD_LINE_BYTES  # a valid JSON object, 24 MiB long: read whole before the fix
    with p.open("w") as f:
        f.write(json.dumps(rec) + "\n")
        f.write('{"format": "smear-record/1", "pad": "' + "x" * n + '"}\n')
    tracemalloc.start()
    try:
        with pytest.raises(RecordFileError, match=r"line 2 is longer than 4 MiB") as e:
            load_records(p)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 3 * MAX_RECORD_LINE_BYTES
    assert e.value.line == 2 and e.value.valid == [rec]
    with pytest.warns(UserWarning, match="line 2 is longer"):
        assert load_records(p, strict=False) == [rec]


def test_large_json_document_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(R, "MAX_DOCUMENT_BYTES", 10_000)
    p = tmp_path / "all.json"
    save_records(p, [_finished(s) for s in range(3)])
    assert p.stat().st_size > 10_000
    with pytest.raises(RecordFileError, match="larger than .* JSON lines"):
        load_records(p)


@pytest.mark.parametrize(("line", "reason"), [
    ('{"format": "smear-record/1", "format": "x"}', "duplicate key 'format'"),
    ('{"format": "smear-record/1", "seed": NaN}', "NaN is not JSON"),
    ('{"format": "smear-record/1", "seed": -Infinity}', "-Infinity is not JSON"),
    ('{"format": "smear-record/1", "seed": ' + "9" * 5000 + "}", "integer string conversion"),
    ("[" * 100_000, "line 2 is not JSON"),
])
def test_hostile_lines_are_named_errors(tmp_path, line, reason):
    rec = _finished()
    p = tmp_path / "games.jsonl"
    p.write_text(json.dumps(rec) + "\n" + line + "\n")
    with pytest.raises(RecordFileError, match=reason) as e:
        load_records(p)
    assert e.value.line == 2 and e.value.valid == [rec]


def test_bytes_that_are_not_utf8_are_a_named_error(tmp_path):
    p = tmp_path / "games.jsonl"
    p.write_bytes(json.dumps(_finished()).encode() + b'\n{"players": ["\xff\xfe"]}\n')
    with pytest.raises(RecordFileError, match="line 2 is not JSON: not UTF-8"):
        load_records(p)


def test_unicode_names_and_leading_white_space_round_trip(tmp_path):
    rec = dict(_finished(), players=["\u202eevil", "\U0001f0a1", "na\u00efve", "\ud800"[:0] + "x"])
    p = tmp_path / "u.json"
    p.write_text(" \n" * 40_000 + json.dumps([rec], ensure_ascii=False), encoding="utf-8")  # > 64 KiB blank
    assert load_records(p, validate=True) == [rec]
    pretty = tmp_path / "pretty.json"
    pretty.write_text(json.dumps(rec, indent=2))
    assert load_records(pretty) == [rec]


def test_large_but_valid_record_line_loads(tmp_path):
    """The longest record the default max_cycles allows (~0.8 MB) is below the line bound."""
    rec = _finished()
    rec["players"] = ["p" * 200_000] * 4  # 0.8 MB of names
    p = tmp_path / "big.jsonl"
    save_records(p, [rec])
    assert load_records(p, validate=True) == [rec]
