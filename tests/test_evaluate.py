"""Duplicate evaluation: exact pairing of deals, statistics, reproducibility, the smear-eval CLI."""

from __future__ import annotations

import json

import jsonschema
import numpy as np
import pytest

from smear_env.agents import RandomAgent, make_agent
from smear_env.core.cards import parse_card
from smear_env.core.config import SmearRules
from smear_env.engine.record import load_schema, replay
from smear_env.evaluation import DealSequence, play_game, run_match, run_tournament
from smear_env.evaluation.cli import main
from smear_env.evaluation.duplicate import PairRunner

FAST = SmearRules(target_score=5)


def _cards(rec, hand, seats):
    return {c for s in seats for c in rec["hands"][hand]["deal"][s]}


def test_deal_sequence_is_deterministic_and_a_full_deck():
    a, b = DealSequence(7, 3), DealSequence(7, 3)
    assert a.first_dealer == b.first_dealer
    for i in range(5):
        hands, stock = a.deal(i)
        assert (hands, stock) == b.deal(i)
        assert len(stock) == 8 and all(len(h) == 6 for h in hands)
        assert sorted([c for h in hands for c in h] + stock) == list(range(32))
    assert DealSequence(7, 4).deal(0) != a.deal(0) and DealSequence(8, 3).deal(0) != a.deal(0)
    with pytest.raises(ValueError, match="seed"):
        DealSequence(-1, 0)


def test_R4_R5_duplicate_pairing_is_exact():
    """Both games of a pair: same first dealer, hand i has deal i, and team A in game 2 holds exactly the
    cards team B held in game 1 (and vice versa)."""
    runner = PairRunner("heuristic", "random", FAST, seed=5, max_hands=50, records=True)
    compared = 0
    for pair in range(6):
        _, (g1, g2) = runner.run(pair)
        assert g1["players"] == ["heuristic", "random", "heuristic", "random"]
        assert g2["players"] == ["random", "heuristic", "random", "heuristic"]
        seq = DealSequence(5, pair)
        assert g1["hands"][0]["dealer"] == g2["hands"][0]["dealer"] == seq.first_dealer
        for rec in (g1, g2):
            for i, h in enumerate(rec["hands"]):  # hand i always uses deal i of the sequence
                hands, stock = seq.deal(i)
                assert [parse_card(c) for c in h["stock"]] == stock
                assert [sorted(parse_card(c) for c in d) for d in h["deal"]] == hands
        for i in range(min(len(g1["hands"]), len(g2["hands"]))):
            assert g1["hands"][i]["deal"] == g2["hands"][i]["deal"]
            assert g1["hands"][i]["stock"] == g2["hands"][i]["stock"]
            assert _cards(g2, i, (1, 3)) == _cards(g1, i, (1, 3))  # A's seats in game 2 = B's in game 1
            assert _cards(g2, i, (0, 2)) == _cards(g1, i, (0, 2))  # B's seats in game 2 = A's in game 1
            compared += 1
    assert compared >= 12


def test_heuristic_beats_random_significantly_on_a_fixed_seed():
    res = run_match("heuristic", "random", games=40, rules=FAST, seed=123).summary()
    assert res["win_rate_a_ci95"][0] > 0.5
    assert res["margin_per_hand_a_ci95"][0] > 0
    assert res["games"] == 40 and res["pairs"] == 20
    assert res["teams"]["a"]["wins"] + res["teams"]["b"]["wins"] + res["draws"] == 40


def test_same_seed_same_result_and_workers_do_not_matter():
    kw = dict(games=8, rules=FAST, seed=99)
    one = run_match("heuristic", "random", workers=1, **kw).summary()
    again = run_match("heuristic", "random", workers=1, **kw).summary()
    two = run_match("heuristic", "random", workers=2, **kw).summary()
    for s in (one, again, two):
        s.pop("seconds")
    assert one == again == two
    other = run_match("heuristic", "random", games=8, rules=FAST, seed=100).summary()
    other.pop("seconds")
    assert other != one


def test_R21_truncated_games_count_as_draws():
    rules = SmearRules(target_score=100)
    record, stats = play_game([RandomAgent() for _ in range(4)], rules, seed=1, max_hands=3)
    assert record["truncated"] is True and record["winner"] is None and stats.truncated
    assert stats.deals == 3 == len(record["hands"])
    res = run_match("random", "random", games=4, rules=rules, seed=1, max_hands=2).summary()
    assert res["draws"] == 4 and res["truncated"] == 4 and res["win_rate_a"] == 0.5


def test_play_game_record_replays():
    agents = [make_agent("heuristic", FAST), RandomAgent(), make_agent("heuristic", FAST), RandomAgent()]
    record, stats = play_game(agents, FAST, seed=3)
    assert record["players"] == ["heuristic", "random", "heuristic", "random"]
    jsonschema.validate(record, load_schema())
    game = replay(record)
    assert game.scores == record["final_scores"] == list(stats.final_scores)


def test_bad_arguments():
    with pytest.raises(ValueError, match="even"):
        run_match("random", "random", games=3)
    with pytest.raises(ValueError, match="unknown agent spec 'nobody'"):
        run_match("nobody", "random", games=2)
    with pytest.raises(ValueError, match="4 agents"):
        play_game([RandomAgent()], FAST)


def test_cli_json_and_records_validate(tmp_path, capsys):
    path = tmp_path / "games.jsonl"
    rc = main(["heuristic", "random", "--games", "6", "--seed", "4", "--json", "--records", str(path),
               "--target-score", "5", "--kitty-size", "2", "--high-low", "in_play", "--all-pass",
               "dealer_must_bid", "--game-point-tie", "bidder", "--cap-defenders"])
    assert rc == 0
    out = json.loads(capsys.readouterr().out)
    assert out["games"] == 6 and out["team_a"] == "heuristic" and out["team_b"] == "random"
    assert out["rules"] == SmearRules(kitty_size=2, target_score=5, high_low="in_play",
                                      all_pass="dealer_must_bid", game_point_tie="bidder",
                                      cap_defenders=True).to_dict()
    lo, hi = out["win_rate_a_ci95"]
    assert 0 <= lo <= out["win_rate_a"] <= hi <= 1
    lines = path.read_text().splitlines()
    assert len(lines) == 6
    schema = load_schema()
    for i, line in enumerate(lines):
        rec = json.loads(line)
        jsonschema.validate(rec, schema)
        assert rec["duplicate"] == {"pair": i // 2, "game": i % 2, "team_a_seats": [i % 2, i % 2 + 2]}
        assert replay(rec).scores == rec["final_scores"]
    # the records' outcomes agree with the summary
    wins_a = sum(1 for i, line in enumerate(lines) if json.loads(line)["winner"] == i % 2)
    assert wins_a == out["teams"]["a"]["wins"]


def test_cli_table_and_errors(capsys):
    assert main(["random", "heuristic", "--games", "2", "--target-score", "3"]) == 0
    out = capsys.readouterr().out
    assert "win rate (95% CI)" in out and "contract success" in out
    with pytest.raises(SystemExit) as e:
        main(["random", "bogus", "--games", "2"])
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert "unknown agent spec 'bogus'" in err
    with pytest.raises(SystemExit):
        main(["random", "heuristic", "--games", "3"])
    assert "even" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["random", "heuristic", "--kitty-size", "5"])
    assert "kitty_size=5" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["random", "missing/agent.safetensors"])
    assert "not found" in capsys.readouterr().err


def test_tournament_ratings(capsys):
    res = run_tournament(["random", "heuristic"], games=10, rules=FAST, seed=1, n_boot=100)
    r = {d["player"]: d for d in res.ratings}
    assert r["random"]["rating"] == 0.0 and r["heuristic"]["rating"] > 100
    assert main(["random", "heuristic", "--tournament", "--games", "4", "--target-score", "3", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["anchor"] == "random" and len(out["matches"]) == 1
    assert main(["random", "heuristic", "--tournament", "--games", "2", "--target-score", "3"]) == 0
    assert "ratings" in capsys.readouterr().out


def test_pair_scores_shape():
    m = run_match("random", "random", games=4, rules=FAST, seed=2)
    assert m.pair_scores.shape == (2,) and np.all((m.pair_scores >= 0) & (m.pair_scores <= 1))
