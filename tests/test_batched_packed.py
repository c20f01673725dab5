"""The packed fast path of the batched agents (act_packed on VectorGame.observe_words / legal bits), the
table's use of it, and the evaluator's BLAS thread limit."""

from __future__ import annotations

import numpy as np
import pytest

from smear_env.agents.batched import BatchedRandomAgent, select_bit
from smear_env.agents.registry import make_batched_agent
from smear_env.core.actions import NUM_ACTIONS
from smear_env.core.config import SmearRules
from smear_env.engine.observation import HAND_SIZES, OBS_SIZE, SCORES, TARGET
from smear_env.engine.vector import VectorGame
from smear_env.evaluation import batched as eb
from smear_env.tables.batched_table import LEARNER, BatchedTable
from smear_env.tables.table import TableOptions

RULES = [
    SmearRules(),
    SmearRules(kitty_size=0, high_low="in_play"),
    SmearRules(kitty_size=2, all_pass="dealer_must_bid", target_score=7),
]


def _packed(game: VectorGame) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    bits, base = game.legal_bits()
    return game.observe_words(), bits.copy(), base.copy()


def test_observe_words_unpack_to_the_observation_bits():
    """observe_words is observe's 0/1 part packed: unpacked it equals observe on every column but the raw
    terms (scores, target, hand sizes), where its bits are 0."""
    raw = np.zeros(OBS_SIZE, dtype=bool)
    raw[[SCORES, SCORES + 1, TARGET]] = True
    raw[HAND_SIZES:HAND_SIZES + 4] = True
    game = VectorGame(64, SmearRules(kitty_size=2), seed=3)
    rng = np.random.default_rng(0)
    for _ in range(150):
        obs = game.observe()
        words = game.observe_words()
        assert words.shape == (64, 8) and words.dtype == np.int64
        bits = np.unpackbits(words.view(np.uint8), axis=1, count=OBS_SIZE, bitorder="little")
        assert (bits[:, ~raw] == obs[:, ~raw]).all()
        assert (bits[:, raw] == 0).all()
        game.step(game.random_actions(rng))


@pytest.mark.parametrize("rules", RULES)
@pytest.mark.parametrize("spec", ["heuristic", "random"])
def test_act_packed_equals_act_batch_on_vector_games(spec, rules):
    """Every decision of 128 lanes over 300 steps: act_packed on the packed rows gives act_batch's action
    (random: two agents whose slots get equal generators, so the draws must match one for one)."""
    lanes = 128
    game = VectorGame(lanes, rules, seed=7)
    a, b = make_batched_agent(spec, rules), make_batched_agent(spec, rules)
    for lane in range(lanes):
        a.start_game(lane, lane % 4, rules, np.random.default_rng([1, lane]))
        b.start_game(lane, lane % 4, rules, np.random.default_rng([1, lane]))
    slots = np.arange(lanes)
    phases = set()
    for _ in range(300):
        want = a.act_batch(game.observe(), game.legal_mask(), slots)
        words, legal, base = _packed(game)
        got = b.act_packed(words, legal, base, slots)
        assert got.dtype == np.int64
        bad = np.flatnonzero(got != want)
        assert bad.size == 0, f"{spec}: lanes {bad[:5].tolist()} got {got[bad[:5]]} want {want[bad[:5]]}"
        phases.update(game.phase.tolist())
        game.step(want)
    assert len(phases) == (2 if rules.kitty_size == 0 else 4)  # kitty 0: no trump or discard phase


def test_batched_random_skips_the_generator_for_a_forced_action():
    """A row with one legal action takes it without calling its generator (integers(1) draws nothing), so
    the generator is where RandomAgent's would be."""
    agent = BatchedRandomAgent()
    g = np.random.default_rng(5)
    agent.start_game(0, 0, SmearRules(), g)
    before = g.bit_generator.state
    assert agent.act_packed(np.zeros((1, 8), np.int64), np.array([1 << 9]), np.array([40]), np.array([0])
                            ).tolist() == [49]
    assert g.bit_generator.state == before
    ref = np.random.default_rng(5)
    ref.integers(1)
    assert ref.bit_generator.state == before


def test_act_packed_errors_name_the_agent_and_the_slot():
    for spec in ("random", "heuristic"):
        agent = make_batched_agent(spec)
        with pytest.raises(ValueError, match=rf"agent '{spec}': slot 3 has not started"):
            agent.act_packed(np.zeros((1, 8), np.int64), np.array([3]), np.array([0]), np.array([3]))
        agent.start_game(3, 0, SmearRules(), np.random.default_rng(0))
        with pytest.raises(ValueError, match=rf"agent '{spec}': rows \[0\].*no legal action"):
            agent.act_packed(np.zeros((1, 8), np.int64), np.array([0]), np.array([0]), np.array([3]))


def test_select_bit_is_the_rth_set_bit():
    rng = np.random.default_rng(2)
    bits = rng.integers(1, 1 << 32, size=2000)
    r = np.array([rng.integers(int(b).bit_count()) for b in bits.tolist()])
    want = [[i for i in range(32) if b >> i & 1][k] for b, k in zip(bits.tolist(), r.tolist(), strict=True)]
    assert select_bit(bits, r).tolist() == want


class _ObsOnly:
    """A batched agent without act_packed that records what the table gives it."""

    name = "obs-only"
    vectorised = True

    def __init__(self) -> None:
        self.inner = make_batched_agent("heuristic")
        self.seen = 0

    def start_game(self, slot, seat, rules, rng):
        self.inner.start_game(slot, seat, rules, rng)

    def act_batch(self, obs, mask, slots):
        assert obs.shape == (slots.size, OBS_SIZE) and mask.shape == (slots.size, NUM_ACTIONS)
        self.seen += slots.size
        return self.inner.act_batch(obs, mask, slots)

    def close(self):
        pass


def test_table_mixes_packed_and_float_agents_with_the_same_games():
    """A table seating a packed agent (heuristic) and a float-row agent (the heuristic behind act_batch only)
    plays exactly the games of two packed heuristics: the same final scores in every lane."""
    rules = SmearRules()
    opts = TableOptions(max_cycles=None, max_hands=12)
    ends = []
    for second in ("packed", "float"):
        other = make_batched_agent("heuristic") if second == "packed" else _ObsOnly()
        finals: dict[int, list[int]] = {}

        def on_step(table, st, finals=finals):
            for lane in np.flatnonzero(st.new_game).tolist():
                finals[lane] = st.result.scores[lane].tolist()

        def one_game(table, lanes):  # each lane plays one game, then idles
            done = table.vg.game_index[lanes] >= 1
            table.set_seating(lanes[done], np.full((int(done.sum()), 4), -1))

        table = BatchedTable(32, [make_batched_agent("heuristic"), other], [0, 1, 0, 1], rules, opts, seed=4,
                             on_step=on_step, on_new_games=one_game)
        table.run_agents()
        ends.append(finals)
        if second == "float":
            assert other.seen > 0
    assert len(ends[0]) == 32 and ends[0] == ends[1]


def test_learner_table_still_gets_float_rows():
    table = BatchedTable(8, [LEARNER, make_batched_agent("random")], [0, 1, 0, 1], SmearRules(), seed=1)
    obs, mask, info = table.reset()
    assert obs.shape == (8, OBS_SIZE) and obs.dtype == np.float32 and mask.dtype == bool
    assert (info["player"] == 0).all()


def test_blas_threads_limits_and_restores_openblas():
    controls = eb._openblas_controls()
    if not controls:
        pytest.skip("no OpenBLAS loaded in this process")
    get = controls[0][0]
    before = get()
    with eb.blas_threads(1):
        assert get() == 1
    assert get() == before
    with eb.blas_threads(None):
        assert get() == before


def test_batched_random_draws_are_generator_integers_with_rejections():
    """The draws equal Generator.integers(count) one for one, and leave each generator in its state,
    including counts near 2**31 where Lemire's rejection step redraws about half the time."""
    agent = BatchedRandomAgent()
    gens = [np.random.default_rng(s) for s in range(16)]
    refs = [np.random.default_rng(s) for s in range(16)]
    for slot, g in enumerate(gens):
        agent.start_game(slot, 0, SmearRules(), g)
    pick = np.random.default_rng(99)
    slots = np.arange(16)
    for step in range(200):
        counts = pick.integers(1, 73, size=16) if step % 2 else pick.integers((1 << 31) + 1, 1 << 32, size=16)
        got = agent._draws(slots, counts.astype(np.int64))
        want = [0 if c == 1 else int(r.integers(int(c))) for r, c in zip(refs, counts.tolist(), strict=True)]
        assert got.tolist() == want
    assert all(g.bit_generator.state == r.bit_generator.state for g, r in zip(gens, refs, strict=True))


def test_worker_blocks_split_only_when_each_block_fills_its_table():
    """Two blocks per worker only when each still has 8 * lanes games; always contiguous and complete."""
    assert eb.blocks(10000, 2) == [(0, 5000), (5000, 5000)]  # 20,000 games: one 1,024-lane block a worker
    assert eb.blocks(20000, 2) == [(0, 5000), (5000, 5000), (10000, 5000), (15000, 5000)]
    assert eb.blocks(20000, 2, lanes=4096) == [(0, 10000), (10000, 10000)]
    assert eb.blocks(3, 4) == [(0, 1), (1, 1), (2, 1)]
    for n, w in ((1, 1), (7, 3), (100000, 5)):
        parts = eb.blocks(n, w)
        assert parts[0][0] == 0 and sum(k for _, k in parts) == n
        assert all(a + k == b for (a, k), (b, _) in zip(parts, parts[1:], strict=False))


def test_worker_pool_workers_run_one_blas_thread():
    """The training and benchmark pools (expert iteration, advantage values, imitation data) start their
    workers with one BLAS thread each: more would spin against the other workers on the same cores."""
    if not eb.blas_thread_counts():
        pytest.skip("no OpenBLAS loaded in this process")
    with eb.worker_pool(2) as pool:
        got = [pool.apply(eb.blas_thread_counts) for _ in range(2)]
    assert all(counts and set(counts) == {1} for counts in got)
