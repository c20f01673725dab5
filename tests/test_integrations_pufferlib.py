"""PufferLib clients written from PufferLib's own documentation (skipped unless PufferLib is installed: make
test-clients, the venv of constraints/clients.txt, which installs ``pufferlib-core``: the ``pufferlib``
package on the index builds from source and downloads raylib at build time). Its Gymnasium emulation
(``GymnasiumPufferEnv``) under its ``Serial`` and ``Multiprocessing`` vectorisation, the Dict observation
emulated into one flat buffer and the action mask read back with ``pufferlib.emulation.nativize``; its
PettingZoo emulation (``PettingZooPufferEnv``) over the parallel form of ``smear_v0``."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

pytest.importorskip("pufferlib.emulation")

import pufferlib.emulation  # noqa: E402
import pufferlib.vector  # noqa: E402

import smear_env  # noqa: E402,F401  (registers the env ids)

ID = "smear_env:smear_env/SmearSingleSeat-v0"  # the module prefix: worker processes import smear_env


def make_puffer_env(buf=None, seed=0, **kwargs):
    return pufferlib.emulation.GymnasiumPufferEnv(env=gymnasium.make(ID, **kwargs), buf=buf, seed=seed)


def _masks(vecenv, obs: np.ndarray) -> np.ndarray:
    driver = vecenv.driver_env  # the env's own Dict space: GymnasiumPufferEnv's or PettingZooPufferEnv's
    space = getattr(driver, "env_single_observation_space", None) or driver.env.observation_space
    native = [pufferlib.emulation.nativize(o, space, driver.obs_dtype) for o in obs]
    return np.stack([n["action_mask"] for n in native]).astype(bool)


@pytest.mark.parametrize("backend", ["Serial", "Multiprocessing"])
def test_gymnasium_emulation_vectorised_with_masks(backend):
    kwargs = {"num_workers": 2} if backend == "Multiprocessing" else {}
    vecenv = pufferlib.vector.make(make_puffer_env, num_envs=4, backend=getattr(pufferlib.vector, backend),
                                   env_kwargs={"obs_format": "dict", "episode": "hand", "reward": "score"},
                                   **kwargs)
    try:
        assert vecenv.single_action_space.n == 72
        obs, _ = vecenv.reset(seed=0)
        rng = np.random.default_rng(0)
        ends = 0
        returns = []
        for _ in range(150):
            masks = _masks(vecenv, obs)
            assert masks.any(axis=1).all()
            obs, rewards, term, trunc, infos = vecenv.step(
                np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
            ends += int((term | trunc).sum())
            returns += rewards[term].tolist()
        assert ends >= 20
        assert all(abs(r) <= 8 and r == int(r) for r in returns) and any(returns)  # hand score margins
    finally:
        vecenv.close()


def test_pettingzoo_emulation_of_the_parallel_env():
    from pettingzoo.utils.conversions import turn_based_aec_to_parallel

    from smear_env import smear_v0

    def make(buf=None, seed=0):
        return pufferlib.emulation.PettingZooPufferEnv(
            env=turn_based_aec_to_parallel(smear_v0.env(episode="hand")), buf=buf, seed=seed)

    vecenv = pufferlib.vector.make(make, num_envs=2, backend=pufferlib.vector.Serial)
    try:
        assert vecenv.num_agents == 8  # 4 seats x 2 games
        obs, _ = vecenv.reset(seed=0)
        rng = np.random.default_rng(0)
        ends = 0
        for _ in range(100):
            masks = _masks(vecenv, obs)
            acts = np.array([rng.choice(np.flatnonzero(m)) if m.any() else 0 for m in masks])
            assert 1 <= masks.any(axis=1).sum() <= 2  # one seat to act in each game (none in one just over)
            obs, rewards, term, trunc, _ = vecenv.step(acts)
            ends += int(term.any())
        assert ends > 0
    finally:
        vecenv.close()
