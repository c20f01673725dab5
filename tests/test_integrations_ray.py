"""Scale-out on Ray: smear-eval's Ray backend on a two-node cluster simulated on this machine, and
smear-train's rllib_ppo (checkpoint = project checkpoint that smear-eval plays; resume). Skipped unless
ray[rllib] is installed (``make test-rllib``). Each test starts its own Ray and plays a few games."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

import ray  # noqa: E402

from smear_env.core.config import SmearRules  # noqa: E402
from smear_env.evaluation import run_match  # noqa: E402
from smear_env.evaluation.cli import main as eval_main  # noqa: E402

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "rllib_ppo.yaml"


def _without_time(summary: dict) -> dict:
    return {k: v for k, v in summary.items() if k != "seconds"}  # wall time differs between any two runs


@pytest.fixture
def two_node_cluster():
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1})
    cluster.add_node(num_cpus=1)
    cluster.wait_for_nodes()
    ray.init(address=cluster.address, include_dashboard=False, log_to_driver=False)
    try:
        assert sum(n["Alive"] for n in ray.nodes()) == 2
        yield cluster
    finally:
        ray.shutdown()
        cluster.shutdown()


def test_ray_backend_matches_local_backend_on_two_nodes(two_node_cluster, capsys):
    rules = SmearRules(target_score=5, kitty_size=2)
    recs_local: list = []
    recs_ray: list = []
    local = run_match("heuristic", "random", games=8, rules=rules, seed=11, max_hands=30,
                      records=recs_local.append)
    remote = run_match("heuristic", "random", games=8, rules=rules, seed=11, max_hands=30,
                       records=recs_ray.append, backend="ray")
    assert json.dumps(_without_time(remote.summary())) == json.dumps(_without_time(local.summary()))
    assert recs_ray == recs_local and len(recs_ray) == 8
    # the CLI: --backend ray prints the same JSON as the local backend
    args = ["heuristic", "random", "--games", "6", "--seed", "4", "--target-score", "5", "--json"]
    assert eval_main(args) == 0
    out_local = json.loads(capsys.readouterr().out)
    assert eval_main([*args, "--backend", "ray"]) == 0
    out_ray = json.loads(capsys.readouterr().out)
    assert _without_time(out_ray) == _without_time(out_local)


def test_backend_errors_are_clear():
    with pytest.raises(ValueError, match="'local', 'ray'"):
        run_match("random", "random", games=2, backend="spark")
    with pytest.raises(SystemExit):
        eval_main(["random", "random", "--games", "2", "--ray-address", "auto"])


def test_rllib_ppo_checkpoint_is_a_project_checkpoint_and_resumes(tmp_path, capsys):
    from smear_env.agents.checkpoint import read_checkpoint
    from training.train import main as train_main

    run = tmp_path / "run"
    assert train_main(["--config", str(CONFIG), "--variant", "tiny", "--run-dir", str(run)]) == 0
    latest = run / "checkpoints" / "latest.safetensors"
    tensors, meta = read_checkpoint(latest)
    assert meta["algorithm"] == "rllib_ppo"
    assert meta["network"] == {"hidden_sizes": [32], "activation": "relu"}
    assert {k for k in tensors if k.startswith("policy.")} == {
        "policy.obs_scale", "policy.pi_body.0.weight", "policy.pi_body.0.bias", "policy.vf_body.0.weight",
        "policy.vf_body.0.bias", "policy.pi_head.weight", "policy.pi_head.bias", "policy.vf_head.weight",
        "policy.vf_head.bias"}
    assert (run / "rllib").is_dir() and meta["step"] >= 400
    capsys.readouterr()
    assert eval_main([str(latest), "random", "--games", "4", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["games"] == 4
    assert train_main(["--resume", "--run-dir", str(run), "--set", "total_timesteps=600"]) == 0
    assert read_checkpoint(latest)[1]["step"] >= 600


def test_exported_policy_computes_the_rllib_module_logits():
    import torch

    from smear_env import smear_v0
    from smear_env.envs.integrations.rllib import MASK_KEY, OBS_KEY, SmearMultiAgentEnv, module_spec
    from training.algorithms.rllib_ppo import from_smear_state_dict, to_smear_state_dict
    from training.policy import SmearPolicy, obs_scale

    spec = module_spec("shared", hidden_sizes=[16, 8], activation="tanh").rl_module_specs["shared"]
    env = SmearMultiAgentEnv({"obs_scale": obs_scale().tolist()})
    spec.observation_space = env.observation_spaces["player_0"]
    spec.action_space = env.action_spaces["player_0"]
    module = spec.build()
    pol = SmearPolicy([16, 8], "tanh")
    sd = to_smear_state_dict({k: v.detach().numpy() for k, v in module.state_dict().items()})
    pol.load_state_dict(sd)
    assert set(from_smear_state_dict(sd)) <= set(module.state_dict())
    env = smear_v0.raw_env()
    env.reset(seed=0)
    o = env.observe(env.agent_selection)
    obs, mask = o["observation"][None], o["action_mask"][None]
    batch = {"obs": {OBS_KEY: torch.from_numpy(obs * obs_scale()),
                     MASK_KEY: torch.from_numpy(mask.astype(np.float32))}}
    with torch.no_grad():
        theirs = module.forward_inference(batch)["action_dist_inputs"][0].numpy()
        ours = pol.logits(torch.from_numpy(obs), torch.from_numpy(mask.astype(bool)))[0].numpy()
    legal = mask[0].astype(bool)
    np.testing.assert_allclose(ours[legal], theirs[legal], rtol=1e-5, atol=1e-5)


def test_learning_curves_benchmark_runs_rllib_ppo(tmp_path):
    """benchmarks/learning_curves.py's rllib_ppo line: a few CPU seconds of RLlib PPO in this process, one
    evaluation against heuristic, the curve JSON and a checkpoint smear-eval plays."""
    import importlib.util

    path = Path(__file__).resolve().parents[1] / "benchmarks" / "learning_curves.py"
    spec = importlib.util.spec_from_file_location("learning_curves", path)
    lc = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(lc)
    out = tmp_path / "lc"
    res = lc.run_one("rllib_ppo", 0.05, 1, 4, seed=9, train_seed=1, out=out)
    (point,) = res["curve"]
    assert point["decisions"] > 0 and point["games"] == 4 and 0.0 <= point["win_rate"] <= 1.0
    assert json.loads((out / "rllib_ppo.json").read_text())["trainer"] == "rllib_ppo"
    assert eval_main([str(out / "rllib_ppo.safetensors"), "random", "--games", "2", "--json"]) == 0
