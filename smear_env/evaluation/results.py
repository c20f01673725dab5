"""Statistics of duplicate matches: per-game counts, the match summary, tournament ratings.

All from team A's point of view unless per team; the unit of resampling is the duplicate *pair* (see
:mod:`smear_env.tables.stats` for the interval methods): game win rate (a draw counts 1/2) with a Wilson
interval using the pairs' design effect; mean score margin per played hand (A's score change minus B's, summed
over both games, divided by the hands played) with a pair bootstrap interval; per team, over *played* hands
(hands not thrown in): bid rate (fraction of played hands the team won the bid), contract success rate (of
its contracts), average contract, and the capture rate of High, Low, Jack and Game (fraction of played
hands in which the team won that point; ``awarded`` gives the fraction in which anyone won it).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..core.config import SmearRules
from ..engine.game import POINT_NAMES, Game
from ..tables.stats import duplicate_win_interval, paired_bootstrap_ratio

TAG_BOOT = 4  # seed-sequence tag of the bootstrap generators


@dataclass
class GameStats:
    """Per-game counts, indexed by engine team (0 = seats 0/2, 1 = seats 1/3)."""

    winner: int | None
    truncated: bool
    deals: int
    """Hands dealt, thrown-in hands included."""
    played: int
    """Hands played out (not thrown in, R8)."""
    thrown_in: int
    final_scores: tuple[int, int]
    score_change: list[int] = field(default_factory=lambda: [0, 0])
    bids_won: list[int] = field(default_factory=lambda: [0, 0])
    made: list[int] = field(default_factory=lambda: [0, 0])
    contract_sum: list[int] = field(default_factory=lambda: [0, 0])
    points: list[int] = field(default_factory=lambda: [0, 0])
    captures: dict[str, list[int]] = field(default_factory=lambda: {p: [0, 0] for p in POINT_NAMES})


def game_stats(game: Game, truncated: bool) -> GameStats:
    """Counts of a finished (or truncated) game, from its hand history."""
    st = GameStats(
        winner=game.winner,
        truncated=truncated,
        deals=len(game.history),
        played=0,
        thrown_in=0,
        final_scores=(game.scores[0], game.scores[1]),
    )
    for h in game.history:
        if h.get("thrown_in"):
            st.thrown_in += 1
            continue
        if "points" not in h:
            continue  # pragma: no cover - an incomplete hand is never in the history
        st.played += 1
        team = h["bidder"] & 1
        st.bids_won[team] += 1
        st.contract_sum[team] += h["contract"]
        st.made[team] += bool(h["made_contract"])
        for t in (0, 1):
            st.score_change[t] += h["score_change"][t]
        for name in POINT_NAMES:
            w = h["points"][name]
            if w is not None:
                st.captures[name][w] += 1
                st.points[w] += 1
    return st


@dataclass
class MatchResult:
    team_a: str
    team_b: str
    rules: SmearRules
    seed: int
    games: int
    max_hands: int
    pair_scores: np.ndarray
    """A's score of each pair in [0, 1] (mean of its two games, draw = 1/2)."""
    pair_margin: np.ndarray
    """A's score change minus B's, summed over each pair's played hands."""
    pair_hands: np.ndarray
    """Played hands of each pair."""
    totals: dict[str, Any]
    seconds: float = 0.0

    def summary(self) -> dict[str, Any]:
        """Machine-readable results (what ``--json`` prints)."""
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, TAG_BOOT]))
        win, wlo, whi = duplicate_win_interval(self.pair_scores)
        margin, mlo, mhi = paired_bootstrap_ratio(self.pair_margin, self.pair_hands, rng)
        t = self.totals
        teams = {}
        for key, name in (("a", self.team_a), ("b", self.team_b)):
            played = t["played"]
            bids = t[key]["bids_won"]
            teams[key] = {
                "agent": name,
                "wins": t[key]["wins"],
                "bid_rate": _ratio(bids, played),
                "contract_success": _ratio(t[key]["made"], bids),
                "average_contract": _ratio(t[key]["contract_sum"], bids),
                "points_per_hand": _ratio(t[key]["points"], played),
                "capture_rate": {p: _ratio(t[key]["captures"][p], played) for p in POINT_NAMES},
            }
        return {
            "team_a": self.team_a,
            "team_b": self.team_b,
            "rules": self.rules.to_dict(),
            "seed": self.seed,
            "games": self.games,
            "pairs": int(self.pair_scores.size),
            "max_hands": self.max_hands,
            "win_rate_a": _num(win),
            "win_rate_a_ci95": [_num(wlo), _num(whi)],
            "win_rate_method": "Wilson score interval over duplicate pairs with Kish design effect",
            "margin_per_hand_a": _num(margin),
            "margin_per_hand_a_ci95": [_num(mlo), _num(mhi)],
            "margin_method": "percentile bootstrap over duplicate pairs (2000 resamples)",
            "draws": t["draws"],
            "truncated": t["truncated"],
            "hands_dealt": t["deals"],
            "hands_played": t["played"],
            "hands_thrown_in": t["thrown_in"],
            "point_awarded_rate": {p: _ratio(t["awarded"][p], t["played"]) for p in POINT_NAMES},
            "teams": teams,
            "seconds": round(self.seconds, 3),
        }


def _ratio(a: float, b: float) -> float | None:
    return None if not b else a / b


def _num(x: float) -> float | None:
    return None if x is None or (isinstance(x, float) and math.isnan(x)) else float(x)


def aggregate(pairs: list[list[GameStats]]) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
    def team_totals() -> dict[str, Any]:
        return {"wins": 0, "bids_won": 0, "made": 0, "contract_sum": 0, "points": 0,
                "captures": {p: 0 for p in POINT_NAMES}}

    tot: dict[str, Any] = {"a": team_totals(), "b": team_totals(), "draws": 0, "truncated": 0, "deals": 0,
                           "played": 0, "thrown_in": 0, "awarded": {p: 0 for p in POINT_NAMES}}
    scores, margins, hands = [], [], []
    for pair in pairs:
        s = m = h = 0.0
        for g, st in enumerate(pair):
            ta = g  # engine team of A: 0 in game 1 (seats 0/2), 1 in game 2 (seats 1/3)
            tb = 1 - ta
            if st.winner is None:
                s += 0.5
                tot["draws"] += 1
            elif st.winner == ta:
                s += 1.0
                tot["a"]["wins"] += 1
            else:
                tot["b"]["wins"] += 1
            tot["truncated"] += st.truncated
            m += st.score_change[ta] - st.score_change[tb]
            h += st.played
            tot["deals"] += st.deals
            tot["played"] += st.played
            tot["thrown_in"] += st.thrown_in
            for key, team in (("a", ta), ("b", tb)):
                d = tot[key]
                d["bids_won"] += st.bids_won[team]
                d["made"] += st.made[team]
                d["contract_sum"] += st.contract_sum[team]
                d["points"] += st.points[team]
                for p in POINT_NAMES:
                    d["captures"][p] += st.captures[p][team]
            for p in POINT_NAMES:
                tot["awarded"][p] += st.captures[p][0] + st.captures[p][1]
        scores.append(s / len(pair))
        margins.append(m)
        hands.append(h)
    return np.array(scores), np.array(margins), np.array(hands), tot


@dataclass
class TournamentResult:
    players: list[str]
    matches: dict[tuple[int, int], MatchResult]
    ratings: list[dict[str, float | str]]
    anchor: str

    def summary(self) -> dict[str, Any]:
        return {
            "players": self.players,
            "anchor": self.anchor,
            "rating_method": "Bradley-Terry (Elo scale, 400*log10), 1 virtual drawn game per matchup as "
                             "prior; 95% percentile bootstrap over duplicate pairs",
            "ratings": self.ratings,
            "matches": [m.summary() for m in self.matches.values()],
        }
