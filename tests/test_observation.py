"""Observation encoding (R22, R23): layout, exact decode, masks, fast path == view path."""

from __future__ import annotations

import numpy as np
import pytest

from smear_env.core.actions import NUM_ACTIONS, PASS_ACTION
from smear_env.core.config import SmearRules
from smear_env.engine import decoding as D
from smear_env.engine import observation as O
from smear_env.engine.game import GAME_OVER, HAND_OVER, Game
from smear_env.engine.infoset import view_of


def random_states(n_games: int, seed: int, max_steps: int = 250):
    """Yield games at every step of random play under every rule variant (R8 both ways, k = 0..3)."""
    rng = np.random.default_rng(seed)
    variants = [
        SmearRules(kitty_size=k, all_pass=ap, target_score=5)
        for k in range(4)
        for ap in ("redeal", "dealer_must_bid")
    ]
    for i in range(n_games):
        g = Game(variants[i % len(variants)], seed=int(rng.integers(2**31)))
        steps = 0
        while g.phase != GAME_OVER and steps < max_steps:
            if g.phase == HAND_OVER:
                yield g
                g.start_next_hand()
            yield g
            la = g.legal_actions()
            g.apply(la[rng.integers(len(la))])
            steps += 1
        yield g


def test_layout_sizes_and_slices():
    assert O.OBS_SIZE == 493
    assert sum(size for _, size, _ in O.TERMS) == O.OBS_SIZE
    starts = [O.SLICES[name].start for name, _, _ in O.TERMS]
    assert starts == sorted(starts) and starts[0] == 0
    assert O.SLICES["hand"] == slice(21, 53)
    assert O.OBS_LOW.shape == O.OBS_HIGH.shape == (O.OBS_SIZE,)


def test_decode_is_exact_inverse_on_random_states_r22_r23():
    n = 0
    for g in random_states(24, seed=1):
        for s in range(4):
            v = view_of(g, s)
            vec = O.encode(v)
            assert vec.dtype == np.float32 and vec.shape == (O.OBS_SIZE,)
            assert D.decode(vec) == v.relative()
            assert D.decode(vec, O.action_mask(g, s)) == v.relative()
            n += 1
    assert n > 2000


def test_fast_path_equals_view_path():
    for g in random_states(8, seed=2):
        for s in range(4):
            assert np.array_equal(O.encode_game(g, s), O.encode(view_of(g, s)))
            obs = O.observe(g, s)
            assert np.array_equal(obs["observation"], O.encode(view_of(g, s)))


def test_encode_of_relative_view_is_the_same():
    for g in random_states(3, seed=3):
        for s in range(4):
            v = view_of(g, s)
            assert np.array_equal(O.encode(v), O.encode(v.relative()))


def test_action_mask_matches_legal_actions_and_is_zero_off_turn():
    for g in random_states(6, seed=4):
        for s in range(4):
            m = O.action_mask(g, s)
            assert m.dtype == np.int8 and m.shape == (NUM_ACTIONS,)
            if g.current_player == s:
                assert tuple(np.flatnonzero(m)) == g.legal_actions()
            else:
                assert not m.any()


def test_stuck_dealer_bit_r8():
    g = Game(SmearRules(all_pass="dealer_must_bid"), seed=0, dealer=3)
    for _ in range(3):
        g.apply(PASS_ACTION)
    vec = O.encode_game(g, 3)
    assert vec[O.SLICES["stuck"]][0] == 1.0
    assert PASS_ACTION not in D.decode(vec).legal_actions
    assert O.encode_game(g, 1)[O.SLICES["stuck"]][0] == 0.0


def test_known_values_of_a_fresh_game():
    g = Game.from_deal(
        [
            ["AC", "KC", "QC", "JC", "TC", "9C"],
            ["8C", "7C", "AD", "KD", "QD", "JD"],
            ["TD", "9D", "8D", "7D", "AH", "KH"],
            ["QH", "JH", "TH", "9H", "8H", "7H"],
        ],
        ["AS", "KS", "QS", "JS", "TS", "9S", "8S", "7S"],
        dealer=3,
    )
    vec = O.encode_game(g, 1)  # observer seat 1; seat 0 (to act, left of dealer 3) is relative 3
    assert vec[O.SLICES["phase"]].tolist() == [1, 0, 0, 0, 0, 0]
    assert vec[O.SLICES["to_act"]].tolist() == [0, 0, 0, 1]
    assert vec[O.SLICES["dealer"]].tolist() == [0, 0, 1, 0]
    assert vec[O.SLICES["target_score"]].tolist() == [15]
    assert vec[O.SLICES["kitty_size"]].tolist() == [0, 0, 0, 1]
    hand = vec[O.SLICES["hand"]]
    assert np.flatnonzero(hand).tolist() == [0, 1, 12, 13, 14, 15]  # 7C 8C JD QD KD AD
    assert vec[O.SLICES["hand_sizes"]].tolist() == [6, 6, 6, 6]
    assert not vec[O.SLICES["trump"]].any()


def test_decode_batch_equals_decode_row_by_row():
    """decode_batch (the batched engine's heuristic opponents) gives decode's exact views, every observer
    and every phase, legal actions from the mask; off-turn rows get ()."""
    obs, masks = [], []
    for g in random_states(12, seed=5):
        for s in range(4):
            o = O.observe(g, s)
            obs.append(o["observation"])
            masks.append(o["action_mask"])
    obs_a, mask_a = np.stack(obs), np.stack(masks).astype(bool)
    views = D.decode_batch(obs_a, mask_a)
    assert len(views) == len(obs) > 1000
    for vec, m, v in zip(obs, masks, views, strict=False):
        assert v == D.decode(vec, m)
    assert any(v.legal_actions == () for v in views) and any(len(v.legal_actions) > 3 for v in views)
    assert D.decode_batch(obs_a[:0], mask_a[:0]) == []
    with pytest.raises(ValueError, match="decode_batch"):
        D.decode_batch(obs_a[:3], mask_a[:2])
    with pytest.raises(ValueError, match="phase"):
        D.decode_batch(np.zeros((1, O.OBS_SIZE), np.float32), np.zeros((1, NUM_ACTIONS), bool))


def test_decode_rejects_bad_input():
    with pytest.raises(ValueError, match="shape"):
        D.decode(np.zeros(10, dtype=np.float32))
    with pytest.raises(ValueError, match="phase"):
        D.decode(np.zeros(O.OBS_SIZE, dtype=np.float32))


def test_describe_lists_every_term():
    text = O.describe()
    for name, _, _ in O.TERMS:
        assert name in text


def test_layout_rows_are_the_one_source_of_terms_bounds_scale_and_suit_tables():
    """TERMS, SLICES, bounds, OBS_SCALE (= training's obs_scale) and the suit tables follow LAYOUT's rows."""
    from training.policy import obs_scale

    assert O.TERMS == tuple((t.name, t.blocks * t.width, t.kind) for t in O.LAYOUT)
    assert np.array_equal(obs_scale(), O.OBS_SCALE) and obs_scale() is not O.OBS_SCALE
    swap = O.SUIT_PERMUTATIONS.index((1, 0, 2, 3))  # clubs and diamonds exchanged
    for t in O.LAYOUT:
        sl = O.SLICES[t.name]
        assert (O.OBS_LOW[sl] == np.float32(t.low)).all() and (O.OBS_HIGH[sl] == np.float32(t.high)).all()
        assert (O.OBS_SCALE[sl] == np.float32(t.scale)).all()
        src = O.SUIT_OBS_SOURCE[swap, sl] - sl.start
        want = np.arange(t.size)
        if t.suits == O.SUIT_CARDS:
            want = want ^ 8 * (want % 32 < 16)  # card blocks: the first two suits' 8 cards exchanged
        elif t.suits == O.SUIT_SUITS:
            want = want ^ (want % 4 < 2)  # 4-suit blocks: the first two suits exchanged
        assert src.tolist() == want.tolist(), t.name
    assert O.OBS_SCALE[O.SLICES["hand_sizes"]][0] == np.float32(1 / 9)
    assert [t.name for t in O.LAYOUT if t.kind == "raw"] == ["scores", "target_score", "hand_sizes"]


def test_every_player_view_field_is_one_layout_term():
    import dataclasses

    from smear_env.engine.infoset import PlayerView

    fields = [f.name for f in dataclasses.fields(PlayerView)]
    assert fields[1:-1] == [t.field for t in O.LAYOUT if t.field is not None]


def test_decode_errors_name_the_term_with_two_bits():
    g = Game(SmearRules(), seed=3)
    vec = O.encode_game(g, 0)
    for name in ("to_act", "dealer", "bids", "contract", "trump"):
        bad = vec.copy()
        sl = O.SLICES[name]
        bad[sl.start : sl.start + 2] = 1
        set_bits = int((bad[sl.start : sl.start + (5 if name == "bids" else sl.stop - sl.start)] > 0.5).sum())
        assert set_bits >= 2
        with pytest.raises(ValueError, match=f"term '{name}' has {set_bits} bits set"):
            D.decode(bad)
