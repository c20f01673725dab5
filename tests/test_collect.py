"""The batched collector (training.collect): the games of the engine itself, on the batched table."""

from __future__ import annotations

import numpy as np

from smear_env.agents.registry import rollout_players
from smear_env.agents.rollout import team_actions
from smear_env.core.config import SmearRules
from smear_env.engine.vector import VectorGame
from training.collect import Collector


def test_a_team_and_an_opponent_play_the_engines_games_with_the_seats_as_slots() -> None:
    """A team against an opponent that draws (random, its slots the seats 0-3) on the collector plays, step
    for step, what the engine of the same seed plays with the same players: the observations, the actions
    and the hand ends (games over and cut off at 200 hands included), so moving a stage's loop onto it
    changes none of its numbers."""
    rules = SmearRules(target_score=5)
    with Collector(16, rules, 9, *rollout_players("heuristic", "random", rules,
                                                  rng=np.random.default_rng(3))) as col:
        team, opp = rollout_players("heuristic", "random", rules, rng=np.random.default_rng(3))
        vg = VectorGame(16, rules, seed=9)
        games = 0
        for _ in range(600):
            obs, mask, seat, actions = col.turn()
            ref_obs, ref_mask = vg.observe(), vg.legal_mask()
            assert np.array_equal(obs, ref_obs) and np.array_equal(mask, ref_mask)
            assert np.array_equal(seat, vg.to_act)
            assert np.array_equal(actions, team_actions(team, opp, ref_obs, ref_mask, vg.to_act.copy()))
            got, ref = col.step(actions).result, vg.step(actions)
            for key in ("hand_over", "thrown_in", "game_over", "truncated", "winner", "scores"):
                assert np.array_equal(getattr(got, key), getattr(ref, key)), key
            games += int(got.game_over.sum())
        assert games > 0
