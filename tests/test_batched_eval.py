"""Duplicate evaluation on the batched engine (smear_env.evaluation.batched) plays the reference
evaluator's games: the same deal sequences, pairs, agent generators and truncation, so for deterministic
agents (and random ones, whose batched draws are the per-seat draws) the summary JSON and the records
equal the reference path's exactly."""

from __future__ import annotations

import json

import pytest

from smear_env.agents.base import RandomAgent
from smear_env.core.config import SmearRules
from smear_env.evaluation import batched
from smear_env.evaluation.cli import main
from smear_env.evaluation.duplicate import run_match, run_tournament


def _both(team_a, team_b, games, rules, seed, max_hands=200, **kw):
    out = {}
    for engine in ("batched", "reference"):
        recs = []
        s = run_match(team_a, team_b, games, rules, seed=seed, max_hands=max_hands, records=recs.append,
                      engine=engine, **kw).summary()
        s.pop("seconds")
        out[engine] = (s, recs)
    return out


@pytest.mark.parametrize(("team_a", "team_b", "rules", "max_hands"), [
    ("heuristic", "random", SmearRules(), 200),
    ("heuristic", "random", SmearRules(target_score=11, kitty_size=2, all_pass="dealer_must_bid"), 200),
    ("random", "heuristic", SmearRules(kitty_size=0, target_score=11, high_low="in_play"), 4),
    ("default", "heuristic", SmearRules(), 200),
])
def test_batched_match_equals_the_reference_match(team_a, team_b, rules, max_hands) -> None:
    out = _both(team_a, team_b, 24, rules, seed=7, max_hands=max_hands)
    (sb, rb), (sr, rr) = out["batched"], out["reference"]
    assert json.dumps(sb) == json.dumps(sr)
    assert rb == rr and len(rr) == 24
    assert [r["duplicate"]["pair"] for r in rb] == [p for p in range(12) for _ in range(2)]
    if max_hands == 4:
        assert sr["truncated"] > 0  # the R21 cut-off is exercised


def test_batched_results_do_not_depend_on_lanes_or_workers() -> None:
    rules = SmearRules(target_score=7)
    ref = run_match("heuristic", "random", 40, rules, seed=2, engine="reference").summary()
    for kw in ({"workers": 2}, {}):
        s = run_match("heuristic", "random", 40, rules, seed=2, engine="batched", **kw).summary()
        assert {**s, "seconds": 0} == {**ref, "seconds": 0}
    stats, _ = batched.play_pairs("heuristic", "random", rules, 2, 200, 0, 20, lanes=3)
    stats_all, _ = batched.play_pairs("heuristic", "random", rules, 2, 200, 0, 20, lanes=64)
    assert stats == stats_all


def test_auto_engine_batches_only_vectorisable_teams(monkeypatch) -> None:
    calls = []
    real = batched.play_pairs

    def spy(*a, **k):
        calls.append(a[:2])
        return real(*a, **k)

    monkeypatch.setattr(batched, "play_pairs", spy)
    run_match("heuristic", "random", 2, SmearRules(target_score=3))
    assert calls == [("heuristic", "random")]
    run_match(RandomAgent, "random", 2, SmearRules(target_score=3))  # a factory: not vectorisable
    assert not batched.batchable("pimc") and not batched.batchable("cmd:python bot.py")
    run_match("random", "random", 2, SmearRules(target_score=3), engine="reference")
    assert len(calls) == 1


def test_tournament_and_cli_use_the_batched_engine_with_equal_json(tmp_path, capsys) -> None:
    players = ["random", "heuristic", "default"]
    a = run_tournament(players, 8, seed=1, engine="batched").summary()
    b = run_tournament(players, 8, seed=1, engine="reference").summary()
    for m in a["matches"] + b["matches"]:
        m.pop("seconds")
    assert a == b
    outs = []
    for engine in ("auto", "reference"):
        rec = tmp_path / f"{engine}.jsonl"
        assert main(["heuristic", "random", "--games", "6", "--target-score", "5", "--json", "--records",
                     str(rec), "--engine", engine]) == 0
        s = json.loads(capsys.readouterr().out)
        s.pop("seconds")
        outs.append((s, rec.read_text()))
    assert outs[0] == outs[1]


def test_bad_engine_is_a_clear_error(capsys) -> None:
    with pytest.raises(ValueError, match="engine 'fast' is not allowed; allowed values: 'auto', 'batched'"):
        run_match("random", "random", 2, engine="fast")
    with pytest.raises(ValueError, match="backend 'local'"):
        run_match("random", "random", 2, engine="batched", backend="ray")
    with pytest.raises(SystemExit):
        main(["random", "random", "--engine", "fast"])
    assert "invalid choice: 'fast'" in capsys.readouterr().err


def test_in_training_evaluation_is_the_duplicate_match_of_the_greedy_policy() -> None:
    """evaluate_policy's figures are run_match's for the policy's greedy agent, against an opponent that is
    vectorised and one that plays row by row (pimc); an odd game count is rounded up to whole pairs."""
    torch = pytest.importorskip("torch")
    from training.evaluation import GreedyPolicyAgent, evaluate_policy
    from training.policy import SmearPolicy

    torch.manual_seed(3)
    policy = SmearPolicy([32], "relu").eval()
    rules = SmearRules(target_score=7)
    for opponent in ("heuristic", "pimc:samples=2"):
        got = evaluate_policy(policy, opponent, rules, games=5, seed=4)
        ref = run_match(GreedyPolicyAgent(policy), opponent, 6, rules, seed=4, engine="batched")
        s = ref.summary()
        assert got["games"] == 6 and got["win_rate"] == s["win_rate_a"]
        assert got["ci95"] == s["win_rate_a_ci95"]
        assert got["margin_per_hand"] == ref.pair_margin.sum() / ref.pair_hands.sum()
