"""vector_ppo: PPO collecting on the batched engine. Returns are checked exactly on small rollouts, the
trainer runs, saves, resumes, and its shared-trunk checkpoint plays with numpy; plus the win-rate plot."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import torch

from smear_env.agents.checkpoint import load_agent, read_checkpoint
from smear_env.core.config import SmearRules
from training.config import ConfigError, load_config
from training.plot import main as plot_main
from training.plot import read_curves
from training.train import main

ROOT = Path(__file__).resolve().parents[1]
QUICK = str(ROOT / "configs" / "quickstart.yaml")
VEC = ["algorithm.name=vector_ppo", "selfplay.opponents={self: 0.5, random: 0.5, heuristic: 0}",
       "n_envs=8", "algorithm.n_steps=32", "algorithm.gamma=1.0", "algorithm.gae_lambda=1.0",
       "output.tensorboard=false"]


def _trainer(*overrides: str):
    from training.algorithms.vector_ppo import VectorPPOTrainer

    cfg = load_config(QUICK, [*VEC, *overrides], "tiny")
    return VectorPPOTrainer(cfg, np.random.default_rng(0))


def _check_links(tr) -> None:
    """The decisions kept for the next rollout link only among themselves; open seats point into them."""
    nxt = tr.buf["nxt"][: tr.n]
    assert ((nxt == -1) | ((nxt > np.arange(tr.n)) & (nxt < tr.n))).all()
    assert ((tr.last == -1) | (tr.last < tr.n)).all()


def test_game_returns_are_the_win_or_the_bootstrap_value():
    """episode game, reward win, gamma = lambda = 1, a value head that always says 0.3: a decision's return is
    its team's +-1 game result when its game ended within the rollout, else the bootstrap value 0.3 of the
    seat's view at the rollout's end (the rollout is cut, nothing carried over)."""
    tr = _trainer("rules.target_score=3", "env.episode=game", "env.reward=win")
    with torch.no_grad():
        tr.policy.vf_head.weight.zero_()
        tr.policy.vf_head.bias.fill_(0.3)
    seen: set[float] = set()
    for _ in range(3):
        batch = tr.collect(256)
        assert 256 <= len(batch["act"]) < 256 + 8  # one engine step adds at most one decision per game
        assert batch["mask"][np.arange(len(batch["act"])), batch["act"]].all()  # only legal actions
        ret = set(np.round(batch["ret"].astype(np.float64), 4).tolist())
        assert ret <= {-1.0, 1.0, 0.3}, ret
        seen |= ret
        assert tr.n == 0 and (tr.last == -1).all()
    assert seen == {-1.0, 1.0, 0.3}


def test_hand_score_returns_are_raw_point_differences():
    """episode hand, reward score, score_scale 1: each return is the hand's raw point difference (an integer,
    |d| <= 8), and both signs occur."""
    tr = _trainer("env.episode=hand", "env.reward=score", "env.score_scale=1.0")
    for _ in range(2):
        ret = tr.collect(256)["ret"]
        np.testing.assert_allclose(ret, np.round(ret), atol=1e-4)
        assert np.abs(ret).max() <= 8 + 1e-4 and (ret > 0).any() and (ret < 0).any()  # float32 sums
        _check_links(tr)


def test_vector_ppo_trains_resumes_and_plays_with_numpy(tmp_path):
    run = tmp_path / "run"
    args = ["--config", QUICK, "--variant", "tiny", "--set", "rules.target_score=5",
            "--set", "total_timesteps=600", "--set", "output.checkpoint_interval=300",
            "--set", "selfplay.snapshot_interval=200", "--set", "network.shared_trunk=true",
            "--set", "selfplay.opponents={self: 0.4, snapshot: 0.3, random: 0.3, heuristic: 0}",
            "--set", "algorithm.name=vector_ppo", "--run-dir", str(run)]
    assert main(args) == 0
    latest = run / "checkpoints" / "latest.safetensors"
    tensors, meta = read_checkpoint(latest)
    assert meta["algorithm"] == "vector_ppo" and meta["step"] >= 600 and meta["state"]["pool_steps"]
    assert not any(k.startswith("policy.vf_body") for k in tensors)  # shared trunk
    assert (run / "win_rate.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert main(["--run-dir", str(run), "--resume", "--set", "total_timesteps=1200"]) == 0
    assert read_checkpoint(latest)[1]["step"] >= 1200

    from training.policy import SmearPolicy

    pol = SmearPolicy([32], "relu", shared_trunk=True)
    pol.load_state_dict({k[7:]: torch.from_numpy(v.copy()) for k, v in read_checkpoint(latest)[0].items()
                         if k.startswith("policy.")})
    from smear_env.engine.vector import VectorGame

    vg = VectorGame(16, SmearRules(target_score=5), seed=1)
    obs, mask = vg.observe(), vg.legal_mask()
    want = pol.act(obs, mask, None, greedy=True)[0]
    agent = load_agent(latest, SmearRules(target_score=5))
    got = agent.policy.logits(obs, mask).argmax(axis=1)
    np.testing.assert_array_equal(got, want)


def test_heuristic_opponent_seats_play_the_heuristic():
    """selfplay.opponents heuristic: the opponent team of every game is make_batched_agent("heuristic") at the
    batched table, so every opponent decision equals HeuristicAgent's on that seat's own view; the learner's
    decisions are the only ones stored (one per lane per collect step)."""
    from smear_env.agents.heuristic import HeuristicAgent
    from smear_env.agents.registry import make_batched_agent
    from smear_env.engine.decoding import decode

    tr = _trainer("selfplay.opponents={self: 0, random: 0, heuristic: 1}", "rules.target_score=5")
    heur = tr.players[2]
    assert len(tr.players) == 3 and type(heur) is type(make_batched_agent("heuristic", tr.rules))
    team = tr.learner_team
    seating = tr.table.seating
    ar = np.arange(tr.cfg.n_envs)
    assert (seating[ar, team] == 0).all() and (seating[ar, team + 2] == 0).all()
    assert (seating[ar, 1 - team] == 2).all() and (seating[ar, 3 - team] == 2).all()
    h = HeuristicAgent(tr.rules)
    seen: list[bool] = []
    real = heur.act_batch

    def act_batch(obs, mask, slots):
        out = real(obs, mask, slots)
        for i in range(len(slots)):
            seen.append(int(out[i]) == h.act_view(decode(obs[i], mask[i])))
        return out

    heur.act_batch = act_batch
    heur.act_packed = None  # the table then hands this agent float rows (act_packed equals act_batch: tested)
    steps = []
    real_step = tr.table.step

    def step(actions):
        steps.append(len(actions))
        return real_step(actions)

    tr.table.step = step
    batch = tr.collect(512)
    assert len(seen) > 400 and all(seen)
    assert len(batch["act"]) + tr.n == sum(steps)  # only the learner's decisions are stored
    st = tr._stats  # every game is against the heuristic, and at target 5 many finish in 512 steps
    assert 0 <= st.get("made", 0) <= st.get("contracts", 0) <= st["hands"] and st["hands"] > 0
    assert st.get("win_heuristic_n", 0) > 0


def test_any_agent_spec_is_an_opponent():
    """No list of allowed opponents: a checkpoint (the shipped default, batched: one forward for all rows) and
    pimc (row by row) are accepted by the config and seated at the batched table; the checkpoint games run."""
    from smear_env.agents.batched import BatchedCheckpointAgent, PerSlotAgent
    from training.algorithms.vector_ppo import VectorPPOTrainer

    cfg = load_config(QUICK, ["algorithm.name=vector_ppo", "selfplay.opponents={self: 0.5, pimc: 0.5}"],
                      "tiny")
    players = VectorPPOTrainer(cfg, np.random.default_rng(0)).players
    assert [type(p).__name__ for p in players if isinstance(p, PerSlotAgent)] == ["PerSlotAgent"]
    tr = _trainer("selfplay.opponents={self: 0.5, random: 0, heuristic: 0, default: 0.5}")
    assert len(tr.players) == 3 and isinstance(tr.players[2], BatchedCheckpointAgent)
    assert (tr.table.seating == 2).any()
    batch = tr.collect(300)
    assert len(batch["act"]) >= 300 and batch["mask"][np.arange(len(batch["act"])), batch["act"]].all()


def test_max_cycles_truncates_games_with_the_table_meaning():
    """env.max_cycles is the table's R21 limit (decisions of all seats in a game), not a hand count: with 40
    decisions and an 11-point game no game can finish, so every game episode ends truncated with no win reward
    (return 0) or is cut at the rollout's end (the bootstrap value 0.3); no game runs past 40 decisions."""
    tr = _trainer("env.episode=game", "env.reward=win", "env.max_cycles=40",
                  "selfplay.opponents={self: 0.5, random: 0.5}")
    with torch.no_grad():
        tr.policy.vf_head.weight.zero_()
        tr.policy.vf_head.bias.fill_(0.3)
    seen: set[float] = set()
    for _ in range(2):
        batch = tr.collect(400)
        seen |= set(np.round(batch["ret"].astype(np.float64), 4).tolist())
        assert (tr.table.game_steps < 40).all()
    assert seen == {0.0, 0.3}


def test_vector_ppo_config_errors():
    with pytest.raises(ConfigError, match="env.score_scale"):
        load_config(QUICK, [*VEC, "env.score_scale=0"])
    with pytest.raises(ConfigError, match="network.shared_trunk"):
        load_config(QUICK, ["algorithm.name=ppo"])  # the quickstart's network has a shared trunk
    with pytest.raises(ConfigError, match="selfplay.opponents"):
        load_config(QUICK, ["algorithm.name=vector_ppo", "selfplay.opponents={nosuchagent: 1}"], "tiny")
    assert load_config(QUICK, ["env.score_scale=1.0"]).env.score_scale == 1.0  # every algorithm reads it


def test_plot_reads_evaluations_and_writes_png(tmp_path, capsys):
    log = tmp_path / "train.log"
    lines = [{"step": 0, "imitation": {}}]
    for step, w in ((100, 0.25), (0, 0.1), (200, 0.5)):
        ev = {"opponent": "heuristic", "win_rate": w, "ci95": [w - .1, w + .1]}
        lines.append({"step": step, "eval": ev})
    log.write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json\n")
    assert read_curves(log) == {"heuristic": [(0, 0.1, 0.0, 0.2), (100, 0.25, 0.15, 0.35),
                                              (200, 0.5, 0.4, 0.6)]}
    assert plot_main([str(tmp_path)]) == 0
    assert (tmp_path / "win_rate.png").read_bytes()[:4] == b"\x89PNG"
    assert plot_main([str(tmp_path / "missing")]) == 2
    assert "no train.log" in capsys.readouterr().err


def test_init_from_starts_from_the_checkpoint_weights_and_records_it(tmp_path, capsys):
    """init_from: the new run's step-0 policy equals the source checkpoint's weights (vector_ppo from a
    native ppo checkpoint); the source is named in every checkpoint's metadata, also after --resume; a
    network that does not fit, a missing file and init_from together with a teacher are config errors."""
    src = tmp_path / "src"
    base = ["--config", QUICK, "--variant", "tiny", "--set", "rules.target_score=5",
            "--set", "selfplay.opponents={self: 0.5, random: 0.5, heuristic: 0}"]
    assert main([*base, "--set", "total_timesteps=300", "--run-dir", str(src)]) == 0
    src_ckpt = src / "checkpoints" / "latest.safetensors"
    src_t = read_checkpoint(src_ckpt)[0]
    run = tmp_path / "run"
    args = [*base, "--set", "algorithm.name=vector_ppo", "--set", f"init_from={src_ckpt}",
            "--set", "total_timesteps=300", "--set", "output.checkpoint_interval=100",
            "--set", "output.keep_checkpoints=0", "--run-dir", str(run)]
    assert main([*args, "--set", "total_timesteps=1", "--set", "algorithm.learning_rate=1e-12"]) == 0
    first = sorted((run / "checkpoints").glob("step_*.safetensors"))[0]
    t, meta = read_checkpoint(first)
    for k, v in src_t.items():
        if k.startswith("policy."):
            np.testing.assert_allclose(t[k], v, atol=1e-6)
    assert meta["init_from"]["path"] == str(src_ckpt) and meta["init_from"]["step"] >= 300
    assert main(["--run-dir", str(run), "--resume", "--set", "total_timesteps=400"]) == 0
    resumed = read_checkpoint(run / "checkpoints" / "latest.safetensors")[1]
    assert resumed["init_from"]["path"] == str(src_ckpt)
    capsys.readouterr()
    assert main([*args, "--set", "network.hidden_sizes=[16]", "--run-dir", str(tmp_path / "bad")]) == 2
    assert "'init_from'" in capsys.readouterr().err and not (tmp_path / "bad").exists()
    assert main([*args, "--set", "init_from=nope.safetensors", "--run-dir", str(tmp_path / "bad")]) == 2
    assert "neither a checkpoint file nor a shipped agent" in capsys.readouterr().err
    assert not (tmp_path / "bad").exists()
    with pytest.raises(ConfigError, match="choose one warm start"):
        load_config(QUICK, [f"init_from={src_ckpt}"])


def test_suit_canonical_network_is_suit_equivariant_and_numpy_plays_it(tmp_path):
    """network.suit_canonical: renaming the suits of an observation (every suit-indexed term) renames the
    suits of the policy's action probabilities the same way and leaves the value unchanged; the numpy player
    of the saved checkpoint gives the torch logits."""
    from smear_env.engine.observation import SLICES, SUIT_ACTION_TARGET, SUIT_OBS_SOURCE, SUIT_PERMUTATIONS
    from smear_env.engine.vector import VectorGame
    from training.policy import SmearPolicy

    torch.manual_seed(0)
    pol = SmearPolicy([32, 32], "relu", shared_trunk=True, suit_canonical=True)
    vg = VectorGame(64, SmearRules(target_score=5), seed=3)
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(60):
        obs, mask = vg.observe(), vg.legal_mask()
        for p in (5, 17, 23):
            # obs2 shows original suit SUIT_PERMUTATIONS[p][k] as suit k
            obs2 = obs[:, SUIT_OBS_SOURCE[p]]
            mask2 = np.zeros_like(mask)
            mask2[:, SUIT_ACTION_TARGET[p]] = mask
            with torch.no_grad():
                l1, v1 = pol(torch.from_numpy(obs), torch.from_numpy(mask))
                l2, v2 = pol(torch.from_numpy(obs2), torch.from_numpy(mask2))
            hand = obs[:, SLICES["hand"]].reshape(-1, 4, 8)
            keys = np.where(obs[:, SLICES["trump"]] > 0, 1e6, hand.sum(2) * 256 + hand @ (1 << np.arange(8)))
            # equal holdings in two suits (e.g. two void side suits) keep their suit order: not renamed
            ok = np.array([len(set(k.tolist())) == 4 for k in keys])
            np.testing.assert_allclose(v1.numpy()[ok], v2.numpy()[ok], atol=1e-5)
            np.testing.assert_allclose(l1.numpy()[ok], l2.numpy()[:, SUIT_ACTION_TARGET[p]][ok], atol=1e-4)
            checked += int(ok.sum())
        vg.step(vg.random_actions(rng))
    assert checked > 3000 and len(SUIT_PERMUTATIONS) == 24
    # the numpy player: same logits, from a checkpoint written by a run
    run = tmp_path / "run"
    assert main(["--config", QUICK, "--variant", "tiny", "--set", "rules.target_score=5",
                 "--set", "algorithm.name=vector_ppo", "--set", "network.shared_trunk=true",
                 "--set", "network.suit_canonical=true", "--set", "total_timesteps=300",
                 "--run-dir", str(run)]) == 0
    latest = run / "checkpoints" / "latest.safetensors"
    tensors, meta = read_checkpoint(latest)
    assert meta["network"]["suit_canonical"] is True
    pol = SmearPolicy([32], "relu", shared_trunk=True, suit_canonical=True)
    pol.load_state_dict({k[7:]: torch.from_numpy(v.copy()) for k, v in tensors.items()
                         if k.startswith("policy.")})
    obs, mask = vg.observe(), vg.legal_mask()
    with torch.no_grad():
        want = pol.logits(torch.from_numpy(obs), torch.from_numpy(mask)).numpy()
    got = load_agent(latest, SmearRules(target_score=5)).policy.logits(obs, mask)
    np.testing.assert_allclose(np.where(mask, got, 0), np.where(mask, want, 0), atol=1e-4)
    with pytest.raises(ConfigError, match="network.suit_canonical"):
        load_config(QUICK, ["algorithm.name=maskable_ppo", "network.suit_canonical=true",
                            "network.shared_trunk=false"])


def _weights(module) -> torch.Tensor:
    return torch.cat([p.detach().flatten() for p in module.parameters()]).clone()


def test_overlap_collects_with_the_policy_one_update_behind_and_settles_before_reads():
    """algorithm.overlap: rollout k + 1 is played by the weights from before update k (the actor), the
    update runs beside it, and reading the learner (state, snapshot, evaluation) waits for that update."""
    tr = _trainer("algorithm.overlap=true")
    acted: list[torch.Tensor] = []
    collect = tr.collect

    def recording_collect(target: int):
        acted.append(_weights(tr.acting_policy()))
        return collect(target)

    tr.collect = recording_collect
    theta0 = _weights(tr.policy)
    tr.iterate()
    assert tr.updates == 1 and tr.step > 0
    tr.eval_policy()  # waits for update 1
    theta1 = _weights(tr.policy)
    assert not torch.equal(theta1, theta0) and torch.equal(_weights(tr.actor), theta0)
    out = tr.iterate()  # collected with theta0 while nothing was in flight; its scalars are update 1's
    assert "loss/policy" in out and "bids/bid_rate" in out
    assert torch.equal(acted[0], theta0) and torch.equal(acted[1], theta0)
    assert torch.equal(_weights(tr.actor), theta1)  # the next rollout plays theta1 beside update 2
    tensors, meta = tr.state()
    assert tr._pending is None and not torch.equal(_weights(tr.policy), theta1)  # update 2 is in
    assert {k for k in tensors if k.startswith("actor.")} == {f"actor.{k}" for k in tr.actor.state_dict()}
    assert "update_rng" in meta
    out = tr.iterate()
    assert "loss/policy" in out  # update 2's scalars, kept when state() waited for it
    assert torch.equal(acted[2], theta1)


def test_overlap_is_deterministic_and_resumes(tmp_path):
    """Two overlapped runs of a seed write the same weights; a resumed one picks up the actor and the
    update's generator."""
    base = ["--config", QUICK, "--variant", "tiny", "--set", "rules.target_score=5",
            "--set", "total_timesteps=900", "--set", "output.checkpoint_interval=300",
            "--set", "selfplay.snapshot_interval=200", "--set", "algorithm.name=vector_ppo",
            "--set", "selfplay.opponents={self: 0.4, snapshot: 0.3, random: 0.3, heuristic: 0}",
            "--set", "algorithm.overlap=true", "--set", "eval.interval=400"]
    runs = []
    for name in ("a", "b"):
        assert main([*base, "--run-dir", str(tmp_path / name)]) == 0
        runs.append(read_checkpoint(tmp_path / name / "checkpoints" / "latest.safetensors"))
    (ta, ma), (tb, mb) = runs
    assert ta.keys() == tb.keys() and any(k.startswith("actor.") for k in ta)
    for k in ta:
        np.testing.assert_array_equal(ta[k], tb[k], err_msg=k)
    assert ma["state"]["update_rng"] == mb["state"]["update_rng"]
    run = tmp_path / "a"
    assert main(["--run-dir", str(run), "--resume", "--set", "total_timesteps=1500"]) == 0
    assert read_checkpoint(run / "checkpoints" / "latest.safetensors")[1]["step"] >= 1500


def test_overlap_raises_the_updates_error_in_the_training_thread():
    tr = _trainer("algorithm.overlap=true")

    def failing(batch, step):
        raise RuntimeError("update failed")

    tr.update = failing
    tr.iterate()  # the failing update is in flight
    with pytest.raises(RuntimeError, match="update failed"):
        tr.iterate()
    assert tr._pending is None
