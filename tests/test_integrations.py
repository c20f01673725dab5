"""Gymnasium registration of the single-seat env (smear_env/SmearSingleSeat-v0) and the checkers of the
frameworks installed with the project (Gymnasium, SB3). RLlib and Tianshou: test_integrations_rllib.py,
test_integrations_tianshou.py (skipped unless those frameworks are installed: make test-rllib / -tianshou)."""

from __future__ import annotations

import subprocess
import sys
import warnings

import gymnasium
import numpy as np
import pytest

import smear_env
from smear_env.agents.heuristic import HeuristicAgent
from smear_env.core.config import RuleOptionError
from smear_env.engine.game import IllegalActionError
from smear_env.gym.single_seat import SmearSingleSeatEnv, make_env

GYM_ID = "smear_env/SmearSingleSeat-v0"


def test_registered_id_makes_the_single_seat_env():
    assert smear_env.GYM_ENV_ID == GYM_ID
    env = gymnasium.make(GYM_ID, kitty_size=2, episode="hand", reward="score")
    assert isinstance(env.unwrapped, SmearSingleSeatEnv)
    assert env.spec is not None and env.spec.id == GYM_ID
    assert env.unwrapped.rules.kitty_size == 2 and env.unwrapped.illegal_action == "terminate"
    obs, info = env.reset(seed=3)
    assert obs.shape == env.observation_space.shape and obs.dtype == np.float32
    mask = env.unwrapped.action_masks()
    obs2, *_ = env.step(int(np.flatnonzero(mask)[0]))
    assert env.observation_space.contains(obs2)


def test_gymnasium_check_env_passes_in_default_mode():
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(gymnasium.make(GYM_ID).unwrapped)
        check_env(gymnasium.make(GYM_ID, learning="team", episode="hand", reward="score").unwrapped)


def test_class_default_still_raises_so_check_env_needs_terminate_there():
    """Gymnasium's determinism check samples its action before reset(seed): illegal in the new deal."""
    from gymnasium.utils.env_checker import check_env

    with warnings.catch_warnings(), pytest.raises(IllegalActionError):
        warnings.simplefilter("ignore")
        check_env(SmearSingleSeatEnv())
    env = gymnasium.make(GYM_ID, illegal_action="raise")
    env.reset(seed=0)
    legal = set(np.flatnonzero(env.unwrapped.action_masks()).tolist())
    bad = next(a for a in range(72) if a not in legal)
    with pytest.raises(IllegalActionError):
        env.step(bad)


def test_terminate_mode_ends_with_minus_one_and_state_unchanged():
    env = gymnasium.make(GYM_ID)
    env.reset(seed=1)
    before = env.unwrapped.record()
    legal = set(np.flatnonzero(env.unwrapped.action_masks()).tolist())
    bad = next(a for a in range(72) if a not in legal)
    _, r, term, trunc, info = env.step(bad)
    assert (r, term, trunc, info["illegal_action"]) == (-1.0, True, False, True)
    assert env.unwrapped.record() == before


def test_agent_spec_strings_are_resolved():
    env = make_env(opponents="heuristic", partner="random", kitty_size=2)
    players = env._players
    assert isinstance(players[1], HeuristicAgent) and isinstance(players[3], HeuristicAgent)
    assert players[1].rules.kitty_size == 2
    assert type(players[2]).__name__ == "RandomAgent"
    env = make_env(opponents=["heuristic", "random"])
    assert isinstance(env._players[1], HeuristicAgent) and type(env._players[3]).__name__ == "RandomAgent"
    with pytest.raises(ValueError, match="'heuristik'"):
        gymnasium.make(GYM_ID, opponents="heuristik")
    with pytest.raises(RuleOptionError, match="kitty_sise"):
        gymnasium.make(GYM_ID, kitty_sise=2)


def test_same_seed_same_episode_through_gymnasium_make():
    def play(seed: int) -> list:
        env = gymnasium.make(GYM_ID, opponents="heuristic", episode="hand")
        obs, _ = env.reset(seed=seed)
        env.action_space.seed(seed)
        out = []
        while True:
            obs, r, term, trunc, _ = env.step(env.action_space.sample())
            out.append((float(obs.sum()), r))
            if term or trunc:
                return out

    assert play(5) == play(5)


def test_sb3_check_env_on_the_registered_env():
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sb3_check_env(gymnasium.make(GYM_ID, episode="hand").unwrapped)


@pytest.mark.parametrize("first, then", [("smear_env", "gymnasium"), ("gymnasium", "smear_env"),
                                         ("smear_env", "pettingzoo")])
def test_registered_on_import_in_either_order(first, then):
    """``import smear_env`` imports neither framework; it registers in each when it is (or was) imported."""
    code = (
        f"import sys\nimport {first}\n"
        "assert 'gymnasium' not in sys.modules or 'gymnasium' in {first!r}\n"
        f"import {then}\nimport gymnasium, pettingzoo\n"
        f"assert {GYM_ID!r} in gymnasium.registry\nassert 'smear/smear-v0' in pettingzoo.aec_registry\n"
        "print('ok')\n"
    ).replace("{first!r}", repr(first))
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_module_prefix_imports_smear_env_for_gymnasium():
    code = f"import gymnasium\nenv = gymnasium.make('smear_env:{GYM_ID}')\nprint(env.spec.id)\n"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == GYM_ID


def test_a_find_spec_probe_does_not_undo_the_registration():
    """TorchRL probes ``importlib.util.find_spec("gymnasium")`` / ``("pettingzoo")`` at import; a lookup is
    no import, so the registration must still run when the framework is imported afterwards."""
    code = (
        "import importlib.util, sys\nimport smear_env\n"
        "assert importlib.util.find_spec('gymnasium') is not None\n"
        "assert importlib.util.find_spec('pettingzoo') is not None\n"
        "assert importlib.util.find_spec('gymnasium') is not None\n"
        "assert 'gymnasium' not in sys.modules and 'pettingzoo' not in sys.modules\n"
        "import pettingzoo, gymnasium\n"
        f"env = gymnasium.make({GYM_ID!r})\n"
        "assert 'smear/smear-v0' in pettingzoo.aec_registry\n"
        "assert not any(type(f).__name__ == '_RegisterWhenImported' for f in sys.meta_path)\n"
        "print('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip() == "ok"
