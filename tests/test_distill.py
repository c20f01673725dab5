"""Distillation of a rollout agent's recorded choices into a checkpoint (training.distill)."""

from __future__ import annotations

import numpy as np
import pytest

from smear_env.agents.batched import BatchedCheckpointAgent
from smear_env.agents.registry import rollout_from_spec
from smear_env.core.config import SmearRules
from smear_env.engine.vector import VectorGame
from training.checkpoint import save_policy
from training.config import ConfigError
from training.config_files import validated
from training.distill import distill, distilled_metadata, load_targets, policy_from_checkpoint, save_targets
from training.stages import expert_iteration as exit_stage


def _record(tmp_path, rows: int = 48):
    """A rollout agent's calls over some random games' decisions, written as a targets file."""
    rules = SmearRules()
    agent = rollout_from_spec("rollout:base=default,opponent=heuristic,samples=2,phases=play+discard", rules)
    agent.recorded = []
    vg = VectorGame(rows, rules, seed=12)
    for lane in range(rows):
        agent.start_game(lane, 0, rules, np.random.default_rng(lane))
    rng = np.random.default_rng(0)
    for _ in range(20):
        agent.act_batch(vg.observe(), vg.legal_mask(), np.arange(rows))
        vg.step(vg.random_actions(rng))
    path = tmp_path / "t.npz"
    n = save_targets(path, agent.recorded)
    assert n == 20 * rows
    return path, agent


def test_targets_round_trip_and_distil_towards_the_search(tmp_path) -> None:
    path, agent = _record(tmp_path)
    data = load_targets([path])
    assert data["searched"].sum() == agent.searched > 0
    rec = agent.recorded
    assert (data["action"] == np.concatenate([r["action"] for r in rec])).all()
    assert (data["obs"].astype(np.float32) == np.concatenate([r["obs"] for r in rec])).all()
    q = np.concatenate([r["q"] for r in rec])
    assert (data["q"] == q).all() and np.isfinite(q[data["searched"]]).any()
    assert np.isneginf(q[~data["searched"]]).all() and np.isneginf(q[~data["mask"]]).all()
    # the shipped default carries an advantage correction: the student is its network, and says so
    with pytest.warns(UserWarning, match="1 advantage correction"):
        policy, meta = policy_from_checkpoint("checkpoints/smear_v0_default.safetensors")
    res = distill(policy, data, epochs=30, lr=1e-3, batch=256, seed=0)
    out = tmp_path / "final.safetensors"
    save_policy(out, policy.state_dict(), distilled_metadata(meta, "distill", res))
    student = BatchedCheckpointAgent.from_checkpoint(str(out), SmearRules())
    # the network the student started from (the shipped default's, without its advantage corrections)
    teacher = BatchedCheckpointAgent.from_checkpoint("checkpoints/smear_v0_default.safetensors", SmearRules(),
                                                     corrections=False)
    for a in (student, teacher):
        for s in range(len(data["action"])):
            a.start_game(s, 0, SmearRules(), np.random.default_rng(0))
    rows = np.arange(len(data["action"]))
    obs, mask = data["obs"].astype(np.float32), data["mask"]
    changed = data["searched"] & (teacher.act_batch(obs, mask, rows) != data["action"])
    assert changed.any()
    # the student learned the search's choices where they differ from the policy it started from
    assert (student.act_batch(obs, mask, rows)[changed] == data["action"][changed]).mean() > 0.8
    meta = student.meta["distill"]
    assert meta["changed_rows"] == changed.sum() and meta["followed_train"] > 0.8
    assert meta["init_corrections_not_carried_over"] == 1 and "corrections" not in student.meta


def _changed_rows(data: dict) -> tuple[np.ndarray, np.ndarray]:
    """(the rows the search changed, the starting policy's greedy actions), computed here without
    ``training.distill`` (the batched numpy agent of the same checkpoint's network, which is what distillation
    fine-tunes: without its advantage corrections), so they check it."""
    agent = BatchedCheckpointAgent.from_checkpoint("checkpoints/smear_v0_default.safetensors", SmearRules(),
                                                   corrections=False)
    rows = np.arange(len(data["action"]))
    for s in rows:
        agent.start_game(int(s), 0, SmearRules(), np.random.default_rng(0))
    start = agent.act_batch(data["obs"].astype(np.float32), data["mask"], rows)
    return data["searched"] & (start != data["action"]), start


def test_changed_weight_and_min_gain(tmp_path) -> None:
    path, _ = _record(tmp_path, rows=64)
    data = load_targets([path])
    changed, start = _changed_rows(data)
    assert changed.sum() >= 2
    rows = np.flatnonzero(changed)
    gain = data["q"][rows, data["action"][rows]] - data["q"][rows, start[rows]]
    # the search (margin 0) changes its base player's action only for a better one; the base player is the
    # corrected default, so a row it kept may still differ from the network's choice, by a value >= 0
    assert (gain >= 0).all() and (gain > 0).any()
    cut = float(np.median(gain))
    logged: list[str] = []
    policy, _ = policy_from_checkpoint("checkpoints/smear_v0_default.safetensors", warn_corrections=False)
    res = distill(policy, data, epochs=1, lr=1e-4, batch=256, seed=0, log=logged.append, min_gain=cut,
                  changed_weight=3.0)
    # changes below the cut became the policy's own action: they are no longer changed rows
    assert res["changed_rows"] == (gain >= cut).sum()
    assert res["changes_dropped_by_min_gain"] == (gain < cut).sum()
    assert res["rows"] == data["action"].size and len(logged) == 1 and "followed_train" in logged[0]
    for key in ("followed_train", "followed_held_out", "flipped_held_out"):
        assert res[key] is None or 0.0 <= res[key] <= 1.0
    # the weight moves the student further towards the changes than the plain loss, from the same start
    follow = []
    for w in (1.0, 30.0):
        policy, _ = policy_from_checkpoint("checkpoints/smear_v0_default.safetensors", warn_corrections=False)
        follow.append(distill(policy, data, epochs=5, lr=3e-4, batch=256, seed=0, log=lambda _: None,
                              changed_weight=w)["followed_train"])
    assert follow[1] > follow[0]
    # without the search's values min_gain cannot be applied: an error, not a silent plain distillation
    plain = {k: v for k, v in data.items() if k != "q"}
    with pytest.raises(ValueError, match="min_gain needs the search's values"):
        distill(policy, plain, epochs=1, lr=1e-4, batch=256, seed=0, min_gain=0.1)
    with pytest.raises(ValueError, match="changed_weight must be > 0"):
        distill(policy, data, epochs=1, lr=1e-4, batch=256, seed=0, changed_weight=0.0)
    with pytest.raises(ConfigError, match="'stages.expert_iteration.changed_weight': expected a number > 0"):
        validated(exit_stage.Config, {"changed_weight": -1}, "stages.expert_iteration.")


def test_bad_targets_files_are_named(tmp_path) -> None:
    bad = tmp_path / "bad.npz"
    np.savez(bad, obs=np.zeros((2, 493)), mask=np.ones((2, 72), bool), action=np.array([0, 1]))
    with pytest.raises(ValueError, match="lacks \\['searched'\\]"):
        load_targets([bad])
    np.savez(bad, obs=np.zeros((2, 493)), mask=np.zeros((2, 72), bool), action=np.array([0, 1]),
             searched=np.zeros(2, bool))
    with pytest.raises(ValueError, match="not legal"):
        load_targets([bad])
    np.savez(bad, obs=np.zeros((2, 490)), mask=np.ones((2, 72), bool), action=np.array([0, 1]),
             searched=np.zeros(2, bool))
    with pytest.raises(ValueError, match="shapes"):
        load_targets([bad])
    np.savez(bad, obs=np.zeros((2, 493)), mask=np.ones((2, 72), bool), action=np.array([0, 1]),
             searched=np.zeros(2, bool), q=np.zeros((2, 71)))
    with pytest.raises(ValueError, match="'q' has shape"):
        load_targets([bad])
    # files without the search's values still load (those written before they were recorded), without q
    np.savez(bad, obs=np.zeros((2, 493)), mask=np.ones((2, 72), bool), action=np.array([0, 1]),
             searched=np.zeros(2, bool))
    good = tmp_path / "good.npz"
    np.savez(good, obs=np.zeros((2, 493)), mask=np.ones((2, 72), bool), action=np.array([0, 1]),
             searched=np.zeros(2, bool), q=np.zeros((2, 72)))
    assert "q" in load_targets([good]) and "q" not in load_targets([good, bad])


def test_expert_iteration_rounds_write_playable_checkpoints_and_their_log(tmp_path) -> None:
    import json

    run = tmp_path / "exit"
    cfg = exit_stage.Config(rounds=2, games=2, workers=1, samples=1, phases="trump", epochs=1, seed=5,
                            window=2)
    # round 1 searches with the corrected default and fine-tunes its network: the warning says so
    with pytest.warns(UserWarning, match="advantage correction"):
        assert exit_stage.run(cfg, {"init": "default"}, run, resume=False) == 0
    first, second = (json.loads(t) for t in (run / "log.jsonl").read_text().splitlines())
    assert first["round"] == 1 and first["matches"][0]["games"] == 2
    assert first["distill"]["rows"] == first["matches"][0]["rows"] > 0
    # round 2 searched with round 1's policy and learned from both rounds' targets (window 2)
    assert "round1.safetensors" in second["search"]
    assert second["distill"]["rows"] == first["matches"][0]["rows"] + second["matches"][0]["rows"]
    assert (run / "final.safetensors").read_bytes() == (run / "round2.safetensors").read_bytes()
    agent = BatchedCheckpointAgent.from_checkpoint(str(run / "final.safetensors"), SmearRules())
    assert agent.meta["algorithm"] == "expert_iteration" and "corrections" not in agent.meta
    round1 = BatchedCheckpointAgent.from_checkpoint(str(run / "round1.safetensors"), SmearRules()).meta
    assert round1["expert_iteration"]["init_corrections_not_carried_over"] == 1
    assert "init_corrections_not_carried_over" not in agent.meta["expert_iteration"]  # round 2's init: none
    for key in ("games", "window"):
        with pytest.raises(ConfigError, match=f"'stages.expert_iteration.{key}': expected an integer from 1"):
            validated(exit_stage.Config, {key: 0}, "stages.expert_iteration.")
    # extra search options reach the spec, and a bad one fails before any game, naming it
    with pytest.raises(ValueError, match="unknown option"):
        exit_stage.run(exit_stage.Config(search_options="margn=0.1"), {"init": "default"}, tmp_path / "bad",
                       resume=False)
    assert not (tmp_path / "bad").exists()
    from training.expert_iteration import search_spec

    assert search_spec("p", "heuristic", 3, "bid", "margin=0.02") == \
        "rollout:base=p,opponent=heuristic,samples=3,phases=bid,margin=0.02"


def test_search_changes_benchmark_values_the_changes_afresh(tmp_path) -> None:
    """benchmarks/search_changes.py finds the same changes as distillation and values both actions of each
    on fresh deals; targets without the search's values are refused."""
    import importlib.util
    from pathlib import Path

    path_py = Path(__file__).resolve().parent.parent / "benchmarks" / "search_changes.py"
    spec = importlib.util.spec_from_file_location("search_changes", path_py)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    path, _ = _record(tmp_path, rows=64)
    data = load_targets([path])
    changed, _ = _changed_rows(data)
    out = tmp_path / "c.json"
    res = mod.main([str(path), "--samples", "4", "--workers", "1", "--json", str(out)])
    every = res["phases"]["all"]
    assert every["changes"] == changed.sum() > 0
    assert sum(v["changes"] for k, v in res["phases"].items() if k != "all") == every["changes"]
    assert set(res["phases"]) <= {"bid", "trump", "discard", "play", "all"} and "bid" not in res["phases"]
    assert every["seen_gain"] > 0  # margin 0: the search changed only for an action it valued higher
    assert np.isfinite(every["fresh_gain"]) and 0.0 <= every["fresh_positive"] <= 1.0
    import json

    assert json.loads(out.read_text())["phases"]["all"]["changes"] == every["changes"]
    plain = tmp_path / "plain.npz"
    np.savez(plain, **{k: v for k, v in data.items() if k != "q"})
    with pytest.raises(SystemExit):
        mod.main([str(plain), "--samples", "2", "--workers", "1"])
