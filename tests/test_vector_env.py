"""The vector envs over the batched table: the Gymnasium VectorEnv (make_vec entry point, Dict observation
and infos mask, NEXT_STEP autoreset by default, SAME_STEP as an option), the self-play form, the SB3 VecEnv
adapter, the examples learning."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import gymnasium
import numpy as np
import pytest

import smear_env  # noqa: F401  (registers the env ids)
from smear_env.agents.registry import make_batched_agent
from smear_env.core.config import RuleOptionError, SmearRules
from smear_env.engine.vector import VectorIllegalActionError, random_actions
from smear_env.gym.vector_env import SmearSelfPlayVectorEnv, SmearVectorEnv
from smear_env.gym.vector_env.sb3 import SmearSB3VecEnv
from smear_env.tables.batched_table import LEARNER, BatchedTable
from smear_env.tables.table import TableOptions

ROOT = Path(__file__).resolve().parents[1]
ENV_ID = "smear_env/SmearSingleSeat-v0"
SAME = gymnasium.vector.AutoresetMode.SAME_STEP
NEXT = gymnasium.vector.AutoresetMode.NEXT_STEP


def legal_first(masks: np.ndarray) -> np.ndarray:
    return np.asarray(masks).argmax(axis=1)


def _rollout(env, steps: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    out = []
    for _ in range(steps):
        a = random_actions(info["action_mask"], rng)
        obs, r, term, trunc, info = env.step(a)
        out.append((obs, r, term, trunc, info))
    return out


def test_make_vec_returns_the_batched_vector_env_with_next_step_autoreset():
    env = gymnasium.make_vec(ENV_ID, num_envs=6, vectorization_mode="vector_entry_point",
                             opponents="heuristic", episode="hand", reward="score", kitty_size=2)
    assert isinstance(env, SmearVectorEnv) and isinstance(env, gymnasium.vector.VectorEnv)
    assert env.metadata["autoreset_mode"] is NEXT and env.autoreset_mode is NEXT
    assert env.single_observation_space.shape == (493,)  # flat by default, as the single-seat env
    env = gymnasium.make_vec(ENV_ID, num_envs=6, vectorization_mode="vector_entry_point",
                             opponents="heuristic", episode="hand", reward="score", kitty_size=2,
                             obs_format="dict", autoreset_mode="SameStep")
    assert env.metadata["autoreset_mode"] is SAME and env.autoreset_mode is SAME
    assert env.spec.id == ENV_ID and env.num_envs == 6 and env.rules.kitty_size == 2
    assert env.single_observation_space["observation"].shape == (493,)
    assert env.action_space.shape == (6,)
    obs, info = env.reset(seed=3)
    assert obs in env.observation_space
    np.testing.assert_array_equal(obs["action_mask"].astype(bool), info["action_mask"])
    np.testing.assert_array_equal(env.action_masks(), info["action_mask"])
    assert set(info["seat"] % 2) <= {0, 1} and (info["seat"] == info["learner_seat"]).all()
    env.close()


@pytest.mark.parametrize("partner", ["random", "heuristic"])
def test_vector_env_equals_the_batched_tables_learner_api(partner):
    """SmearVectorEnv plays the table through its low-level API (no observation for the random agent; the
    table's own loop, packed observations, when no agent reads the mask alone): its observations, masks,
    rewards and episode ends equal BatchedTable.step's on the same seating and seed."""
    n = 12
    env = SmearVectorEnv(n, opponents="heuristic", partner=partner, seat=1, episode="hand", reward="score",
                         obs_format="flat", autoreset_mode=SAME, seed=5)
    obs, info = env.reset()
    players = [LEARNER, make_batched_agent("heuristic", env.rules), make_batched_agent(partner, env.rules)]
    table = BatchedTable(n, players, np.array([1, 0, 1, 2]), env.rules, env.table_options,
                         seed=env.table.seed)
    obs2, mask2, _ = table.reset()
    np.testing.assert_array_equal(obs, obs2)
    rng = np.random.default_rng(0)
    ends = 0
    for _ in range(150):
        a = random_actions(info["action_mask"], rng)
        obs, r, term, trunc, info = env.step(a)
        obs2, mask2, r2, term2, trunc2, _ = table.step(a)
        np.testing.assert_array_equal(obs, obs2)
        np.testing.assert_array_equal(info["action_mask"], mask2)
        np.testing.assert_array_equal(r, r2[:, 1])
        np.testing.assert_array_equal(term, term2)
        np.testing.assert_array_equal(trunc, trunc2)
        ends += int(term.sum())
        assert (info["seat"] == 1).all()
    assert ends > 20


def test_hand_score_rewards_come_only_at_episode_ends_and_are_the_hands_margin():
    """episode hand, reward score, scale 1: a reward is non-zero only in a step that ended an episode, an
    integer of at most 8 points; the two signs occur; autoreset: the lane's next observation is the new hand's
    (fresh hand: the learner holds 6 cards, or 6 + kitty when it won the bid)."""
    env = SmearVectorEnv(16, opponents="random", episode="hand", reward="score", autoreset_mode=SAME, seed=1)
    seen = []
    for _obs, r, term, trunc, info in _rollout(env, 200):
        assert not trunc.any()
        assert (r[~term] == 0).all()
        assert (np.abs(r) <= 8).all() and (r == np.round(r)).all()
        seen += r[term].tolist()
        assert info["_final_obs"].tolist() == term.tolist()
    assert min(seen) < 0 < max(seen) and len(seen) > 50


def test_game_win_rewards_match_final_info_and_reset_to_a_new_game():
    env = SmearVectorEnv(32, opponents="random", learning="team", episode="game", reward="win",
                         target_score=3, autoreset_mode=SAME, seed=2)
    games = 0
    for obs, r, term, _trunc, info in _rollout(env, 300):
        fi = info["final_info"]
        won = fi["winner"] == fi["learner_seat"] % 2
        np.testing.assert_array_equal(r[term], np.where(won[term], 1.0, -1.0))
        assert (r[~term] == 0).all() and fi["game_over"][term].all()
        # a new game was dealt: the scores in the observation are 0 again
        from smear_env.engine.observation import SLICES

        assert (obs["observation"][term][:, SLICES["scores"]] == 0).all()
        assert np.isin(info["seat"], [info["learner_seat"], (info["learner_seat"] + 2) % 4]).all()
        games += int(term.sum())
    assert games > 30


def test_max_cycles_cut_gives_the_cut_state_as_final_obs():
    """A game cut off by max_cycles is truncated with reward 0; final_obs is the learner's view of the cut-off
    game at the cut (what a table of the same seed shows the learner's seat just before it deals the next
    game), not the next game's first observation; its action_mask is all zeros."""
    n = 24
    env = SmearVectorEnv(n, opponents="random", seat=2, episode="game", reward="win", max_cycles=30,
                         obs_format="flat", autoreset_mode=SAME, seed=4)
    obs, info = env.reset()
    want = np.zeros((n, 493), dtype=np.float32)

    def on_step(table, st):
        cut = st.truncated & ~st.result.truncated & ~st.result.game_over
        want[cut] = table.vg.observe(np.full(n, 2))[cut]

    rnd = make_batched_agent("random", env.rules)
    table = BatchedTable(n, [LEARNER, rnd], np.array([1, 1, 0, 1]), env.rules, env.table_options,
                         seed=env.table.seed, on_step=on_step)
    table.reset()
    rng = np.random.default_rng(0)
    cuts = 0
    for _ in range(120):
        a = random_actions(info["action_mask"], rng)
        obs, r, term, trunc, info = env.step(a)
        table.step(a)
        assert not term.any()  # no game can end in 30 decisions
        lanes = np.flatnonzero(trunc)
        np.testing.assert_array_equal(info["_final_obs"], trunc)
        np.testing.assert_array_equal(info["final_obs"][lanes], want[lanes])
        assert (r[lanes] == 0).all() and (info["final_info"]["episode_steps"][lanes] == 30).all()
        assert not (info["final_obs"][lanes] == obs[lanes]).all(axis=1).any()
        cuts += lanes.size
    assert cuts > 20
    d = SmearVectorEnv(2, max_cycles=3, autoreset_mode=SAME, seed=0)
    o, i = d.reset()
    for _ in range(4):
        o, r, te, tr, i = d.step(random_actions(i["action_mask"], rng))
        assert (i["final_obs"]["action_mask"] == 0).all()


def test_same_seed_same_run_and_bad_input_errors():
    a = [(o["observation"], r) for o, r, *_ in _rollout(SmearVectorEnv(8, opponents="heuristic"), 40, seed=7)]
    b = [(o["observation"], r) for o, r, *_ in _rollout(SmearVectorEnv(8, opponents="heuristic"), 40, seed=7)]
    for (o1, r1), (o2, r2) in zip(a, b, strict=True):
        np.testing.assert_array_equal(o1, o2)
        np.testing.assert_array_equal(r1, r2)
    env = SmearVectorEnv(4, seed=0)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(np.zeros(4, dtype=np.int64))
    obs, info = env.reset(seed=0)
    illegal = np.array([int(np.flatnonzero(~m)[0]) for m in info["action_mask"]])
    with pytest.raises(VectorIllegalActionError):
        env.step(illegal)
    np.testing.assert_array_equal(env.action_masks(), info["action_mask"])  # nothing moved
    with pytest.raises(ValueError, match=r"actions must have shape \(4,\).*got shape \(3,\)"):
        env.step(np.zeros(3, dtype=np.int64))
    with pytest.raises(ValueError, match=r"actions must have shape \(4,\).*got shape \(4, 1\)"):
        env.step(np.asarray(legal_first(info["action_mask"]))[:, None])
    np.testing.assert_array_equal(env.action_masks(), info["action_mask"])  # nothing moved
    with pytest.raises(RuleOptionError, match="autoreset_mode='next'.*NEXT_STEP.*SAME_STEP.*DISABLED"):
        SmearVectorEnv(2, autoreset_mode="next")
    with pytest.raises(RuleOptionError, match="normalize=1 .*False, True"):
        SmearVectorEnv(2, normalize=1)
    with pytest.raises(RuleOptionError, match="obs_format='nope'.*'dict', 'flat'"):
        SmearVectorEnv(2, obs_format="nope")
    with pytest.raises(RuleOptionError, match="num_envs=0"):
        SmearVectorEnv(0)
    with pytest.raises(RuleOptionError, match="learning='x'"):
        SmearVectorEnv(2, learning="x")
    with pytest.raises(RuleOptionError, match="unknown SmearVectorEnv option 'bogus'"):
        SmearVectorEnv(2, bogus=1)
    with pytest.raises(ValueError, match="valid specs"):
        SmearVectorEnv(2, opponents="nosuchagent")
    with pytest.raises(RuleOptionError, match="illegal_action='terminate'"):
        gymnasium.make_vec(ENV_ID, num_envs=2, vectorization_mode="vector_entry_point",
                           illegal_action="terminate")


def test_self_play_env_rewards_per_seat():
    """All four seats learn: one decision per game per step (the table's learner API), obs of the seat to
    act, rewards (N, 4) with partners equal and teams opposite."""
    env = SmearSelfPlayVectorEnv(10, episode="hand", reward="score", seed=3)
    obs, info = env.reset(seed=3)
    table = BatchedTable(10, [LEARNER], np.zeros(4, dtype=np.int64), SmearRules(),
                         TableOptions(episode="hand", reward="score", max_cycles=10_000), seed=env.table.seed)
    obs2, _, info2 = table.reset()
    np.testing.assert_array_equal(obs["observation"], obs2)
    rng = np.random.default_rng(1)
    scored = 0
    for _ in range(200):
        a = random_actions(info["action_mask"], rng)
        obs, r, term, trunc, info = env.step(a)
        obs2, _, r2, _, _, info2 = table.step(a)
        np.testing.assert_array_equal(r, r2)
        np.testing.assert_array_equal(info["seat"], info2["seat"])
        assert r.shape == (10, 4)
        np.testing.assert_array_equal(r[:, 0], r[:, 2])
        np.testing.assert_array_equal(r[:, 0], -r[:, 1])
        scored += int((r[:, 0] != 0).sum())
    assert scored > 10


def test_sb3_vec_env_gives_masks_terminal_observations_and_trains_maskable_ppo():
    from sb3_contrib import MaskablePPO
    from sb3_contrib.common.maskable.utils import get_action_masks, is_masking_supported

    venv = SmearSB3VecEnv(8, opponents="random", episode="hand", reward="score", score_scale=0.25)
    assert is_masking_supported(venv)
    venv.seed(0)
    obs = venv.reset()
    assert obs.shape == (8, 493)
    rng = np.random.default_rng(0)
    dones = 0
    for _ in range(60):
        masks = get_action_masks(venv)
        assert masks.shape == (8, 72) and masks.any(axis=1).all()
        obs, rew, done, infos = venv.step(random_actions(masks, rng))
        for i in np.flatnonzero(done):
            assert infos[i]["terminal_observation"].shape == (493,)
            assert infos[i]["TimeLimit.truncated"] is False
        dones += int(done.sum())
    assert dones > 0
    model = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=64, n_epochs=1, seed=0, device="cpu")
    model.learn(256)
    assert model.num_timesteps >= 256


def _example(name: str):
    spec = importlib.util.spec_from_file_location(name, ROOT / "examples" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    sys.modules[name] = mod
    spec.loader.exec_module(mod)
    return mod


@pytest.mark.slow
@pytest.mark.parametrize("name", ["cleanrl_ppo_vector", "sb3_vector"])
def test_example_learns_to_beat_random_within_its_ci_budget(name, capsys):
    """The CI budget (--steps 20000): the trained team's greedy win rate against random over 400 games has a
    95% interval above 50% and above the untrained network's rate (deterministic play alone beats random
    often, so the comparison that shows learning is with the untrained network)."""
    out = _example(name).main(["--steps", "20000"])
    lo, _ = out["ci95"]
    assert out["decisions"] >= 20000 and lo > 0.5 and lo > out["untrained_win_rate"], out


def _first_legal_run(mode, steps: int, **kw):
    env = SmearVectorEnv(1, opponents="random", episode="hand", reward="score", obs_format="flat",
                         autoreset_mode=mode, seed=11, **kw)
    obs, info = env.reset()
    out = []
    for _ in range(steps):
        obs, r, term, trunc, info = env.step(legal_first(info["action_mask"]))
        out.append((obs[0].copy(), float(r[0]), bool(term[0]), bool(trunc[0]), info["action_mask"][0].copy(),
                    {k: np.copy(info[k][0]) for k in ("seat", "learner_seat", "scores", "winner")}))
    return out


@pytest.mark.parametrize("kw", [{}, {"max_cycles": 9}])
def test_next_step_is_same_step_with_the_reset_step_inserted(kw):
    """One game (its draws independent of other lanes): the NEXT_STEP run equals the SAME_STEP run of the same
    seed, except that each episode end returns the learner's final view (mask all ones) and the step after it
    is a reset step (its action ignored, reward 0, not done) returning SAME_STEP's next-episode
    observation."""
    same = _first_legal_run(SAME, 120, **kw)
    nxt = _first_legal_run(NEXT, 120 + sum(t or u for _, _, t, u, _, _ in same), **kw)
    j = ends = 0
    prev_obs = None
    for obs, r, term, trunc, mask, _ in same:
        o2, r2, t2, u2, m2, i2 = nxt[j]
        assert (r2, t2, u2) == (r, term, trunc)
        if term or trunc:
            assert m2.all() and not mask.all()
            if term:  # ended naturally: the final view is the learner's last one
                np.testing.assert_array_equal(o2, prev_obs)
            j += 1
            o2, r2, t2, u2, m2, i2 = nxt[j]  # the reset step
            assert (r2, t2, u2) == (0.0, False, False)
            ends += 1
        np.testing.assert_array_equal(o2, obs)
        np.testing.assert_array_equal(m2, mask)
        prev_obs = obs
        j += 1
    assert ends >= 3


def test_next_step_terminal_info_describes_the_ended_game():
    env = SmearVectorEnv(16, opponents="random", learning="team", episode="game", reward="win",
                         target_score=3, seed=2)
    _, info = env.reset()
    rng = np.random.default_rng(0)
    games = 0
    pending = np.zeros(16, dtype=bool)
    for _ in range(300):
        a = np.where(pending, 99, random_actions(info["action_mask"], rng))  # a reset step ignores the action
        _, r, term, trunc, info = env.step(a)
        assert (r[pending] == 0).all() and not (term | trunc)[pending].any()
        won = info["winner"] == info["learner_seat"] % 2
        np.testing.assert_array_equal(r[term], np.where(won[term], 1.0, -1.0))
        assert (info["scores"][term].max(axis=1) >= 3).all() and info["action_mask"][term].all()
        assert (info["winner"][~term] == -1).all()
        pending = term | trunc
        games += int(term.sum())
    assert games > 20
    with pytest.raises(VectorIllegalActionError):  # outside a reset step, 99 is refused as before
        env.step(np.where(pending, 0, 99))


def test_info_keys_and_types_agree_across_make_vec_modes():
    """sync, async and the vector entry point: the same observation space, autoreset mode and info keys
    (numpy values of fixed dtype); obs_format='dict' gives the Dict in every mode."""
    seen = {}
    for mode in ("sync", "vector_entry_point"):
        for fmt in ("flat", "dict"):
            env = gymnasium.make_vec(ENV_ID, num_envs=3, vectorization_mode=mode, obs_format=fmt)
            obs, info = env.reset(seed=0)
            _, _, _, _, info2 = env.step(legal_first(info["action_mask"]))
            assert env.metadata["autoreset_mode"] is NEXT
            assert set(info) == set(info2)
            seen[mode, fmt] = (env.single_observation_space, sorted(info),
                               {k: (v.dtype, v.shape) for k, v in info.items()})
            env.close()
    for fmt in ("flat", "dict"):
        assert seen["sync", fmt] == seen["vector_entry_point", fmt]
    assert seen["sync", "flat"][0] == gymnasium.spaces.Box(seen["sync", "flat"][0].low,
                                                            seen["sync", "flat"][0].high, dtype=np.float32)


def test_gymnasiums_vector_wrappers_run_on_the_vector_env():
    from gymnasium.wrappers.vector import (
        FlattenObservation,
        NormalizeObservation,
        RecordEpisodeStatistics,
    )

    env = gymnasium.make_vec(ENV_ID, num_envs=8, vectorization_mode="vector_entry_point", opponents="random",
                             episode="hand")
    env = RecordEpisodeStatistics(NormalizeObservation(FlattenObservation(env)))
    assert env.metadata["autoreset_mode"] is NEXT
    obs, info = env.reset(seed=0)
    rng = np.random.default_rng(0)
    episodes = 0
    for _ in range(60):
        obs, r, term, trunc, info = env.step(random_actions(info["action_mask"], rng))
        assert obs.shape == (8, 493) and np.isfinite(obs).all()
        if "episode" in info:
            episodes += int(info["_episode"].sum())
    assert episodes > 0


def test_sb3_vec_env_refuses_a_bad_seed_at_once():
    venv = SmearSB3VecEnv(2)
    for bad, err in ((-1, ValueError), ("x", TypeError), (2**64, ValueError), (True, TypeError)):
        with pytest.raises(err, match="seed must be"):
            venv.seed(bad)
    assert venv.seed(3) == [3, 3]
    with pytest.raises(ValueError, match="autoreset_mode='SameStep'"):
        SmearSB3VecEnv(env=SmearVectorEnv(2, obs_format="flat"))


def test_disabled_autoreset_resets_the_ended_games_by_reset_mask():
    """AutoresetMode.DISABLED (TorchRL's preferred mode): an ended game waits for
    reset(options={"reset_mask"}) and step() refuses to run past it; the other games are unchanged."""
    env = SmearVectorEnv(6, opponents="random", episode="hand", obs_format="flat", autoreset_mode="Disabled",
                         seed=3)
    assert env.metadata["autoreset_mode"] is gymnasium.vector.AutoresetMode.DISABLED
    _, info = env.reset()
    rng = np.random.default_rng(0)
    resets = 0
    for _ in range(120):
        obs, r, term, trunc, info = env.step(random_actions(info["action_mask"], rng))
        done = term | trunc
        if done.any():
            assert info["action_mask"][done].all()
            with pytest.raises(RuntimeError, match="reset them first"):
                env.step(random_actions(info["action_mask"], rng))
            before = obs.copy()
            obs, info = env.reset(options={"reset_mask": done})
            np.testing.assert_array_equal(obs[~done], before[~done])  # the other games are unchanged
            assert info["_seat"].tolist() == done.tolist() and info["action_mask"].any(axis=1).all()
            assert (obs[done][:, 489:493].sum(axis=1) >= 21).all()  # a new hand: at most 3 cards played
            resets += int(done.sum())
    assert resets > 10
    with pytest.raises(ValueError, match="reset_mask.*bool"):
        env.reset(options={"reset_mask": [True] * 6})
    with pytest.raises(ValueError, match="only options"):
        env.reset(options={"x": 1})


def test_observation_space_bounds_are_tight_and_hold_every_observation():
    from gymnasium.wrappers.vector import DtypeObservation

    from smear_env.engine.observation import SLICES

    env = SmearVectorEnv(16, opponents="random", obs_format="flat", target_score=5, seed=0)
    space = env.single_observation_space
    assert space.high[SLICES["target_score"]].tolist() == [5.0]
    assert space.high[SLICES["scores"]].max() == 9.0 and space.low.min() >= -(2**11)
    assert np.zeros(493, dtype=np.float32) in space  # the placeholder frameworks fill in
    obs, info = env.reset()
    rng = np.random.default_rng(1)
    for _ in range(300):
        assert obs in env.observation_space
        obs, *_, info = env.step(random_actions(info["action_mask"], rng))
    d = DtypeObservation(gymnasium.make_vec(ENV_ID, num_envs=2, vectorization_mode="vector_entry_point"),
                         np.float16)
    o, _ = d.reset(seed=0)
    assert o.dtype == np.float16 and o in d.observation_space
    n = SmearVectorEnv(4, obs_format="flat", normalize=True, seed=0)
    raw = SmearVectorEnv(4, obs_format="flat", seed=0)
    a, _ = n.reset()
    b, _ = raw.reset()
    np.testing.assert_allclose(a[:, SLICES["target_score"]], 1.0)
    np.testing.assert_allclose(a[:, SLICES["hand_sizes"]] * 9, b[:, SLICES["hand_sizes"]])
    assert a in n.observation_space and np.abs(n.single_observation_space.high).max() < 2


def test_single_seat_env_takes_agent_specs_and_the_same_bounds():
    from smear_env.agents.heuristic import HeuristicAgent
    from smear_env.gym.single_seat import SmearSingleSeatEnv

    env = SmearSingleSeatEnv(opponents="heuristic", partner="random", target_score=7)
    assert isinstance(env._players[1], HeuristicAgent) and env._players[1] is not env._players[3]
    vec = SmearVectorEnv(2, obs_format="flat", target_score=7)
    np.testing.assert_array_equal(env.observation_space.low, vec.single_observation_space.low)
    np.testing.assert_array_equal(env.observation_space.high, vec.single_observation_space.high)
    obs, _ = SmearSingleSeatEnv(opponents=["random", "heuristic"], normalize=True).reset(seed=0)
    assert obs.max() <= 1.0
    with pytest.raises(ValueError, match="'nope'"):
        SmearSingleSeatEnv(opponents="nope")
