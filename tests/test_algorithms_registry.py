"""The algorithm registry and trainer protocol of training/, and the documented reward scale."""

from __future__ import annotations

import numpy as np
import pytest

from training.algorithms import ALGORITHMS, Trainer, trainer_class
from training.config import ConfigError, load_config


def test_unknown_algorithm_lists_the_valid_ones():
    with pytest.raises(ValueError, match="unknown algorithm 'a2c'; valid algorithms: ppo, maskable_ppo"):
        trainer_class("a2c")
    with pytest.raises(ConfigError, match="'a2c' is not one of 'ppo', 'maskable_ppo'"):
        load_config("configs/quickstart.yaml", ["algorithm.name=a2c"])


def test_every_registered_algorithm_implements_the_protocol():
    pytest.importorskip("torch")
    pytest.importorskip("sb3_contrib")
    for name in ALGORITHMS:
        cls = trainer_class(name)
        assert cls.name == name
        for method in ("iterate", "add_snapshot", "warm_start_policy", "after_warm_start", "eval_policy",
                       "policy_state", "state", "load_state"):
            assert callable(getattr(cls, method)), (name, method)
    cfg = load_config("configs/quickstart.yaml", ["rules.target_score=5", "output.tensorboard=false"], "tiny")
    assert isinstance(trainer_class("ppo")(cfg, np.random.default_rng(0)), Trainer)


def test_imitation_returns_are_raw_points_times_score_scale():
    pytest.importorskip("torch")
    from training.algorithms.imitation import generate

    raw = generate("heuristic", {"target_score": 5}, 120, seed=1, score_scale=1.0)["ret"]
    quarter = generate("heuristic", {"target_score": 5}, 120, seed=1, score_scale=0.25)["ret"]
    assert np.array_equal(raw * 0.25, quarter) and np.abs(raw).max() >= 1
    assert np.all(raw == np.round(raw))  # whole points
