"""TorchRL clients written from TorchRL's own documentation (skipped unless torchrl is installed: make
test-clients, the venv of constraints/clients.txt): its import order, ``GymEnv`` with
``auto_register_info_dict`` and the ``ActionMask`` transform, batched ``GymEnv(id, num_envs=N)`` and
``GymWrapper(gymnasium.make_vec(id, ...))`` in the autoreset mode TorchRL asks for (``DISABLED``)."""

from __future__ import annotations

import logging
import subprocess
import sys

import gymnasium
import numpy as np
import pytest

pytest.importorskip("torchrl")

from torchrl.envs import ActionMask, GymEnv, GymWrapper, TransformedEnv  # noqa: E402

import smear_env  # noqa: E402,F401  (registers the env ids)

ID = "smear_env/SmearSingleSeat-v0"
logging.getLogger("torchrl").setLevel(logging.WARNING)


def test_importing_smear_env_before_torchrl_keeps_the_ids_registered():
    """TorchRL probes importlib.util.find_spec('gymnasium') / ('pettingzoo') at import."""
    code = (
        "import smear_env\nimport torchrl\nfrom torchrl.envs import GymEnv\nimport gymnasium, pettingzoo\n"
        f"env = GymEnv({ID!r})\nassert 'smear/smear-v0' in pettingzoo.aec_registry\n"
        f"gymnasium.make({ID!r})\nprint('ok')\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().endswith("ok")


def _legal(td) -> bool:
    """Every action the rollout took was legal under the mask it saw."""
    action = td["action"].argmax(-1) if td["action"].shape[-1] == 72 else td["action"]
    return bool(td["action_mask"].gather(-1, action.long().unsqueeze(-1)).all())


def test_gym_env_registers_its_info_and_masks_actions():
    env = GymEnv(ID, opponents="random", episode="hand").auto_register_info_dict()
    env = TransformedEnv(env, ActionMask())
    env.set_seed(0)
    td = env.rollout(120, break_when_any_done=False)
    assert td["next", "done"].sum() >= 5 and _legal(td)
    assert not td["next", "illegal_action"].any()  # the masked actions were all legal
    assert td["next", "scores"].shape[-1] == 2 and td["seat"].dtype.is_floating_point is False


def test_batched_gym_env_and_gym_wrapper_of_make_vec():
    # TorchRL's workers start by spawn: the module prefix imports smear_env there (Gymnasium's own way; it has
    # no plugin registry since 1.0)
    env = TransformedEnv(GymEnv(f"smear_env:{ID}", num_envs=2, episode="hand"), ActionMask())
    td = env.rollout(60, break_when_any_done=False)
    assert td.shape == (2, 60) and td["next", "done"].sum() >= 4 and _legal(td)
    vec = gymnasium.make_vec(ID, num_envs=8, vectorization_mode="vector_entry_point", episode="hand",
                             obs_format="dict", autoreset_mode="Disabled")
    env = TransformedEnv(GymWrapper(vec), ActionMask())
    td = env.rollout(80, break_when_any_done=False)
    assert td.shape == (8, 80) and td["next", "done"].sum() >= 40 and _legal(td)
    rewards = td["next", "reward"][td["next", "done"]]
    assert np.isin(rewards.numpy(), [-1.0, 0.0, 1.0]).all() and (rewards != 0).any()
