"""The table layer: one game loop, one reward scale, one meaning of ``episode`` for every front end."""

from __future__ import annotations

import argparse

import numpy as np
import pytest

from smear_env.agents.base import RandomAgent
from smear_env.agents.heuristic import HeuristicAgent
from smear_env.core.config import RuleOptionError, SmearRules
from smear_env.engine.game import GameStateError
from smear_env.envs.aec import raw_env
from smear_env.gym.single_seat import SmearSingleSeatEnv
from smear_env.tables.table import (
    Lockstep,
    Table,
    TableOptions,
    add_rule_arguments,
    parse_options,
    play,
    rules_from_args,
    start_agents,
)


def _heuristics(rules: SmearRules, seed: int) -> list[HeuristicAgent]:
    agents = [HeuristicAgent(rules) for _ in range(4)]
    start_agents(agents, rules, [np.random.default_rng([seed, s]) for s in range(4)])
    return agents


def test_score_reward_is_raw_points_and_win_reward_is_plus_minus_one():
    rules = SmearRules(target_score=7)
    for reward in ("score", "win"):
        t = Table(rules, TableOptions(reward=reward))
        t.new_game(3)
        agents = _heuristics(rules, 3)
        steps = []
        play(t, agents, on_step=steps.append)
        game = t.game
        assert t.terminated and game.is_over
        scored = [s for s in steps if s.hand is not None and s.hand.scored]
        assert len(scored) == sum(1 for h in game.history if not h.get("thrown_in"))
        if reward == "score":
            for st in scored:
                d = st.hand.score_change[0] - st.hand.score_change[1]
                assert st.rewards == (d, -d, d, -d)  # raw points, partners equal, teams opposite
            total = sum(st.rewards[0] for st in steps)
            assert total == sum(h["score_change"][0] - h["score_change"][1] for h in game.history
                                if "score_change" in h)
        else:
            nonzero = [st for st in steps if any(st.rewards)]
            assert len(nonzero) == 1 and nonzero[0].terminated
            w = 1.0 if game.winner == 0 else -1.0
            assert nonzero[0].rewards == (w, -w, w, -w)


def test_truncated_episode_gives_no_win_reward_and_a_new_game_next():
    t = Table(SmearRules(), TableOptions(reward="win", max_cycles=5))
    t.new_game(0)
    total = play(t, [RandomAgent() for _ in range(4)])
    assert t.truncated and not t.terminated and total == (0.0, 0.0, 0.0, 0.0)
    assert t.next == "game" and not t.next_episode()
    with pytest.raises(GameStateError):
        t.apply(t.game.legal_actions()[0])


def test_hand_episode_carries_the_game_on_in_the_table():
    rules = SmearRules(target_score=5)
    t = Table(rules, TableOptions(episode="hand", reward="score"))
    t.new_game(1)
    agents = _heuristics(rules, 1)
    hands = 0
    while True:
        play(t, agents)
        assert t.terminated
        hands += 1
        if t.next == "game":
            assert t.game.is_over
            break
        assert t.next == "hand"
        scores = list(t.game.scores)
        number = t.game.hand_number
        assert t.next_episode()
        assert t.game.scores == scores and t.game.hand_number == number + 1
    assert hands >= 2


def test_pettingzoo_hand_episode_continues_the_game_until_it_is_over():
    env = raw_env(episode="hand", reward="score", target_score=5)
    env.reset(seed=4)
    rng = np.random.default_rng(0)
    numbers, scores = [], []
    for _ in range(40):
        for agent in env.agent_iter(max_iter=2000):
            obs, _r, term, trunc, _ = env.last()
            if term or trunc:
                env.step(None)
                continue
            legal = np.flatnonzero(obs["action_mask"])
            env.step(int(legal[rng.integers(legal.size)]))
            del agent
        game = env.unwrapped.game
        numbers.append(game.hand_number)
        scores.append(tuple(game.scores))
        if game.is_over:
            break
        env.reset()
    assert game.is_over and len(numbers) >= 2
    assert scores[0] != (0, 0) or scores[1] != (0, 0)
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)
    env.reset()  # the game is over: a new one
    assert env.unwrapped.game.scores == [0, 0] and env.unwrapped.game.hand_number == 0
    env.reset(options={"new_game": True})
    assert env.unwrapped.game.hand_number == 0


def test_single_seat_hand_episode_continues_the_game_with_the_same_seat():
    env = SmearSingleSeatEnv(RandomAgent(), episode="hand", reward="score", target_score=5)
    env.reset(seed=2)
    seat = env.seat
    rng = np.random.default_rng(1)
    total = 0.0
    for _ in range(60):
        term = trunc = False
        while not (term or trunc):
            legal = np.flatnonzero(env.action_masks())
            _, r, term, trunc, info = env.step(int(legal[rng.integers(legal.size)]))
            total += r
        if env.game.is_over:
            break
        before = env.game.hand_number
        _, info = env.reset()
        assert env.seat == seat and env.game.hand_number == before + 1
    assert env.game.is_over
    g = env.game
    t = seat & 1
    assert total == sum(h["score_change"][t] - h["score_change"][1 - t] for h in g.history
                        if "score_change" in h)


def test_parse_options_names_bad_keys_and_values():
    rules, opts, extra = parse_options({"kitty_size": 0, "episode": "hand", "render_mode": "ansi"},
                                       {"render_mode": None})
    assert rules.kitty_size == 0 and opts.episode == "hand" and extra == {"render_mode": "ansi"}
    with pytest.raises(RuleOptionError, match="unknown smear_v0 option 'kity_size'.*kitty_size"):
        parse_options({"kity_size": 0})
    with pytest.raises(RuleOptionError, match="episode='round'.*'game', 'hand'"):
        parse_options({"episode": "round"})
    with pytest.raises(RuleOptionError, match="max_cycles"):
        parse_options({"max_cycles": 0})


def test_rule_flags_are_derived_from_every_rules_field():
    ap = argparse.ArgumentParser()
    add_rule_arguments(ap)
    assert rules_from_args(ap.parse_args([])) == SmearRules()
    flags = {a.dest for a in ap._actions}
    assert set(SmearRules.option_names()) <= flags
    args = ap.parse_args(["--kitty-size", "0", "--high-low", "in_play", "--win-requires-bid",
                          "--all-pass", "dealer_must_bid", "--target-score", "21"])
    r = rules_from_args(args)
    assert r == SmearRules(kitty_size=0, target_score=21, high_low="in_play", all_pass="dealer_must_bid",
                           win_requires_bid=True)
    with pytest.raises(SystemExit):
        ap.parse_args(["--high-low", "bogus"])


def test_lockstep_plays_the_same_games_as_one_table_at_a_time():
    rules = SmearRules(target_score=5)
    seeds = [5, 6, 7]
    solo = []
    for sd in seeds:
        t = Table(rules)
        t.new_game(sd)
        play(t, _heuristics(rules, sd))
        solo.append(t.game.to_record())
    tables = [Table(rules) for _ in seeds]
    seats: list[list] = []
    for t, sd in zip(tables, seeds, strict=True):
        t.new_game(sd)
        a = _heuristics(rules, sd)
        seats.append([a[0], "k", a[2], "k"])  # odd seats: a batched "policy" key
    lock = Lockstep(tables, seats)
    policies = {i: _heuristics(rules, sd) for i, sd in enumerate(seeds)}
    while True:
        pending = lock.pending()
        if not pending:
            break
        idx = pending["k"]
        obs, mask = lock.observations(idx)
        assert obs.shape == (len(idx), 493) and mask.shape == (len(idx), 72)
        acts = [policies[i][tables[i].to_act].act({"observation": o, "action_mask": m})
                for i, o, m in zip(idx, obs, mask, strict=True)]
        lock.apply(idx, acts)
    assert [t.game.to_record() for t in tables] == solo


def test_lockstep_rejects_float_and_bool_actions_without_moving():
    """Issue 12 (noticed with item 3): a batch of float or bool actions is an error, not rounded to ids;
    the table is unchanged. Integer arrays (what a batched policy returns) are accepted."""
    from smear_env.engine.game import IllegalActionError

    rules = SmearRules(target_score=7)
    t = Table(rules)
    t.new_game(5)
    lock = Lockstep([t], [["k"] * 4])
    assert lock.pending() == {"k": [0]}
    legal = t.game.legal_actions()
    before = t.game.to_record()
    for bad in (np.array([float(legal[0])]), [True], np.array([legal[0] + 0.7])):
        with pytest.raises(IllegalActionError, match="not an integer action id"):
            lock.apply([0], bad)
        assert t.game.to_record() == before
    lock.apply([0], np.array([legal[0]], dtype=np.int64))
    assert t.game.to_record() != before
