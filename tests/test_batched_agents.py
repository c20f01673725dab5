"""Batched agents (smear_env.agents.batched): each row's action equals the per-seat agent's."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from smear_env.agents import make_agent
from smear_env.agents.base import RandomAgent
from smear_env.agents.batched import BatchedCheckpointAgent, BatchedRandomAgent, PerSlotAgent
from smear_env.agents.checkpoint import prefixed, read_checkpoint
from smear_env.agents.registry import can_vectorise, make_batched_agent
from smear_env.agents.shipped import shipped_path
from smear_env.core.actions import NUM_ACTIONS
from smear_env.core.config import SmearRules
from smear_env.engine.observation import OBS_SIZE
from smear_env.engine.vector import VectorGame

RULE_VARIANTS = [
    SmearRules(),
    SmearRules(kitty_size=0, high_low="in_play"),
    SmearRules(kitty_size=1, all_pass="dealer_must_bid", game_point_tie="bidder"),
    SmearRules(kitty_size=2, high_low="in_play", all_pass="dealer_must_bid", target_score=7),
]


def _compare_on_games(spec: str, rules: SmearRules, lanes: int, steps: int, seed: int,
                      driver: str = "random") -> int:
    """Drive a VectorGame `steps` steps; at every step the batched agent (slot = lane) and one per-seat
    agent per lane (same seeded generators) decide for every lane; assert they agree. Returns the number
    of decisions compared. `driver`: who moves the game ("random" or "agent")."""
    game = VectorGame(lanes, rules=rules, seed=seed)
    batched = make_batched_agent(spec, rules)
    singles = [make_agent(spec, rules) for _ in range(lanes)]
    for lane in range(lanes):
        batched.start_game(lane, lane % 4, rules, np.random.default_rng([seed, lane]))
        singles[lane].start_game(lane % 4, rules, np.random.default_rng([seed, lane]))
    move = np.random.default_rng(seed + 1)
    slots = np.arange(lanes)
    for _ in range(steps):
        obs, mask = game.observe(), game.legal_mask()
        got = batched.act_batch(obs, mask, slots)
        want = [singles[i].act({"observation": obs[i], "action_mask": mask[i].astype(np.int8)})
                for i in range(lanes)]
        assert got.dtype == np.int64 and got.shape == (lanes,)
        bad = np.flatnonzero(got != np.array(want))
        assert bad.size == 0, f"{spec}: lanes {bad[:5].tolist()} got {got[bad[:5]]} want {want}"
        game.step(got if driver == "agent" else game.random_actions(move))
    batched.close()
    return lanes * steps


# ------------------------------------------------------------------------------------------------ random
@pytest.mark.parametrize("rules", RULE_VARIANTS[:2])
def test_batched_random_draws_as_random_agent_per_slot(rules):
    assert _compare_on_games("random", rules, lanes=64, steps=120, seed=5, driver="agent") == 64 * 120


def test_batched_random_draws_in_row_order_from_each_slot_generator():
    """Two rows of one batch in different slots use their own generators; a slot's generator advances one
    draw per decision, as RandomAgent.act's does."""
    agent = BatchedRandomAgent()
    ga, gb = np.random.default_rng(1), np.random.default_rng(2)
    agent.start_game(10, 0, SmearRules(), ga)
    agent.start_game(3, 1, SmearRules(), gb)
    mask = np.zeros((2, NUM_ACTIONS), dtype=bool)
    mask[0, [8, 9, 20, 33]] = True
    mask[1, 40:72] = True
    obs = np.zeros((2, OBS_SIZE), dtype=np.float32)
    got = agent.act_batch(obs, mask, np.array([10, 3]))
    ra, rb = np.random.default_rng(1), np.random.default_rng(2)
    assert got.tolist() == [[8, 9, 20, 33][ra.integers(4)], 40 + int(rb.integers(32))]
    assert ga.bit_generator.state == ra.bit_generator.state
    assert gb.bit_generator.state == rb.bit_generator.state


def test_batched_random_reads_int8_masks():
    agent = BatchedRandomAgent()
    agent.start_game(0, 0, SmearRules(), np.random.default_rng(0))
    mask = np.zeros((1, NUM_ACTIONS), dtype=np.int8)
    mask[0, 5] = 1
    assert agent.act_batch(np.zeros((1, OBS_SIZE), np.float32), mask, np.array([0])).tolist() == [5]


# ------------------------------------------------------------------------------------------------ checkpoints
@pytest.mark.parametrize("name", ["default", "scratch"])
def test_batched_checkpoint_equals_checkpoint_agent_row_by_row(name):
    assert _compare_on_games(name, SmearRules(), lanes=128, steps=40, seed=11) == 128 * 40


def test_batched_checkpoint_recomputes_near_ties_alone():
    """A greedy row whose two best legal logits are within the tolerance is recomputed as the per-seat agent
    does (the batched product rounds differently); with a huge tolerance every row is, and the actions are
    still the per-seat agent's."""
    rules = SmearRules()
    agent = BatchedCheckpointAgent.from_checkpoint(str(shipped_path("default")), rules, name="default")
    agent.tie_tolerance = 1e9
    single = make_agent("default", rules)
    game = VectorGame(32, seed=2)
    for lane in range(32):
        agent.start_game(lane, 0, rules, np.random.default_rng(lane))
    obs, mask = game.observe(), game.legal_mask()
    got = agent.act_batch(obs, mask, np.arange(32))
    assert agent.rows_recomputed == int((mask.sum(axis=1) >= 1).sum()) == 32
    assert got.tolist() == [single.act({"observation": obs[i], "action_mask": mask[i]}) for i in range(32)]


def test_batched_checkpoint_from_weights_plays_as_the_checkpoint():
    """A training snapshot (in-memory weights + network metadata) seats like the checkpoint it came from,
    and later changes to the trainer's arrays do not reach it."""
    tensors, meta = read_checkpoint(shipped_path("scratch"))
    weights = prefixed(tensors, "policy.")
    snap = BatchedCheckpointAgent.from_weights(weights, meta["network"], name="snap-1")
    assert snap.name == "snap-1" and snap.vectorised
    weights["pi_head.bias"][:] = 0.0  # the trainer keeps training
    single = make_agent("scratch")
    game = VectorGame(128, seed=4)
    for lane in range(128):
        snap.start_game(lane, 0, SmearRules(), np.random.default_rng(lane))
    move = np.random.default_rng(0)
    for _ in range(20):
        obs, mask = game.observe(), game.legal_mask()
        got = snap.act_batch(obs, mask, np.arange(128))
        want = [single.act({"observation": obs[i], "action_mask": mask[i]}) for i in range(128)]
        assert got.tolist() == want
        game.step(game.random_actions(move))


def test_batched_checkpoint_nan_logit_is_an_error_naming_the_checkpoint():
    agent = make_batched_agent("default")
    w, b = agent.policy.head
    agent.policy.head = (w, np.full_like(b, np.nan))
    agent.start_game(0, 0, SmearRules(), np.random.default_rng(0))
    game = VectorGame(1, seed=0)
    with pytest.raises(ValueError, match=r"smear_v0_default.*NaN or infinite logits"):
        agent.act_batch(game.observe(), game.legal_mask(), np.array([0]))


def test_batched_checkpoint_sampling_matches_the_sampling_agent():
    from smear_env.agents.checkpoint import load_agent

    path = str(shipped_path("default"))
    agent = BatchedCheckpointAgent.from_checkpoint(path, greedy=False, temperature=2.0)
    assert not agent.vectorised
    singles = [load_agent(path, greedy=False, temperature=2.0) for _ in range(16)]
    for lane in range(16):
        agent.start_game(lane, 0, SmearRules(), np.random.default_rng(lane))
        singles[lane].start_game(0, SmearRules(), np.random.default_rng(lane))
    game = VectorGame(16, seed=8)
    for _ in range(30):
        obs, mask = game.observe(), game.legal_mask()
        got = agent.act_batch(obs, mask, np.arange(16))
        assert got.tolist() == [singles[i].act({"observation": obs[i], "action_mask": mask[i]})
                                for i in range(16)]
        game.step(got)


# ------------------------------------------------------------------------------------------------ fallback
class _Memo:
    """A per-seat agent with memory: plays its n-th legal action, n = decisions so far this game."""

    name = "memo"

    def __init__(self) -> None:
        self.calls = 0
        self.closed = 0

    def start_game(self, seat, rules, rng):
        self.calls = 0

    def act(self, observation):
        legal = np.flatnonzero(observation["action_mask"])
        self.calls += 1
        return int(legal[(self.calls - 1) % legal.size])

    def close(self):
        self.closed += 1


def test_per_slot_agent_start_game_resets_the_slot_memory():
    agent = PerSlotAgent(_Memo, name="memo")
    rules = SmearRules()
    agent.start_game(7, 0, rules, np.random.default_rng(0))
    mask = np.zeros((1, NUM_ACTIONS), dtype=bool)
    mask[0, 40:44] = True
    obs = np.zeros((1, OBS_SIZE), np.float32)
    assert [int(agent.act_batch(obs, mask, np.array([7]))[0]) for _ in range(3)] == [40, 41, 42]
    agent.start_game(7, 0, rules, np.random.default_rng(0))
    assert int(agent.act_batch(obs, mask, np.array([7]))[0]) == 40
    assert len(agent.agents) == 1  # the slot's agent is reused, not rebuilt


def test_per_slot_agent_close_closes_every_slot_agent_once_and_is_idempotent():
    agent = PerSlotAgent(_Memo, name="memo")
    for slot in range(3):
        agent.start_game(slot, slot, SmearRules(), np.random.default_rng(slot))
    memos = list(agent.agents.values())
    agent.close()
    agent.close()
    assert [m.closed for m in memos] == [1, 1, 1]
    with pytest.raises(ValueError, match="closed"):
        agent.start_game(0, 0, SmearRules(), np.random.default_rng(0))


def test_per_slot_pimc_equals_pimc_agent():
    spec = "pimc:samples=2,bid_samples=2,trump_samples=1,budget_ms=none,node_cap=2000"
    _compare_on_games(spec, SmearRules(), lanes=4, steps=12, seed=3)


# ---------------------------------------------------------------------------------------- registry / errors
def test_can_vectorise_by_spec(tmp_path):
    for spec in ("random", "heuristic", "default", "scratch", " random ", str(shipped_path("default"))):
        assert can_vectorise(spec), spec
    for spec in ("pimc", "pimc:samples=4", "cmd:python bot.py", "nonsense", "default:x", 3):
        assert not can_vectorise(spec), spec


def test_make_batched_agent_kinds_and_names():
    assert isinstance(make_batched_agent("random"), BatchedRandomAgent)
    ck = make_batched_agent("default")
    assert isinstance(ck, BatchedCheckpointAgent) and ck.name == "default" and ck.vectorised
    pimc = make_batched_agent("pimc:samples=2")
    assert isinstance(pimc, PerSlotAgent) and not pimc.vectorised and pimc.name == "pimc:samples=2"
    assert make_batched_agent("heuristic").name == "heuristic"


@pytest.mark.parametrize("spec,err", [
    ("nonsense", ValueError), ("pimc:bogus=1", ValueError), ("missing.safetensors", FileNotFoundError),
    ("default:x", ValueError),
])
def test_make_batched_agent_rejects_what_make_agent_rejects(spec, err):
    with pytest.raises(err):
        make_agent(spec)
    with pytest.raises(err):
        make_batched_agent(spec)


def test_make_batched_agent_checks_checkpoint_rules():
    from smear_env.agents.checkpoint import CheckpointError

    with pytest.raises(CheckpointError, match="kitty_size"):
        make_batched_agent("default", SmearRules(kitty_size=2))


@pytest.mark.parametrize("spec", ["random", "heuristic", "default", "pimc:samples=2"])
def test_act_batch_errors_name_the_agent(spec):
    agent = make_batched_agent(spec)
    obs = np.zeros((2, OBS_SIZE), np.float32)
    mask = np.zeros((2, NUM_ACTIONS), dtype=bool)
    mask[:, 40] = True
    with pytest.raises(ValueError, match=rf"{spec!r}.*slot 0 has not started"):
        agent.act_batch(obs, mask, np.array([0, 1]))
    for slot in (0, 1):
        agent.start_game(slot, 0, SmearRules(), np.random.default_rng(slot))
    empty = mask.copy()
    empty[1] = False
    with pytest.raises(ValueError, match=rf"{spec!r}: rows \[1\] \(slots \[1\]\) have no legal action"):
        agent.act_batch(obs, empty, np.array([0, 1]))
    with pytest.raises(ValueError, match=r"obs must have shape"):
        agent.act_batch(obs[:, :10], mask, np.array([0, 1]))
    with pytest.raises(ValueError, match=r"mask must have shape"):
        agent.act_batch(obs, mask[:1], np.array([0, 1]))
    with pytest.raises(ValueError, match=r"slots must be"):
        agent.act_batch(obs, mask, np.array([0.0, 1.0]))
    with pytest.raises(ValueError, match=r"seat must be"):
        agent.start_game(0, 4, SmearRules(), np.random.default_rng(0))
    agent.close()
    agent.close()


def test_random_agent_reference_is_unchanged():
    """The per-seat draw the batched random agent reproduces: legal[rng.integers(legal.size)]."""
    a = RandomAgent()
    a.start_game(0, SmearRules(), np.random.default_rng(3))
    mask = np.zeros(NUM_ACTIONS, dtype=np.int8)
    mask[[1, 2, 3]] = 1
    want = [1, 2, 3][np.random.default_rng(3).integers(3)]
    assert a.act({"observation": None, "action_mask": mask}) == want


# ------------------------------------------------------------------------------------------------ heuristic
HEURISTIC_RULES = [
    SmearRules(),
    SmearRules(high_low="in_play"),
    SmearRules(kitty_size=0),
    SmearRules(kitty_size=0, high_low="in_play", all_pass="dealer_must_bid"),
    SmearRules(kitty_size=1, all_pass="dealer_must_bid", game_point_tie="bidder"),
    SmearRules(kitty_size=2, high_low="in_play", win_requires_bid=True, cap_defenders=True, target_score=7),
]


def _decision_kind(obs: np.ndarray, mask: np.ndarray) -> str:
    from smear_env.engine.observation import TRICK_LEADER, TRUMP_

    first = int(np.flatnonzero(mask)[0])
    if first < 4:
        return "bid (stuck)" if not mask[0] else "bid"
    if first < 8:
        return "trump"
    if first < 40:
        return "discard"
    if obs[TRICK_LEADER : TRICK_LEADER + 4].any():
        return "follow"
    return "lead" if obs[TRUMP_ : TRUMP_ + 4].any() else "lead naming trump"


def _heuristic_on_vector_games(rules: SmearRules, driver: str, lanes: int, steps: int, seed: int) -> dict:
    """Batched heuristic vs HeuristicAgent.act on every lane of every step; returns the decisions with
    more than one legal action compared, by kind. (The two run the same rules on their two backends --
    numpy arrays of rows, the Python ints of one row -- so these tests check that the backends agree;
    tests/test_heuristic_recorded.py checks both against recorded decisions.)"""
    from smear_env.agents.heuristic import HeuristicAgent

    game = VectorGame(lanes, rules=rules, seed=seed)
    batched = make_batched_agent("heuristic", rules)
    single = HeuristicAgent(rules)
    gens = [np.random.default_rng([seed, lane]) for lane in range(lanes)]
    for lane in range(lanes):
        batched.start_game(lane, lane % 4, rules, gens[lane])
    single.start_game(0, rules, np.random.default_rng(0))
    before = [g.bit_generator.state for g in gens]
    move = np.random.default_rng(seed)
    kinds: dict[str, int] = {}
    slots = np.arange(lanes)
    for _ in range(steps):
        obs, mask = game.observe(), game.legal_mask()
        got = batched.act_batch(obs, mask, slots)
        want = np.array([single.act({"observation": obs[i], "action_mask": mask[i]}) for i in range(lanes)])
        bad = np.flatnonzero(got != want)
        if bad.size:
            i = bad[0]
            raise AssertionError(f"{rules} {driver}: lane {i} ({_decision_kind(obs[i], mask[i])}) "
                                 f"got {got[i]} want {want[i]}")
        for i in np.flatnonzero(mask.sum(axis=1) > 1).tolist():
            k = _decision_kind(obs[i], mask[i])
            kinds[k] = kinds.get(k, 0) + 1
        if driver == "heuristic":
            game.step(got)
        elif driver == "pass":  # everybody passes when allowed: a stuck dealer every hand (R8)
            game.step(np.where(mask[:, 0], 0, game.random_actions(move)))
        else:
            game.step(game.random_actions(move))
    assert [g.bit_generator.state for g in gens] == before  # the heuristic never draws
    return kinds


def test_batched_heuristic_equals_heuristic_agent_on_vector_games():
    """>= 20,000 decisions with a choice, from random and heuristic play under six rule variants; every
    kind of decision is covered (under dealer_must_bid also the stuck dealer, with kitty 0 the lead that
    names trump)."""
    total: dict[str, int] = {}
    for v, rules in enumerate(HEURISTIC_RULES):
        drivers = ("random", "heuristic") + (("pass",) if rules.all_pass == "dealer_must_bid" else ())
        for driver in drivers:
            kinds = _heuristic_on_vector_games(rules, driver, lanes=96, steps=48, seed=v)
            for k, c in kinds.items():
                total[k] = total.get(k, 0) + c
    assert sum(total.values()) >= 20_000, total
    for kind in ("bid", "bid (stuck)", "trump", "discard", "lead", "lead naming trump", "follow"):
        assert total.get(kind, 0) >= 50, (kind, total)


def _reference_states(rules: SmearRules, games: int, seed: int, driver: str):
    """(obs, mask) of every decision of ``games`` reference-engine games (smear_env.engine.game.Game, observed
    through smear_env.engine.observation.observe), played by the heuristic or at random."""
    from smear_env.agents.heuristic import HeuristicAgent
    from smear_env.engine.game import GAME_OVER, HAND_OVER, Game
    from smear_env.engine.observation import observe

    rng = np.random.default_rng(seed)
    heur = HeuristicAgent(rules)
    heur.start_game(0, rules, rng)
    obs, masks = [], []
    for _ in range(games):
        g = Game(rules, seed=rng)
        for _hand in range(30):  # bounded: a game at target 15 ends well within 30 hands
            while g.phase < HAND_OVER:
                seat = g.current_player
                o = observe(g, seat)
                obs.append(o["observation"])
                masks.append(o["action_mask"])
                legal = g.legal_actions()
                g.apply(heur.act(o) if driver == "heuristic" else legal[rng.integers(len(legal))])
            if g.phase == GAME_OVER:
                break
            g.start_next_hand()
    return np.stack(obs), np.stack(masks)


@pytest.mark.parametrize("rules", [SmearRules(), SmearRules(kitty_size=0, high_low="in_play",
                                                            all_pass="dealer_must_bid")])
def test_batched_heuristic_equals_heuristic_agent_on_reference_games(rules):
    from smear_env.agents.heuristic import HeuristicAgent

    for driver in ("heuristic", "random"):
        obs, mask = _reference_states(rules, games=6, seed=1, driver=driver)
        agent = make_batched_agent("heuristic", rules)
        for slot in range(len(obs)):
            agent.start_game(slot, 0, rules, np.random.default_rng(0))
        single = HeuristicAgent(rules)
        single.start_game(0, rules, np.random.default_rng(0))
        got = agent.act_batch(obs, mask, np.arange(len(obs)))  # int8 masks, as the env gives them
        want = [single.act({"observation": obs[i], "action_mask": mask[i]}) for i in range(len(obs))]
        assert got.tolist() == want


def test_batched_heuristic_slots_play_under_their_own_rules():
    """One batch, rows of slots started under different rules: each row as HeuristicAgent under its
    slot's rules (the rules of start_game, not the constructor's)."""
    from smear_env.agents.heuristic import HeuristicAgent

    variants = [SmearRules(), SmearRules(high_low="in_play"), SmearRules(kitty_size=1)]
    rows_obs, rows_mask, want = [], [], []
    agent = make_batched_agent("heuristic", SmearRules(kitty_size=2))
    slot = 0
    for v, rules in enumerate(variants):
        single = HeuristicAgent(SmearRules(kitty_size=2))
        single.start_game(0, rules, np.random.default_rng(0))
        game = VectorGame(64, rules=rules, seed=v)
        obs, mask = game.observe(), game.legal_mask()  # bidding: where the rules matter most
        for i in range(64):
            agent.start_game(slot, 0, rules, np.random.default_rng(0))
            slot += 1
            want.append(single.act({"observation": obs[i], "action_mask": mask[i]}))
        rows_obs.append(obs)
        rows_mask.append(mask)
    got = agent.act_batch(np.concatenate(rows_obs), np.concatenate(rows_mask), np.arange(slot))
    assert got.tolist() == want
    # the rules differ where it counts: the same bidding rows under the default rules decide otherwise
    assert len(set(map(tuple, np.array(want).reshape(3, 64)))) > 1


OPTIONS = st.fixed_dictionaries({
    "kitty_size": st.sampled_from([0, 1, 2, 3]),
    "target_score": st.integers(1, 15),
    "high_low": st.sampled_from(["ace_seven", "in_play"]),
    "game_point_tie": st.sampled_from(["nobody", "bidder"]),
    "all_pass": st.sampled_from(["redeal", "dealer_must_bid"]),
    "win_requires_bid": st.booleans(),
    "cap_defenders": st.booleans(),
})


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(options=OPTIONS, seed=st.integers(0, 2**32 - 1), steps=st.integers(0, 120),
       greedy_share=st.floats(0.0, 1.0))
def test_batched_heuristic_property_equals_heuristic_agent(options, seed, steps, greedy_share):
    """Any rule options, any point of a game mixing heuristic and random play: the batched heuristic's action
    for every lane is HeuristicAgent's."""
    from smear_env.agents.heuristic import HeuristicAgent

    rules = SmearRules(**options)
    lanes = 16
    game = VectorGame(lanes, rules=rules, seed=seed % 1000)
    agent = make_batched_agent("heuristic", rules)
    for lane in range(lanes):
        agent.start_game(lane, 0, rules, np.random.default_rng(lane))
    single = HeuristicAgent(rules)
    single.start_game(0, rules, np.random.default_rng(0))
    rng = np.random.default_rng(seed)
    slots = np.arange(lanes)
    for _ in range(steps + 1):
        obs, mask = game.observe(), game.legal_mask()
        got = agent.act_batch(obs, mask, slots)
        want = [single.act({"observation": obs[i], "action_mask": mask[i]}) for i in range(lanes)]
        assert got.tolist() == want
        game.step(np.where(rng.random(lanes) < greedy_share, got, game.random_actions(rng)))


@pytest.mark.parametrize("hidden, canonical", [([16, 8], True), ([], True), ([16], False)])
def test_batch_forward_is_the_one_row_forward_pass(hidden: list[int], canonical: bool) -> None:
    """batch_forward (suit permutations folded into per-order weights, rows grouped by suit order) gives
    NumpyPolicy.logits' raw outputs for every row, in the input order, up to float32 rounding; on observations
    of real positions, so that many suit orders share one batch."""
    from smear_env.agents.batched import batch_forward
    from smear_env.agents.checkpoint import NumpyPolicy
    from smear_env.engine.observation import suit_orders

    rng = np.random.default_rng(4)
    sizes = [OBS_SIZE, *hidden, NUM_ACTIONS]
    weights = {"obs_scale": rng.uniform(0.5, 2.0, OBS_SIZE).astype(np.float32)}
    for i in range(len(hidden)):
        weights[f"pi_body.{2 * i}.weight"] = rng.normal(0, 0.2, (sizes[i + 1], sizes[i])).astype(np.float32)
        weights[f"pi_body.{2 * i}.bias"] = rng.normal(0, 0.2, sizes[i + 1]).astype(np.float32)
    weights["pi_head.weight"] = rng.normal(0, 0.2, (NUM_ACTIONS, sizes[-2])).astype(np.float32)
    weights["pi_head.bias"] = rng.normal(0, 0.2, NUM_ACTIONS).astype(np.float32)
    pol = NumpyPolicy(weights, {"hidden_sizes": hidden, "activation": "tanh", "suit_canonical": canonical},
                      where="test")
    vg = VectorGame(64, SmearRules(), seed=4)
    obs = []
    for _ in range(20):
        obs.append(vg.observe())
        vg.step(vg.random_actions(rng))
    obs = np.concatenate(obs)
    assert np.unique(suit_orders(obs)).size >= 8
    want = pol.logits(obs, np.ones((len(obs), NUM_ACTIONS), bool))
    got = batch_forward(pol, obs)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(batch_forward(pol, obs[:1]), want[:1], rtol=1e-5, atol=1e-5)
