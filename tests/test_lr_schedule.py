"""One learning-rate schedule (issue 51): ``anneal_lr`` means the same for every algorithm -- linear towards 0
over total_timesteps, never below the algorithm's floor -- computed in one place (UpdateConfig.lr_at)."""

from __future__ import annotations

import numpy as np

from training.algorithms import ALGORITHMS, config_class


def test_lr_at_is_the_schedule_each_trainer_computed():
    """The formulas the trainers wrote inline (ppo_update: to 0, never below 5%; dmc: to 0), bit for bit."""
    total = 1_000_003
    for step in [0, 1, 17, 499_999, 950_002, 950_003, 999_999, total, 2 * total]:
        frac = min(1.0, step / total)
        ppo = config_class("vector_ppo")(learning_rate=3e-4)
        assert ppo.lr_at(step, total) == max(3e-4 * (1.0 - frac), 3e-4 * 0.05)
        dmc = config_class("dmc")(learning_rate=3e-4)
        assert dmc.lr_at(step, total) == 3e-4 * (1.0 - frac)
    assert config_class("ppo")(anneal_lr=False).lr_at(10, 10) == 3e-4


def test_one_meaning_everywhere_and_framework_points_follow_it():
    docs = {config_class(n).model_fields["anneal_lr"].description for n in ALGORITHMS}
    assert len(docs) == 1
    total = 1000
    for name in ALGORITHMS:
        a = config_class(name)(learning_rate=1e-3)
        points = np.array(a.lr_schedule(total))
        steps = np.arange(0, total + 1)
        interpolated = np.interp(steps, points[:, 0], points[:, 1])
        exact = np.array([a.lr_at(int(s), total) for s in steps])
        assert np.allclose(interpolated, exact, rtol=1e-9, atol=1e-15), name
    assert config_class("rllib_ppo")(anneal_lr=False).lr_schedule(total) == 3e-4
