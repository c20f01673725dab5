"""Confidence intervals and Bradley-Terry ratings (smear_env.tables.stats)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from smear_env.tables.stats import (
    ELO_SCALE,
    duplicate_win_interval,
    fit_bradley_terry,
    mean_t_interval,
    paired_bootstrap_ratio,
    rate_players,
    wilson_interval,
)


def test_wilson_known_values():
    lo, hi = wilson_interval(5, 10)
    assert lo == pytest.approx(0.236593, abs=1e-5) and hi == pytest.approx(0.763407, abs=1e-5)
    lo, hi = wilson_interval(40, 40)
    assert hi == 1.0 and lo == pytest.approx(0.912376, abs=1e-5)
    assert wilson_interval(0, 0) == (0.0, 1.0)
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(3, 2)


def test_duplicate_interval_design_effect_bounds():
    # every pair won: n_eff is capped at the number of games (2 per pair)
    p, lo, hi = duplicate_win_interval(np.ones(20))
    assert (p, hi) == (1.0, 1.0) and lo == pytest.approx(wilson_interval(40, 40)[0])
    # pairs split 1/0 like coin flips: variance ~p(1-p), so n_eff is held at its floor, n_pairs
    p, lo, hi = duplicate_win_interval(np.array([1.0, 0.0] * 50))
    assert p == 0.5 and (lo, hi) == pytest.approx(wilson_interval(50, 100))
    # a low-variance set of pair scores gives a narrower interval than a high-variance one with the same mean
    narrow = duplicate_win_interval(np.array([0.5, 0.75] * 50))
    wide = duplicate_win_interval(np.array([0.25, 1.0] * 50))
    assert narrow[0] == wide[0] == 0.625
    assert narrow[2] - narrow[1] < wide[2] - wide[1]
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        duplicate_win_interval([1.5])


def test_paired_bootstrap_ratio_is_deterministic_and_brackets_the_estimate():
    num = np.array([3.0, -1.0, 4.0, 2.0, 0.0, 5.0])
    den = np.array([10.0, 12.0, 9.0, 11.0, 10.0, 8.0])
    a = paired_bootstrap_ratio(num, den, np.random.default_rng(1))
    b = paired_bootstrap_ratio(num, den, np.random.default_rng(1))
    assert a == b
    est, lo, hi = a
    assert est == pytest.approx(13.0 / 60.0)
    assert lo < est < hi
    assert math.isnan(paired_bootstrap_ratio([], [], np.random.default_rng(0))[0])


def test_mean_t_interval():
    m, lo, hi = mean_t_interval([1.0, 2.0, 3.0])
    assert m == 2.0 and (hi - m) == pytest.approx(1.959964 * 1.0 / math.sqrt(3), rel=1e-5)


def test_bradley_terry_recovers_known_strengths():
    # player 0 beats 1 three times out of four; 1 beats 2 two times out of three (large n: prior negligible)
    n = 1_000_000
    res = {(0, 1): (0.75 * n, n), (1, 2): (2 / 3 * n, n), (0, 2): (6 / 7 * n, n)}
    theta = fit_bradley_terry(3, res)
    assert theta[0] - theta[1] == pytest.approx(math.log(3), abs=1e-3)
    assert theta[1] - theta[2] == pytest.approx(math.log(2), abs=1e-3)


def test_bradley_terry_prior_keeps_perfect_record_finite():
    theta = fit_bradley_terry(2, {(0, 1): (10.0, 10)})
    assert np.all(np.isfinite(theta))
    # with one virtual drawn game the fit is exact: P = 10.5 / 11
    assert 1 / (1 + math.exp(theta[1] - theta[0])) == pytest.approx(10.5 / 11, abs=1e-6)


def test_rate_players_anchor_and_order():
    rng = np.random.default_rng(0)
    scores = {(0, 1): np.full(50, 0.1), (0, 2): np.full(50, 0.05), (1, 2): np.array([0.25, 0.75] * 25)}
    out = rate_players(["random", "a", "b"], scores, rng, anchor=0, n_boot=200)
    r = {d["player"]: d for d in out}
    assert r["random"]["rating"] == 0.0 and r["random"]["lo"] == 0.0 and r["random"]["hi"] == 0.0
    assert r["a"]["rating"] > 200 and r["b"]["rating"] > 200
    for d in out:
        assert d["lo"] <= d["rating"] <= d["hi"]
    assert ELO_SCALE == pytest.approx(400 / math.log(10))
    with pytest.raises(ValueError, match="anchor"):
        rate_players(["x", "y"], {(0, 1): np.ones(3)}, rng, anchor=5)
