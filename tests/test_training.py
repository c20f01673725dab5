"""Training smoke tests: a few hundred steps into a tmp run folder, resume, Ctrl-C save, evaluation."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import torch

from smear_env.agents.checkpoint import load_agent, read_checkpoint
from smear_env.core.config import SmearRules
from training.config import load_config
from training.train import main

ROOT = Path(__file__).resolve().parents[1]
QUICK = str(ROOT / "configs" / "quickstart.yaml")
TINY = ["--config", QUICK, "--variant", "tiny", "--set", "rules.target_score=5",
        "--set", "total_timesteps=600",
        "--set", "output.checkpoint_interval=300", "--set", "selfplay.snapshot_interval=300"]


def test_smoke_train_resume_evaluate(tmp_path):
    run = tmp_path / "run"
    assert main([*TINY, "--run-dir", str(run)]) == 0
    for name in ("config.yaml", "command.txt", "train.log", "checkpoints/latest.safetensors"):
        assert (run / name).is_file(), name
    _, meta = read_checkpoint(run / "checkpoints" / "latest.safetensors")
    first = meta["step"]
    assert first >= 600
    assert meta["rules"]["target_score"] == 5 and meta["state"]["pool_steps"]  # a snapshot was taken
    steps = sorted(p.name for p in (run / "checkpoints").glob("step_*.safetensors"))
    assert f"step_{first}.safetensors" in steps

    assert main(["--run-dir", str(run), "--resume", "--set", "total_timesteps=1200"]) == 0
    _, meta2 = read_checkpoint(run / "checkpoints" / "latest.safetensors")
    assert meta2["step"] > first and meta2["step"] >= 1200
    assert load_config(run / "config.yaml").total_timesteps == 1200
    assert len((run / "command.txt").read_text().splitlines()) == 2

    from smear_env.evaluation import run_match

    res = run_match(str(run / "checkpoints" / "latest.safetensors"), "random", games=4,
                    rules=SmearRules(target_score=5), seed=0).summary()
    assert res["games"] == 4 and res["win_rate_a"] is not None


def test_resume_restores_exact_training_state(tmp_path):
    from training.algorithms.ppo import PPOTrainer
    from training.run_folder import Run, resume_from

    overrides = ["rules.target_score=5", "total_timesteps=400", "output.tensorboard=false"]
    cfg = load_config(QUICK, overrides, "tiny")
    a = PPOTrainer(cfg, np.random.default_rng(0))
    a.iterate()
    a.add_snapshot()
    run = Run(tmp_path, cfg)
    run.save(a, 1.0)
    b = PPOTrainer(cfg, np.random.default_rng(99))
    assert resume_from(b, tmp_path / "checkpoints" / "latest.safetensors", cfg) == 1.0
    assert b.step == a.step and b.updates == a.updates
    for k, v in a.policy.state_dict().items():
        assert torch.equal(b.policy.state_dict()[k], v)
    sa, sb = a.optimizer.state_dict(), b.optimizer.state_dict()
    assert sa["param_groups"] == sb["param_groups"]
    for pid, st in sa["state"].items():
        for key, v in st.items():
            assert torch.equal(torch.as_tensor(sb["state"][pid][key]), torch.as_tensor(v)), (pid, key)
    assert [s for s, _ in b.pool.snapshots] == [s for s, _ in a.pool.snapshots]
    _, meta = read_checkpoint(tmp_path / "checkpoints" / "latest.safetensors")
    assert meta["state"]["numpy_rng"] == a.rng.bit_generator.state
    c = PPOTrainer(cfg, np.random.default_rng(7))
    resume_from(c, tmp_path / "checkpoints" / "latest.safetensors", cfg)  # resuming is deterministic
    assert c.rng.bit_generator.state == b.rng.bit_generator.state
    assert [s.table.game.deal for s in c.slots] == [s.table.game.deal for s in b.slots]


def test_keyboard_interrupt_saves_checkpoint(tmp_path, monkeypatch):
    from training.algorithms import ppo

    calls = {"n": 0}
    orig = ppo.PPOTrainer.iterate

    def flaky(self):
        calls["n"] += 1
        if calls["n"] == 2:
            raise KeyboardInterrupt
        return orig(self)

    monkeypatch.setattr(ppo.PPOTrainer, "iterate", flaky)
    run = tmp_path / "run"
    assert main([*TINY, "--set", "total_timesteps=100000", "--run-dir", str(run)]) == 130
    _, meta = read_checkpoint(run / "checkpoints" / "latest.safetensors")
    assert meta["step"] > 0


def test_sigterm_saves_checkpoint(tmp_path, monkeypatch):
    import os
    import signal

    from training.algorithms import ppo

    orig = ppo.PPOTrainer.iterate
    calls = {"n": 0}

    def killed(self):
        calls["n"] += 1
        if calls["n"] == 2:
            os.kill(os.getpid(), signal.SIGTERM)
        return orig(self)

    monkeypatch.setattr(ppo.PPOTrainer, "iterate", killed)
    before = signal.getsignal(signal.SIGTERM)
    run = tmp_path / "run"
    assert main([*TINY, "--set", "total_timesteps=100000", "--run-dir", str(run)]) == 130
    assert (run / "checkpoints" / "latest.safetensors").is_file()
    assert signal.getsignal(signal.SIGTERM) is before  # handlers restored


def test_resume_without_checkpoint_is_an_error(tmp_path, capsys):
    assert main(["--run-dir", str(tmp_path / "nothing"), "--resume"]) == 2
    assert "config.yaml" in capsys.readouterr().err


def test_command_txt_line_names_the_program_unquoted(tmp_path, monkeypatch):
    """command.txt's line (what train() gets) is a command to paste: run as `python -m training.train`, the
    program is written as such (it was a quoted 'python -m training.train', one word), the arguments
    shell-quoted."""
    import sys

    import training.train as cli

    seen = []
    monkeypatch.setattr(cli, "train", lambda cfg, run_dir, **kw: seen.append(kw["command"]) or 0)
    monkeypatch.setattr(sys, "argv", [str(ROOT / "training" / "train.py")])
    run = tmp_path / "my run"
    assert main(["--config", QUICK, "--run-dir", str(run), "--set", "seed=1"]) == 0
    assert seen == [f"python -m training.train --config {QUICK} --run-dir '{run}' --set seed=1"]


def test_existing_run_folder_needs_resume_or_overwrite(tmp_path, capsys):
    run = tmp_path / "run"
    assert main([*TINY, "--set", "total_timesteps=300", "--run-dir", str(run)]) == 0
    old = {p.name for p in (run / "checkpoints").glob("*.safetensors")}
    capsys.readouterr()
    assert main([*TINY, "--run-dir", str(run)]) == 2  # would mix two runs' checkpoints
    err = capsys.readouterr().err
    assert "--resume" in err and "--overwrite" in err
    assert {p.name for p in (run / "checkpoints").glob("*.safetensors")} == old  # nothing touched
    assert main([*TINY, "--set", "total_timesteps=300", "--set", "seed=5", "--run-dir", str(run),
                 "--overwrite"]) == 0
    _, meta = read_checkpoint(run / "checkpoints" / "latest.safetensors")
    assert meta["training"]["seed"] == 5


class _LegalityCheck:
    """An agent that plays ``agent``'s actions and counts its decisions and the illegal ones (a game stops
    at the first illegal action, so the count of decisions shows it was not cut short)."""

    def __init__(self, agent) -> None:
        self.agent, self.name, self.decisions, self.illegal = agent, agent.name, 0, []

    def start_game(self, seat, rules, rng) -> None:
        self.agent.start_game(seat, rules, rng)

    def act(self, observation) -> int:
        a = self.agent.act(observation)
        self.decisions += 1
        if not observation["action_mask"][a]:
            self.illegal.append(a)
        return a


def test_policy_learns_legal_masked_actions(tmp_path):
    """Every action the trained greedy checkpoint chooses is legal (masked logits)."""
    run = tmp_path / "run"
    assert main([*TINY, "--run-dir", str(run)]) == 0
    agent = load_agent(run / "checkpoints" / "latest.safetensors", SmearRules(target_score=5))
    from smear_env.evaluation import play_game

    checked = _LegalityCheck(agent)
    rec, stats = play_game([checked] * 4, SmearRules(target_score=5), seed=3)
    assert checked.decisions >= 24 * stats.played >= 24 and checked.illegal == []  # 24 plays a hand


@pytest.mark.parametrize("episode,reward", [("game", "win"), ("game", "score")])
def test_other_episode_and_reward_modes_train(tmp_path, episode, reward):
    run = tmp_path / "run"
    assert main([*TINY, "--set", f"env.episode={episode}", "--set", f"env.reward={reward}",
                 "--set", "env.win_bonus=1.0", "--run-dir", str(run)]) == 0


def test_maskable_ppo_smoke_and_resume(tmp_path):
    """sb3-contrib MaskablePPO on the single-seat env: trains, checkpoints in SmearPolicy form, resumes."""
    run = tmp_path / "run"
    args = [*TINY, "--set", "algorithm.name=maskable_ppo", "--set", "n_envs=2",
            "--set", "total_timesteps=256",
            "--set", "output.checkpoint_interval=128", "--set", "selfplay.snapshot_interval=128",
            "--set", "algorithm.n_steps=64"]
    assert main([*args, "--run-dir", str(run)]) == 0
    latest = run / "checkpoints" / "latest.safetensors"
    tensors, meta = read_checkpoint(latest)
    assert meta["algorithm"] == "maskable_ppo" and meta["step"] >= 256
    assert any(k.startswith("optim.") for k in tensors) and meta["state"]["pool_steps"]
    agent = load_agent(latest, SmearRules(target_score=5))  # the SB3 weights play as a SmearPolicy

    from training.algorithms.maskable_ppo import MaskablePPOTrainer
    from training.run_folder import resume_from

    cfg = load_config(run / "config.yaml")
    tr = MaskablePPOTrainer(cfg, np.random.default_rng(1))
    resume_from(tr, latest, cfg)
    assert tr.step == meta["step"]
    for k, v in tr.policy_state().items():
        assert np.array_equal(v.numpy(), tensors[f"policy.{k}"]), k
    from smear_env.evaluation import play_game

    checked = _LegalityCheck(agent)
    _, stats = play_game([checked] * 4, SmearRules(target_score=5), seed=1)
    assert checked.decisions >= 24 * stats.played >= 24 and checked.illegal == []  # 24 plays a hand


def test_imitation_warm_start_clones_teacher(tmp_path):
    """The behaviour-cloning warm start records teacher decisions with hand returns and trains on them."""
    from training.algorithms.imitation import generate, pretrain
    from training.policy import SmearPolicy

    rules = SmearRules(target_score=5)
    data = generate("heuristic", rules.to_dict(), 200, seed=0)
    n = len(data["act"])
    assert n >= 200 and data["obs"].shape == (n, 493) and data["mask"][np.arange(n), data["act"]].all()
    # R17: a hand's score difference is -8..8; returns are it / 4, the same for a team's two seats
    assert np.all(np.abs(data["ret"]) <= 2.0) and np.all(data["ret"] * 4 == np.round(data["ret"] * 4))
    torch.manual_seed(0)
    pol = SmearPolicy([32], "relu")
    m = pretrain(pol, "heuristic", rules, 400, epochs=3, batch_size=64, learning_rate=3e-3, seed=0, workers=1)
    assert m["imitation/decisions"] >= 400 and m["imitation/accuracy"] > 0.5
    run = tmp_path / "run"
    assert main([*TINY, "--set", "imitation.teacher=heuristic", "--set", "imitation.decisions=300",
                 "--set", "imitation.workers=1", "--set", "imitation.epochs=1", "--run-dir", str(run)]) == 0
    assert '"imitation"' in (run / "train.log").read_text()


def test_batched_imitation_rows_are_the_teachers_whole_hands():
    """generate_batched: each row's label is the heuristic's action on that row's observation (also with
    epsilon exploration, where the played action may differ); each return is the scaled point difference of
    the row's hand for the decider's team (a multiple of 1/4, |d| <= 8); rows come in whole hands, so over a
    lane's hand the two teams' returns are opposite and the sum of all returns is 0; config checks."""
    from smear_env.agents.heuristic import HeuristicAgent
    from smear_env.engine.decoding import decode
    from smear_env.engine.vector import VectorGame
    from training.algorithms.imitation import generate_batched

    rules = SmearRules(target_score=5, kitty_size=2)
    data = generate_batched("heuristic", rules, 3000, seed=3, epsilon=0.3, lanes=16)
    n = len(data["act"])
    assert 2000 < n <= 3000 + 16 and data["obs"].shape == (n, 493)
    assert data["mask"][np.arange(n), data["act"]].all()
    h = HeuristicAgent(rules)
    for i in range(0, n, 7):
        assert data["act"][i] == h.act_view(decode(data["obs"][i], data["mask"][i]))
    r4 = data["ret"] * 4
    assert np.all(np.abs(r4) <= 8) and np.all(r4 == np.round(r4)) and (r4 != 0).mean() > 0.9
    # one lane, no exploration: replay the labels on a VectorGame of the same seed, hand by hand
    one = generate_batched("heuristic", rules, 400, seed=9, lanes=1)
    vg = VectorGame(1, rules, seed=int(np.random.default_rng(9).integers(2**62)))
    want, hand = [], []
    for a in one["act"].tolist():
        assert vg.legal_mask()[0, a]
        hand.append(int(vg.to_act[0]))
        res = vg.step(np.array([a]))
        if res.hand_over[0] or res.thrown_in[0]:
            want += [float(res.reward_score[0, s]) * 0.25 if res.hand_over[0] else 0.0 for s in hand]
            hand = []
    assert hand == [] and len(want) == len(one["ret"]) > 100
    np.testing.assert_array_equal(one["ret"], np.array(want, dtype=np.float32))
    rnd = generate_batched("random", rules, 500, seed=3, lanes=8)
    assert len(rnd["act"]) > 0 and rnd["mask"][np.arange(len(rnd["act"])), rnd["act"]].all()
    # any teacher spec: a checkpoint (the shipped default, batched) labels each row with its greedy action
    from smear_env.agents.registry import make_agent

    ck = generate_batched("default", SmearRules(), 300, seed=1, lanes=4)
    agent = make_agent("default", SmearRules())
    assert len(ck["act"]) > 100
    for i in range(0, len(ck["act"]), 11):
        assert ck["act"][i] == agent.act({"observation": ck["obs"][i], "action_mask": ck["mask"][i]})
    assert load_config(QUICK, ["imitation.teacher=pimc", "imitation.batched=true"]).imitation.batched
