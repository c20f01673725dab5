"""Issue 20, env side: seeds (item 13), hand episodes cut off during reset (18), unknown keywords for
framework fallbacks (19), masks through Gymnasium's wrappers and autoreset (20). Each test fails on the code
before the fix."""

from __future__ import annotations

import gymnasium
import numpy as np
import pytest

import smear_env  # noqa: F401 - registers smear_env/SmearSingleSeat-v0
from smear_env.core.config import RuleOptionError
from smear_env.core.seeding import SEED_LIMIT, check_seed
from smear_env.envs.aec import UnknownOptionError, raw_env
from smear_env.envs.aec import env as wrapped_env
from smear_env.gym.single_seat import SmearSingleSeatEnv, make_env

GYM_ID = "smear_env/SmearSingleSeat-v0"


# ------------------------------------------------------------------------------------------- item 13
BAD_SEEDS = [(1.5, TypeError), (True, TypeError), (np.bool_(False), TypeError), ("3", TypeError),
             (3.0, TypeError), (-1, ValueError), (SEED_LIMIT, ValueError), (5 + 2**64, ValueError),
             (np.int64(-2), ValueError)]


@pytest.mark.parametrize(("seed", "error"), BAD_SEEDS)
def test_raw_env_reset_rejects_bad_seeds_naming_value_and_range(seed, error):
    e = raw_env()
    e.reset(seed=7)
    before = (e.state().tobytes(), e.agent_selection, e.game)
    with pytest.raises(error, match=r"seed must be an integer 0 <= seed < 2\*\*64, or None; got "):
        e.reset(seed=seed)
    assert (e.state().tobytes(), e.agent_selection, e.game) == before  # unchanged


@pytest.mark.parametrize(("seed", "error"), BAD_SEEDS)
def test_single_seat_reset_rejects_bad_seeds(seed, error):
    e = SmearSingleSeatEnv()
    e.reset(seed=7)
    obs = e._obs()
    with pytest.raises(error, match=r"0 <= seed < 2\*\*64"):
        e.reset(seed=seed)
    assert np.array_equal(e._obs(), obs)


def test_wrapped_env_reset_rejects_bad_seed():
    e = wrapped_env()
    with pytest.raises(TypeError, match="got 1.5"):
        e.reset(seed=1.5)


def test_numpy_integer_seeds_equal_python_ints_and_the_top_of_the_range_works():
    a, b = raw_env(), raw_env()
    a.reset(seed=5)
    b.reset(seed=np.uint64(5))
    assert np.array_equal(a.state(), b.state())
    a.reset(seed=SEED_LIMIT - 1)
    s, _ = SmearSingleSeatEnv().reset(seed=np.int32(5))
    t, _ = SmearSingleSeatEnv().reset(seed=5)
    assert np.array_equal(s, t)
    assert check_seed(None) is None and type(check_seed(np.int16(3))) is int


# ------------------------------------------------------------------------------------------- item 18
def _random_learner(env: SmearSingleSeatEnv, steps: int, seed: int = 0) -> dict[str, int]:
    """Steps a random learner (``steps`` decisions, bounded); after every reset the learner must be to
    act. Counts the resets that had to start a new game because R21 cut the game off in them."""
    rng = np.random.default_rng(seed)
    env.reset(seed=seed)
    counts = {"episodes": 0, "cut_off_in_reset": 0}
    for _ in range(steps):
        mask = env.action_masks()
        assert mask.any() and not env.table.done
        _, _, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        assert np.array_equal(info["action_mask"], env.action_masks())
        if term or trunc:
            counts["episodes"] += 1
            with pytest.raises(RuntimeError, match="the episode is over; call reset"):
                env.step(0)  # Gymnasium: reset() after the end; the state stays as it was
            cont = env.table.next == "hand"
            steps_before = env.table.steps
            _, info = env.reset()
            assert info["action_mask"].any() and not env.table.done
            if cont and env.game.hand_number == 0 and env.table.steps < steps_before:
                counts["cut_off_in_reset"] += 1  # the next hand was cut off during reset: new game
    return counts


def test_hand_episode_reset_never_hands_the_learner_a_finished_episode():
    counts = _random_learner(SmearSingleSeatEnv(episode="hand", max_cycles=60), 1500)
    assert counts["cut_off_in_reset"] >= 1  # the situation did occur (the test can fail)
    assert counts["episodes"] > 20


def test_reset_with_tiny_max_cycles_still_gives_a_decision():
    env = SmearSingleSeatEnv(max_cycles=1, seat=2)
    for seed in range(5):
        _, info = env.reset(seed=seed)
        assert info["action_mask"].any() and env.game.to_act == 2
        _, _, term, trunc, _ = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        assert trunc and not term


def test_maskable_ppo_with_hand_episodes_and_small_max_cycles_runs():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.vec_env import DummyVecEnv

    venv = DummyVecEnv([lambda: SmearSingleSeatEnv(episode="hand", max_cycles=60)])
    venv.seed(0)
    model = MaskablePPO("MlpPolicy", venv, n_steps=256, batch_size=64, n_epochs=1, seed=0,
                        policy_kwargs={"net_arch": [16]})
    model.learn(768)  # crashed at 338 steps before: "RuntimeError: the episode is over"
    assert model.num_timesteps >= 768


# ------------------------------------------------------------------------------------------- item 19
@pytest.mark.parametrize("make", [raw_env, wrapped_env, SmearSingleSeatEnv, make_env,
                                  lambda **kw: gymnasium.make(GYM_ID, **kw)])
def test_unknown_keyword_is_a_type_error_for_framework_fallbacks(make):
    with pytest.raises(TypeError, match="unexpected keyword argument 'frameskip'") as info:
        make(frameskip=4)
    assert isinstance(info.value, RuleOptionError)  # callers catching RuleOptionError keep working
    with pytest.raises(TypeError, match="render_mode='rgb_array' is not supported"):
        make(render_mode="rgb_array")


def test_known_option_with_bad_value_stays_a_rule_option_error():
    for kwargs in ({"kitty_size": 9}, {"max_cycles": 0}, {"episode": "set"}, {"render_mode": "ansi!"}):
        with pytest.raises(RuleOptionError) as info:
            raw_env(**kwargs)
        if "render_mode" not in kwargs:
            assert not isinstance(info.value, TypeError)


def test_sb3_make_vec_env_falls_back_without_render_mode():
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_util import make_vec_env

    venv = make_vec_env(GYM_ID, n_envs=2, seed=0, env_kwargs={"opponents": "random"})
    obs = venv.reset()
    assert obs.shape == (2, 493)
    venv.close()


def test_unknown_option_error_is_both_kinds():
    assert issubclass(UnknownOptionError, TypeError) and issubclass(UnknownOptionError, RuleOptionError)


# ------------------------------------------------------------------------------------------- item 20
def test_masks_through_gymnasium_make_wrappers():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported
    from stable_baselines3.common.vec_env import DummyVecEnv

    env = gymnasium.make(GYM_ID, opponents="random")
    _, info = env.reset(seed=1)
    assert is_masking_supported(env)
    want = env.unwrapped.action_masks()
    assert want.any() and np.array_equal(info["action_mask"], want)
    assert np.array_equal(get_action_masks(env), want)
    assert np.array_equal(env.get_wrapper_attr("action_masks")(), want)
    _, _, _, _, info = env.step(int(np.flatnonzero(want)[0]))
    assert np.array_equal(info["action_mask"], env.unwrapped.action_masks())
    venv = DummyVecEnv([lambda: gymnasium.make(GYM_ID, opponents="random")])
    venv.reset()
    assert is_masking_supported(venv) and get_action_masks(venv).shape == (1, 72)


def test_make_vec_next_step_autoreset_never_gives_an_all_zero_mask():
    envs = gymnasium.make_vec(GYM_ID, num_envs=2, vectorization_mode="sync", opponents="random",
                              episode="hand")
    _, info = envs.reset(seed=0)
    rng = np.random.default_rng(0)
    done = np.zeros(2, dtype=bool)
    resets = 0
    for _ in range(600):
        masks = info["action_mask"]
        called = np.stack(envs.call("action_masks"))
        assert np.array_equal(masks, called) and masks.any(axis=1).all()
        if done.any():  # the step before ended an episode: this step is a reset step for those envs
            resets += int(done.sum())
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        _, _, term, trunc, info = envs.step(acts)
        was_reset = done
        done = term | trunc
        for i in np.flatnonzero(was_reset):  # the reset step's mask is the new episode's: learner to act
            assert envs.envs[i].unwrapped.game.to_act in envs.envs[i].unwrapped._controlled
    assert resets >= 5
    envs.close()


def test_mask_after_the_episode_is_all_ones_and_step_still_raises():
    env = SmearSingleSeatEnv(max_cycles=2, seat=0)
    _, info = env.reset(seed=4)
    for _ in range(3):  # max_cycles=2: truncated by the second step at the latest
        _, _, term, trunc, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
        if term or trunc:
            break
    assert info["action_mask"].all() and env.action_masks().all()
    with pytest.raises(RuntimeError, match="the episode is over"):
        env.step(0)


# ------------------------------------------------------------------------------------------- beyond
@pytest.mark.parametrize("make", [raw_env, SmearSingleSeatEnv])
@pytest.mark.parametrize("options", ["new_game", 5, ["new_game"], {"new_game": "no"}, {"new_game": 1}])
def test_reset_options_must_be_a_dict_with_a_boolean_new_game(make, options):
    e = make()
    e.reset(seed=3)
    hand = e.game.hand_number, tuple(e.game.hands)
    with pytest.raises(TypeError, match="reset option"):
        e.reset(options=options)
    assert (e.game.hand_number, tuple(e.game.hands)) == hand
    e.reset(options={"new_game": True, "options": 1})  # other keys ignored (PettingZoo's api_test)


def test_single_seat_unknown_keyword_names_its_own_options_too():
    with pytest.raises(TypeError, match="valid options: .*opponents, partner, learning, seat, illegal"):
        SmearSingleSeatEnv(oponents="random")
