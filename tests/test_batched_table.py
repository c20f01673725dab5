"""The batched table (smear_env.tables.batched_table) means what the single table (smear_env.tables.table)
means: every lane is mirrored by a reference ``Table`` with the same options and deals, given the same
decisions, and rewards, episode ends, truncation and what starts next are compared step by step."""

from __future__ import annotations

import numpy as np
import pytest

from smear_env.agents.base import RandomAgent
from smear_env.agents.batched import BatchedRandomAgent as BatchedRandom
from smear_env.core.config import SmearRules
from smear_env.engine.observation import action_mask, encode_game
from smear_env.engine.vector import lane_deal
from smear_env.tables.batched_table import LEARNER, BatchedTable
from smear_env.tables.table import NEXT_GAME, NEXT_HAND, Table, TableOptions, play, start_agents


class LaneDeals:
    """The deals of game ``game`` of lane ``lane`` of an engine seeded ``seed``, as a table DealSource."""

    def __init__(self, seed: int, lane: int, game: int) -> None:
        self.seed, self.lane, self.game = seed, lane, game
        self.first_dealer = lane_deal(seed, lane, game, 0)[0]

    def deal(self, i: int):
        return lane_deal(self.seed, self.lane, self.game, i)[1:]


OPTION_CASES = [
    TableOptions(episode="game", reward="win", max_cycles=None, max_hands=3),
    TableOptions(episode="game", reward="score", max_cycles=None, max_hands=4, score_scale=0.25,
                 win_bonus=2.0),
    TableOptions(episode="hand", reward="score", max_cycles=70, max_hands=None),
    TableOptions(episode="hand", reward="win", max_cycles=45, max_hands=3),
    TableOptions(episode="game", reward="score", max_cycles=50, max_hands=None, win_bonus=1.0),
]
RULES = [SmearRules(target_score=4), SmearRules(kitty_size=0, target_score=3, all_pass="dealer_must_bid"),
         SmearRules(kitty_size=2, target_score=2, win_requires_bid=True)]


@pytest.mark.parametrize("case", range(len(OPTION_CASES)))
def test_self_play_lanes_follow_the_reference_table(case: int) -> None:
    """Four learner seats (one engine step per call): the batched table's rewards, terminated, truncated
    and new games equal the reference Table's for each lane, under each option set."""
    opts, rules = OPTION_CASES[case], RULES[case % len(RULES)]
    n, seed = 6, 20 + case
    bt = BatchedTable(n, [LEARNER], [0, 0, 0, 0], rules, opts, seed=seed)
    obs, mask, info = bt.reset()
    tables, games = [], [0] * n
    for lane in range(n):
        t = Table(rules, opts)
        t.new_game(deals=LaneDeals(seed, lane, 0))
        tables.append(t)
    rng = np.random.default_rng(case)
    ends = {"terminated": 0, "truncated": 0, "hand": 0}
    for _ in range(400):
        for lane, t in enumerate(tables):
            g = t.game
            assert info["seat"][lane] == g.to_act
            np.testing.assert_array_equal(obs[lane], encode_game(g, g.to_act))
            np.testing.assert_array_equal(mask[lane], action_mask(g, g.to_act).astype(bool))
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in mask])
        obs, mask, rewards, term, trunc, info = bt.step(actions)
        for lane, t in enumerate(tables):
            st = t.apply(int(actions[lane]))
            assert rewards[lane].tolist() == pytest.approx(list(st.rewards), abs=1e-6), lane
            assert (term[lane], trunc[lane]) == (st.terminated, st.truncated), lane
            if st.done:
                assert info["episode_steps"][lane] == t.episode_steps
                ends["terminated" if st.terminated else "truncated"] += 1
                if st.next == NEXT_HAND:
                    ends["hand"] += 1
                    assert t.next_episode()
                else:
                    assert st.next == NEXT_GAME
                    games[lane] += 1
                    t.new_game(deals=LaneDeals(seed, lane, games[lane]))
    assert ends["terminated"] > 0
    if opts.max_cycles is not None or opts.max_hands is not None:
        assert ends["truncated"] > 0
    if opts.episode == "hand":
        assert ends["hand"] > 0
    assert bt.vg.game_index.tolist() == games


def _lowest(mask_row: np.ndarray) -> int:
    return int(np.flatnonzero(mask_row)[0])


@pytest.mark.parametrize("learners", [(0,), (1, 3)])
def test_fixed_agents_play_until_a_learner_is_to_act(learners: tuple[int, ...]) -> None:
    """One learner seat (or a team) against batched random agents: each call returns when a learner is to
    act; the rewards and observations equal a reference Table where RandomAgents with the same
    generators play the other seats and the learner plays the lowest legal action."""
    rules, opts = SmearRules(target_score=3), TableOptions(episode="hand", reward="score", max_cycles=None)
    n, seed = 5, 3
    seating = [0 if s in learners else 1 for s in range(4)]
    bt = BatchedTable(n, [LEARNER, BatchedRandom()], seating, rules, opts, seed=seed)
    obs, mask, info = bt.reset()
    refs = []
    for lane in range(n):
        t = Table(rules, opts)
        t.new_game(deals=LaneDeals(seed, lane, 0))
        agents = {s: RandomAgent() for s in range(4) if s not in learners}
        start_agents(agents, rules, {s: np.random.default_rng([seed, lane, 0, s]) for s in agents})
        refs.append([t, agents, 0, [0.0] * 4])
    for ref in refs:
        play(ref[0], ref[1])
    steps = 0
    for _ in range(150):
        for lane, (t, _agents, _g, _r) in enumerate(refs):
            assert t.game.to_act in learners and info["seat"][lane] == t.game.to_act
            np.testing.assert_array_equal(obs[lane], encode_game(t.game, t.game.to_act))
        actions = np.array([_lowest(m) for m in mask])
        obs, mask, rewards, term, trunc, info = bt.step(actions)
        steps += 1
        for lane, ref in enumerate(refs):
            t, agents = ref[0], ref[1]
            total = np.zeros(4)
            done = False

            def add(st, total=total):
                total[:] += st.rewards

            add(t.apply(int(actions[lane])))
            while True:
                total += play(t, agents)
                if t.done:
                    done = True
                    assert (term[lane], trunc[lane]) == (t.terminated, t.truncated)
                    if t.next == NEXT_HAND:
                        t.next_episode()
                    else:
                        ref[2] += 1
                        t.new_game(deals=LaneDeals(seed, lane, ref[2]))
                        start_agents(agents, rules,
                                     {s: np.random.default_rng([seed, lane, ref[2], s]) for s in agents})
                    continue
                break
            assert done == bool(term[lane] or trunc[lane])
            np.testing.assert_allclose(rewards[lane], total, atol=1e-6)
    assert sum(r[2] for r in refs) > 0  # games finished and new ones started


def test_no_learner_lane_is_refused_by_the_learner_api_and_run_agents_plays_it() -> None:
    rules = SmearRules(target_score=2)
    finished = []

    def idle_after_first(table, lanes):
        if table.vg.game_index[lanes].max() > 0:
            table.set_seating(lanes, np.full((len(lanes), 4), -1))

    bt = BatchedTable(4, [BatchedRandom()], [0, 0, 0, 0], rules, TableOptions(max_cycles=None, max_hands=50),
                      on_new_games=idle_after_first, on_step=lambda t, st: finished.extend(
                          np.flatnonzero(st.new_game).tolist()))
    with pytest.raises(ValueError, match="seats no learner"):
        bt.reset()
    bt.run_agents()
    assert sorted(finished) == [0, 1, 2, 3] and not bt.active.any()


def test_bad_players_and_seating() -> None:
    with pytest.raises(TypeError, match="players\\[0\\]"):
        BatchedTable(2, [object()], [0, 0, 0, 0])
    with pytest.raises(ValueError, match="player index 1"):
        BatchedTable(2, [LEARNER], [0, 1, 0, 1])
    with pytest.raises(ValueError, match="seating must be"):
        BatchedTable(2, [LEARNER], [0.0, 0, 0, 0])
    with pytest.raises(ValueError, match="seed"):
        BatchedTable(2, [LEARNER], [0, 0, 0, 0], seed=2**64)
