"""Loading positions into the batched engine (VectorGame.load_worlds / copy_lanes) and the rollout agent."""

from __future__ import annotations

import numpy as np
import pytest

from smear_env.agents.registry import make_batched_agent, rollout_from_spec
from smear_env.agents.rollout import RolloutAgent, rollout_values, true_deal
from smear_env.core.config import SmearRules
from smear_env.engine.decoding import decode_batch
from smear_env.engine.infoset import HiddenDeal
from smear_env.engine.observation import KITTY
from smear_env.engine.vector import VectorGame
from tests.search_helpers import hidden_twins

N = 64


def _true_deals(vg: VectorGame, seat: np.ndarray) -> list[HiddenDeal]:
    """Each lane's real hidden cards, seats relative to ``seat`` (what a sampled deal would be if it
    guessed right)."""
    return [true_deal(vg, lane, int(seat[lane])) for lane in range(vg.num_games)]


def _replay(rules: SmearRules, seed: int, history: list[np.ndarray]) -> VectorGame:
    vg = VectorGame(N, rules, seed=seed)
    for a in history:
        vg.step(a)
    return vg


@pytest.mark.parametrize("options", [{}, {"kitty_size": 0}, {"kitty_size": 3, "all_pass": "redeal"}])
def test_a_loaded_position_is_the_position_every_seat_sees_and_plays_the_same(options: dict) -> None:
    """Load each lane's position as its seat to act sees it, with the true hidden cards: every seat's
    observation (the kitty of another seat's contract aside, which the observer cannot know) and the legal
    actions are the original's, and the same actions to the end of the hand score the same."""
    rules = SmearRules(**options)
    rng = np.random.default_rng(1)
    src = VectorGame(N, rules, seed=11)
    history: list[np.ndarray] = []
    for step in range(70):
        seat = src.to_act.copy()
        views = decode_batch(src.observe(), src.legal_mask())
        dst = VectorGame(N, rules, seed=99)
        dst.load_worlds(np.arange(N), views, _true_deals(src, seat), rng)
        assert (dst.legal_mask() == src.legal_mask()).all()
        for r in range(4):
            diff = src.observe((seat + r) & 3) != dst.observe(np.full(N, r))
            if r:
                diff[:, KITTY:KITTY + 32] = False
            assert not diff.any(), f"step {step}, relative seat {r}: lanes {np.flatnonzero(diff.any(1))}"
        # the same actions to the end of the hand (lanes still bidding draw their kitty from the shuffled
        # stock, so they are compared only by observation above)
        twin = _replay(rules, 11, history)
        done = src.phase == 0
        got, want = np.zeros(N), np.zeros(N)
        play_rng = np.random.default_rng(step)
        for _ in range(40):
            live = np.flatnonzero(~done)
            if not live.size:
                break
            acts = twin.random_actions(play_rng)[live]
            a, b = twin.step(acts, lanes=live), dst.step(acts, lanes=live)
            ended = (a.hand_over | a.thrown_in)[live]
            assert (ended == (b.hand_over | b.thrown_in)[live]).all()
            fin = live[ended]
            want[fin] = a.reward_score[fin, seat[fin]]
            got[fin] = b.reward_score[fin, 0]
            done[fin] = True
        assert done.all()
        assert (got == want).all()
        a = src.random_actions(rng)
        src.step(a)
        history.append(a)


def test_copy_lanes_repeats_a_position() -> None:
    src = VectorGame(4, SmearRules(), seed=3)
    rng = np.random.default_rng(0)
    for _ in range(13):
        src.step(src.random_actions(rng))
    dst = VectorGame(8, SmearRules(), seed=5)
    dst.copy_lanes(np.arange(8), src, np.array([2, 2, 0, 1, 3, 3, 3, 0]))
    assert (dst.observe() == src.observe()[[2, 2, 0, 1, 3, 3, 3, 0]]).all()
    assert (dst.legal_mask() == src.legal_mask()[[2, 2, 0, 1, 3, 3, 3, 0]]).all()
    with pytest.raises(ValueError, match="source lanes"):
        dst.copy_lanes(np.arange(2), src, np.array([0, 4]))
    with pytest.raises(ValueError, match="same rules"):
        dst.copy_lanes(np.arange(1), VectorGame(1, SmearRules(kitty_size=0)), np.array([0]))


def _bid_positions(n: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    vg = VectorGame(n, SmearRules(), seed=seed)
    return vg.observe(), vg.legal_mask()


def test_rollout_values_are_exact_hand_results_of_each_action() -> None:
    """With one sample per view, an action's value is one played-out hand: an integer score difference
    (at most 4 points and a set contract of 4 apart), the same for the same generators; every legal action
    gets one, no illegal action does."""
    rules = SmearRules()
    obs, mask = _bid_positions(6, 21)
    views = decode_batch(obs, mask)
    h = make_batched_agent("heuristic", rules)
    for s in range(4):
        h.start_game(s, s, rules, np.random.default_rng(0))
    q1 = rollout_values(rules, views, mask, h, h, 1, [np.random.default_rng(i) for i in range(6)])
    q2 = rollout_values(rules, views, mask, h, h, 1, [np.random.default_rng(i) for i in range(6)])
    assert (q1 == q2).all()
    assert np.isfinite(q1[mask]).all() and np.isneginf(q1[~mask]).all()
    assert (q1[mask] == np.round(q1[mask])).all() and (np.abs(q1[mask]) <= 8).all()


def test_the_rollout_agent_sees_no_hidden_card() -> None:
    """Two tables that differ only in cards the player to act cannot see (the same view completed by two
    different sampled deals) give it the same observation, and the agent then makes the same choice with
    the same values: the search starts from the observation, never from the table."""
    rules = SmearRules()
    obs, mask = _bid_positions(16, 8)
    views = decode_batch(obs, mask)
    tables = hidden_twins(views, rules, np.random.default_rng(3))
    picks = []
    for vg in tables:
        agent = rollout_from_spec("rollout:base=heuristic,samples=3", rules)
        for lane in range(16):
            agent.start_game(lane, 0, rules, np.random.default_rng(lane))
        picks.append(agent.act_batch(vg.observe(), vg.legal_mask(), np.arange(16)))
        assert agent.searched == 16
    assert (picks[0] == picks[1]).all()


def test_rollout_agent_searches_only_its_phases_and_bad_options_are_named() -> None:
    rules = SmearRules()
    agent = rollout_from_spec("rollout:base=heuristic,opponent=heuristic,samples=2", rules)
    assert isinstance(agent, RolloutAgent)
    vg = VectorGame(8, rules, seed=4)
    rng = np.random.default_rng(0)
    for slot in range(32):
        agent.start_game(slot, slot % 4, rules, np.random.default_rng(slot))
    searched = 0
    for _ in range(60):
        obs, mask = vg.observe(), vg.legal_mask()
        acts = agent.act_batch(obs, mask, 4 * np.arange(8) + vg.to_act)
        assert mask[np.arange(8), acts].all()
        bids = (vg.phase == 0) & (mask.sum(1) > 1)
        searched += int(bids.sum())
        assert agent.searched == searched
        vg.step(np.where(vg.phase == 0, acts, vg.random_actions(rng)))
    with pytest.raises(ValueError, match="unknown option"):
        rollout_from_spec("rollout:sample=3", rules)
    with pytest.raises(ValueError, match="phases"):
        rollout_from_spec("rollout:base=heuristic,phases=bid+deal", rules)
    with pytest.raises(ValueError, match="samples"):
        rollout_from_spec("rollout:base=heuristic,samples=2.5", rules)
    with pytest.raises(ValueError, match="must not draw"):
        rollout_from_spec("rollout:base=heuristic,opponent=random", rules)
    with pytest.raises(ValueError, match="samples"):
        rollout_from_spec("rollout:base=heuristic,samples=0", rules)


class _Recorder:
    """A batched player that answers each row with ``base + row's first obs column`` and records its calls."""

    def __init__(self, base: int) -> None:
        self.base, self.calls = base, []

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, slots: np.ndarray) -> np.ndarray:
        self.calls.append((obs[:, 0].copy(), slots.copy()))
        return self.base + obs[:, 0].astype(np.int64)


def test_team_actions_asks_each_team_once_for_its_seats_rows_in_order() -> None:
    from smear_env.agents.rollout import team_actions

    seats = np.array([1, 0, 2, 3, 3, 0])
    obs = np.arange(6, dtype=np.float32)[:, None] * np.ones((1, 3), np.float32)
    mask = np.ones((6, 72), bool)
    team, opp = _Recorder(100), _Recorder(200)
    got = team_actions(team, opp, obs, mask, seats)
    np.testing.assert_array_equal(got, [200, 101, 102, 203, 204, 105])
    assert len(team.calls) == len(opp.calls) == 1
    np.testing.assert_array_equal(team.calls[0][0], [1, 2, 5])
    np.testing.assert_array_equal(team.calls[0][1], [0, 2, 0])  # the seat is the slot
    np.testing.assert_array_equal(opp.calls[0][0], [0, 3, 4])
    np.testing.assert_array_equal(opp.calls[0][1], [1, 3, 3])
    # a team with no rows is not asked at all
    team, opp = _Recorder(0), _Recorder(0)
    assert team_actions(team, opp, obs[:2], mask[:2], np.array([1, 3])).tolist() == [0, 1]
    assert team.calls == [] and len(opp.calls) == 1


class _Greedy(_Recorder):
    """A recorder that says it does not draw: forced rows are not asked of it."""

    draws = False


def test_team_actions_skips_forced_rows_only_for_players_that_do_not_draw() -> None:
    from smear_env.agents.rollout import team_actions

    seats = np.array([0, 1, 2, 3])
    obs = np.arange(4, dtype=np.float32)[:, None] * np.ones((1, 3), np.float32)
    mask = np.zeros((4, 72), bool)
    mask[:, 50:52] = True
    mask[1, 51] = mask[2, 51] = False  # rows 1 and 2: one legal action, 50
    team, opp = _Greedy(100), _Recorder(200)
    got = team_actions(team, opp, obs, mask, seats)
    np.testing.assert_array_equal(got, [100, 201, 50, 203])
    np.testing.assert_array_equal(team.calls[0][0], [0])  # the forced row 2 was not asked
    np.testing.assert_array_equal(opp.calls[0][0], [1, 3])  # a player that may draw is asked every row
    team, opp = _Greedy(0), _Greedy(0)
    assert team_actions(team, opp, obs[1:3], mask[1:3], seats[1:3]).tolist() == [50, 50]
    assert team.calls == opp.calls == []


def test_play_out_gives_the_same_values_when_it_moves_the_hands_still_going(monkeypatch) -> None:
    """play_out moves the unfinished hands to a smaller engine once most are over; values, decision counts
    and the winprob-style objective's lanes are exactly those of playing on in the full engine."""
    import smear_env.agents.rollout as ro

    rules = SmearRules()
    h = make_batched_agent("heuristic", rules)
    d = make_batched_agent("default", rules)
    for a in (h, d):
        for s in range(4):
            a.start_game(s, s, rules, np.random.default_rng(0))
    vg = VectorGame(N, rules, seed=3)
    rng = np.random.default_rng(3)
    moves = rng.integers(6, 26, size=N)  # positions at different points of their hands
    for t in range(26):
        go = np.flatnonzero((moves > t) & (vg.hand_number == 0))
        if go.size:
            vg.step(h.act_batch(vg.observe()[go], vg.legal_mask()[go], vg.to_act[go]), lanes=go)
    lanes = np.repeat(np.arange(N), 8)
    mask = vg.legal_mask()
    first = np.array([int(rng.choice(np.flatnonzero(mask[i]))) for i in lanes])
    seen: list[list[tuple[int, int]]] = []

    def objective(engine: VectorGame, res, fin: np.ndarray) -> np.ndarray:
        seen[-1].extend(zip(engine.scores[fin, 0].tolist(), engine.scores[fin, 1].tolist(), strict=True))
        return res.reward_score[fin, 0] * 10.0 + engine.scores[fin, 0]

    got = []
    for limit in (10**9, 16):
        monkeypatch.setattr(ro, "_COMPACT_MIN", limit)
        seen.append([])
        got.append(ro.play_out(vg, lanes, first, d, h, value=objective))
    np.testing.assert_array_equal(got[0][0], got[1][0])
    assert got[0][1] == got[1][1]
    assert sorted(seen[0]) == sorted(seen[1])
