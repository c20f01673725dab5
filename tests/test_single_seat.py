"""SmearSingleSeatEnv: Gymnasium / SB3 checks, learner-owned rewards, team mode, options, MaskablePPO."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from smear_env.agents.base import RandomAgent
from smear_env.core.config import RuleOptionError
from smear_env.engine import observation as O
from smear_env.engine.game import IllegalActionError
from smear_env.engine.infoset import view_of
from smear_env.gym.single_seat import SmearSingleSeatEnv


def run_episode(env, seed, rng):
    obs, info = env.reset(seed=seed)
    total, steps = 0.0, 0
    while True:
        assert info["seat"] in env._controlled
        assert env.game.to_act == info["seat"]
        assert np.array_equal(obs, O.encode(view_of(env.game, int(info["seat"]))))
        legal = np.flatnonzero(env.action_masks())
        obs, r, term, trunc, info = env.step(int(legal[rng.integers(legal.size)]))
        total += r
        steps += 1
        if term or trunc:
            return total, steps, term, trunc


def test_gymnasium_and_sb3_env_checkers():
    from gymnasium.utils.env_checker import check_env
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        check_env(SmearSingleSeatEnv(illegal_action="terminate"))
        sb3_check_env(SmearSingleSeatEnv(episode="hand"))


@pytest.mark.parametrize("learning", ["seat", "team"])
def test_learner_gets_own_team_score_rewards(learning):
    env = SmearSingleSeatEnv(
        learning=learning, reward="score", episode="game", target_score=5, max_cycles=800
    )
    rng = np.random.default_rng(0)
    for seed in range(4):
        total, _, term, trunc = run_episode(env, seed, rng)
        t = env.seat & 1
        assert total == env.game.scores[t] - env.game.scores[1 - t]
        assert term != trunc


def test_win_reward_and_hand_episode():
    env = SmearSingleSeatEnv(episode="hand", seat=1)
    rng = np.random.default_rng(1)
    for seed in range(6):
        total, _, term, _ = run_episode(env, seed, rng)
        ch = env.game.hand_result["score_change"]
        assert term and env.seat == 1
        assert total == float(np.sign(ch[1] - ch[0]))


def test_truncation_r21():
    env = SmearSingleSeatEnv(max_cycles=10)
    _, _, term, trunc = run_episode(env, 0, np.random.default_rng(0))
    assert trunc and not term and env.num_steps >= 10
    assert env.record()["truncated"] is True


def test_seeding_is_deterministic_and_seat_random_per_episode():
    a, b = SmearSingleSeatEnv(), SmearSingleSeatEnv()
    assert run_episode(a, 7, np.random.default_rng(3)) == run_episode(b, 7, np.random.default_rng(3))
    assert a.game.to_record() == b.game.to_record()
    seats = {SmearSingleSeatEnv().reset(seed=s)[1]["seat"] for s in range(20)}
    assert seats == {0, 1, 2, 3}


def test_opponent_agents_get_start_game_and_callables_work():
    calls = []

    class Spy(RandomAgent):
        def start_game(self, seat, rules, rng):
            calls.append(seat)
            super().start_game(seat, rules, rng)

    def first_legal(obs):
        return int(np.flatnonzero(obs["action_mask"])[0])

    env = SmearSingleSeatEnv([Spy(), first_legal], seat=0, learning="team")
    run_episode(env, 0, np.random.default_rng(0))
    assert calls == [1]
    env = SmearSingleSeatEnv(Spy(), seat=2)
    calls.clear()
    env.reset(seed=0)
    assert sorted(calls) == [0, 1, 3]


def test_illegal_action_raises_or_terminates():
    env = SmearSingleSeatEnv(seat=0)
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.raises(IllegalActionError, match="learning seat 0: action .* legal actions"):
        env.step(illegal)
    env = SmearSingleSeatEnv(seat=0, illegal_action="terminate")
    env.reset(seed=0)
    _, r, term, trunc, info = env.step(illegal)
    assert (r, term, trunc, info["illegal_action"]) == (-1.0, True, False, True)


def test_bad_options():
    with pytest.raises(RuleOptionError, match="learning='x'"):
        SmearSingleSeatEnv(learning="x")
    with pytest.raises(RuleOptionError, match="seat=4"):
        SmearSingleSeatEnv(seat=4)
    with pytest.raises(RuleOptionError, match="opponents has 3 entries"):
        SmearSingleSeatEnv([RandomAgent()] * 3, learning="team")
    with pytest.raises(RuleOptionError, match="unknown smear_v0 option 'foo'"):
        SmearSingleSeatEnv(foo=1)


def test_action_space_sample_is_legal():
    env = SmearSingleSeatEnv()
    env.reset(seed=0)
    env.action_space.seed(0)
    for _ in range(20):
        a = env.action_space.sample()
        assert env.action_masks()[a]
        _, _, term, trunc, _ = env.step(a)
        if term or trunc:
            env.reset()


def test_maskable_ppo_short_run():
    from sb3_contrib import MaskablePPO

    env = SmearSingleSeatEnv(episode="hand", reward="score")
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=128, batch_size=64, n_epochs=1, seed=0, verbose=0, device="cpu"
    )
    model.learn(total_timesteps=256)
    obs, _ = env.reset(seed=1)
    action, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[int(action)]


@pytest.mark.parametrize("obs_format", ["flat", "dict"])
@pytest.mark.parametrize("learning", ["seat", "team"])
def test_every_step_observation_and_info_agree_with_the_state(obs_format, learning):
    """reset/step build the observation and the info together: both describe the state after the step,
    the observed seat's vector, its mask as action_masks() gives it (all ones after the end), in separate
    arrays."""
    env = SmearSingleSeatEnv(learning=learning, obs_format=obs_format, episode="hand", normalize=True)
    rng = np.random.default_rng(3)
    obs, info = env.reset(seed=3)
    for _ in range(120):
        vec = obs if obs_format == "flat" else obs["observation"]
        seat = int(info["seat"])
        assert np.array_equal(vec, O.encode_game(env.game, seat) * env._scale)
        assert info["action_mask"].dtype == bool and np.array_equal(info["action_mask"], env.action_masks())
        assert int(info["learner_seat"]) == env.seat and tuple(info["scores"]) == tuple(env.game.scores)
        if obs_format == "dict":
            assert obs["action_mask"].dtype == np.int8
            assert np.array_equal(obs["action_mask"], info["action_mask"])
            assert not np.shares_memory(obs["action_mask"], info["action_mask"])
        if env.table.done:
            assert info["action_mask"].all()
            obs, info = env.reset()
            continue
        legal = np.flatnonzero(info["action_mask"])
        obs, _, _, _, info = env.step(int(legal[rng.integers(legal.size)]))
