"""Confidence intervals and rating fits for agent evaluation (numpy only).

Why the duplicate *pair* is the unit: in duplicate play (see :mod:`smear_env.evaluation`) the two games of a
pair use the same deals with the teams' seats exchanged, so their outcomes are correlated (usually
negatively: good cards for team A in game 1 are good cards for team B in game 2). Games are therefore not
independent trials, and every interval below resamples or summarises whole pairs:

* :func:`duplicate_win_interval` -- game win rate: the pair score (mean of its two game scores, a draw
  counting 1/2) is a [0, 1]-bounded variable whose mean is the win rate. The interval is a Wilson score
  interval with Kish's design effect: effective sample size ``n_eff = n_pairs * p(1-p) / var(pair score)``,
  the number of independent Bernoulli trials with the same variance of the mean, limited to
  ``[n_pairs, n_games]`` (a [0, 1] variable has variance at most ``p(1-p)``, so ``n_eff >= n_pairs`` always
  holds; the upper limit keeps it from claiming more than the games it has, and makes it well defined when
  every pair scores the same). Unlike a plain bootstrap or t interval it never collapses to a point.
* :func:`paired_bootstrap_ratio` -- a ratio of sums (e.g. score margin per hand) with a percentile
  bootstrap over pairs.
* :func:`fit_bradley_terry` / :func:`rate_players` -- Bradley-Terry ratings (Elo scale) from pairwise
  results, with a weak prior so that a player who wins every game gets a finite rating, and bootstrap
  intervals that resample the duplicate pairs of every matchup.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

Z95 = 1.959963984540054  # two-sided 95% normal quantile
ELO_SCALE = 400.0 / math.log(10.0)  # Elo points per unit of natural-log strength


def wilson_interval(successes: float, n: float, z: float = Z95) -> tuple[float, float]:
    """Wilson score interval of a proportion ``successes / n`` (``n`` may be fractional); ``n <= 0`` ->
    ``(0.0, 1.0)``."""
    if n < 0 or successes < 0 or successes > n:
        raise ValueError(f"wilson_interval needs 0 <= successes <= n, got successes={successes!r}, n={n!r}")
    if n == 0:
        return (0.0, 1.0)
    p = successes / n
    z2 = z * z
    denom = 1.0 + z2 / n
    centre = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    return (max(0.0, centre - half), min(1.0, centre + half))


def mean_t_interval(values: Sequence[float] | np.ndarray, z: float = Z95) -> tuple[float, float, float]:
    """``(mean, lo, hi)`` normal-approximation interval of a mean (sample std, ``n - 1``)."""
    x = np.asarray(values, dtype=float)
    if x.size == 0:
        return (math.nan, math.nan, math.nan)
    m = float(x.mean())
    if x.size == 1:
        return (m, math.nan, math.nan)
    se = float(x.std(ddof=1)) / math.sqrt(x.size)
    return (m, m - z * se, m + z * se)


def duplicate_win_interval(
    pair_scores: Sequence[float] | np.ndarray, z: float = Z95
) -> tuple[float, float, float]:
    """``(win_rate, lo, hi)`` from duplicate pair scores in [0, 1] (see the module docstring)."""
    x = np.asarray(pair_scores, dtype=float)
    n = x.size
    if n == 0:
        return (math.nan, 0.0, 1.0)
    if np.any((x < 0) | (x > 1)):
        raise ValueError("pair scores must lie in [0, 1]")
    p = float(x.mean())
    var = float(x.var(ddof=1)) if n > 1 else 0.0
    bernoulli = p * (1.0 - p)
    n_eff = n * bernoulli / var if var > 0 else float(2 * n)
    n_eff = min(max(n_eff, float(n)), float(2 * n))
    lo, hi = wilson_interval(p * n_eff, n_eff, z)
    return (p, lo, hi)


def paired_bootstrap_ratio(
    numerators: Sequence[float] | np.ndarray,
    denominators: Sequence[float] | np.ndarray,
    rng: np.random.Generator,
    n_boot: int = 2000,
    level: float = 0.95,
) -> tuple[float, float, float]:
    """``(sum(num) / sum(den), lo, hi)``: percentile bootstrap resampling whole units (pairs)."""
    num = np.asarray(numerators, dtype=float)
    den = np.asarray(denominators, dtype=float)
    if num.shape != den.shape or num.ndim != 1:
        raise ValueError(f"numerators and denominators must be 1-d of equal length: {num.shape}, {den.shape}")
    total = den.sum()
    if num.size == 0 or total == 0:
        return (math.nan, math.nan, math.nan)
    est = float(num.sum() / total)
    if num.size == 1:
        return (est, math.nan, math.nan)
    idx = rng.integers(num.size, size=(n_boot, num.size))
    d = den[idx].sum(axis=1)
    ok = d > 0
    ratios = num[idx].sum(axis=1)[ok] / d[ok]
    alpha = (1.0 - level) / 2.0
    lo, hi = np.quantile(ratios, [alpha, 1.0 - alpha])
    return (est, float(lo), float(hi))


# ---------------------------------------------------------------------------- Bradley-Terry
def fit_bradley_terry(
    n_players: int,
    results: Mapping[tuple[int, int], tuple[float, float]],
    prior_games: float = 1.0,
    iters: int = 2000,
    tol: float = 1e-10,
) -> np.ndarray:
    """Log-strengths ``theta`` (natural log, mean 0) of a Bradley-Terry model ``P(i beats j) =
    1 / (1 + exp(theta_j - theta_i))`` fitted by Hunter's MM algorithm.

    ``results[(i, j)] = (score_i, games)``: player i scored ``score_i`` (wins + draws/2) in ``games``
    games against j. ``prior_games`` adds that many virtual games scored 1/2 each to every played
    matchup (a weak prior that keeps a perfect record finite).
    """
    wins = np.zeros((n_players, n_players))
    games = np.zeros((n_players, n_players))
    for (i, j), (score, n) in results.items():
        if not (0 <= i < n_players and 0 <= j < n_players) or i == j:
            raise ValueError(f"bad matchup {(i, j)!r} for {n_players} players")
        if n <= 0:
            continue
        wins[i, j] += score + prior_games / 2
        wins[j, i] += (n - score) + prior_games / 2
        games[i, j] += n + prior_games
        games[j, i] += n + prior_games
    w = wins.sum(axis=1)
    gamma = np.ones(n_players)
    played = games.sum(axis=1) > 0
    for _ in range(iters):
        denom = (games / (gamma[:, None] + gamma[None, :])).sum(axis=1)
        new = np.where(played & (denom > 0), w / np.where(denom > 0, denom, 1.0), gamma)
        new = new / math.exp(np.log(new[played]).mean()) if played.any() else new
        if np.max(np.abs(np.log(new) - np.log(gamma))) < tol:
            gamma = new
            break
        gamma = new
    theta = np.log(gamma)
    return theta - theta[played].mean() if played.any() else theta


def rate_players(
    players: Sequence[str],
    pair_scores: Mapping[tuple[int, int], Sequence[float] | np.ndarray],
    rng: np.random.Generator,
    anchor: int = 0,
    n_boot: int = 500,
    level: float = 0.95,
) -> list[dict[str, float | str]]:
    """Elo-scale Bradley-Terry ratings anchored so that ``players[anchor]`` is 0, with percentile
    bootstrap intervals (duplicate pairs of each matchup resampled). ``pair_scores[(i, j)]`` are i's
    pair scores in [0, 1] against j (each pair = 2 games)."""
    n = len(players)
    if not 0 <= anchor < n:
        raise ValueError(f"anchor {anchor!r} is not a player index 0..{n - 1}")
    arrays = {k: np.asarray(v, dtype=float) for k, v in pair_scores.items()}

    def fit(samples: Mapping[tuple[int, int], np.ndarray]) -> np.ndarray:
        res = {k: (2.0 * float(v.sum()), 2.0 * v.size) for k, v in samples.items()}
        theta = fit_bradley_terry(n, res)
        return (theta - theta[anchor]) * ELO_SCALE

    point = fit(arrays)
    boots = np.empty((n_boot, n))
    for b in range(n_boot):
        boots[b] = fit({k: v[rng.integers(v.size, size=v.size)] if v.size else v for k, v in arrays.items()})
    alpha = (1.0 - level) / 2.0
    lo = np.quantile(boots, alpha, axis=0)
    hi = np.quantile(boots, 1.0 - alpha, axis=0)
    return [
        {"player": players[i], "rating": float(point[i]), "lo": float(lo[i]), "hi": float(hi[i])}
        for i in range(n)
    ]


__all__ = [
    "ELO_SCALE",
    "Z95",
    "duplicate_win_interval",
    "fit_bradley_terry",
    "mean_t_interval",
    "paired_bootstrap_ratio",
    "rate_players",
    "wilson_interval",
]
