"""Duplicate evaluation of two teams of agents, tournaments, and the ``smear-eval`` CLI.

**Duplicate format.** Team A plays team B over ``games / 2`` *pairs* of games. Both games of pair ``g``
use one sequence of deals: the same first dealer and, for every hand ``i`` (thrown-in hands count, R8),
the same deal -- ``deal i`` is drawn from ``SeedSequence([seed, 1, g, i])``, independent of how the game
went. In game 1 team A sits in seats 0/2 and team B in 1/3; in game 2 they exchange seats, so each team
receives exactly the cards the other team held (the two games may still last a different number of hands;
hand ``i`` always uses deal ``i``). This cancels most of the luck of the deal. ``--games N`` means N games
in total (N/2 pairs), so N must be even.

Games are driven on the engine directly (no PettingZoo layer): an agent gets
``observation.observe(game, seat)``; agents that offer ``act_view(view)``
(:func:`smear_env.agents.base.has_view_fast_path`) get ``view_of(game, seat).relative()`` instead, which
is the same information without the encode/decode round trip. Every game is bounded by ``max_hands``
deals (R21); a game cut off there counts as a draw and is reported as truncated.

**Statistics** (all from team A's point of view unless per team; the unit of resampling is the pair, see
:mod:`smear_env.stats`): game win rate (a draw counts 1/2) with a Wilson interval using the pairs' design
effect; mean score margin per played hand (A's score change minus B's, summed over both games, divided by
the hands played) with a pair bootstrap interval; per team, over *played* hands (hands not thrown in):
bid rate (fraction of played hands the team won the bid), contract success rate (of its contracts),
average contract, and the capture rate of High, Low, Jack and Game (fraction of played hands in which the
team won that point; ``awarded`` gives the fraction in which anyone won it).

Reproducible: the same seed gives identical numbers for any ``--workers`` (each pair's deals and agent
generators derive from ``(seed, pair)`` only; results are combined in pair order).
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing as mp
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .agents.base import Agent, has_view_fast_path
from .cards import HAND_SIZE, NUM_CARDS
from .config import ALL_PASS_VALUES, GAME_POINT_TIE_VALUES, HIGH_LOW_VALUES, RuleOptionError, SmearRules
from .game import GAME_OVER, HAND_OVER, NUM_PLAYERS, POINT_NAMES, Game, IllegalActionError
from .infoset import view_of
from .stats import duplicate_win_interval, paired_bootstrap_ratio, rate_players

DEFAULT_MAX_HANDS = 200
DEFAULT_GAMES = 200
BACKENDS = ("local", "ray")
_TAG_DEAL, _TAG_DEALER, _TAG_AGENT, _TAG_BOOT = 1, 2, 3, 4

TeamSpec = str | Callable[[], Agent]


# ---------------------------------------------------------------------------- deals
def _check_seed(seed: Any) -> int:
    if isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, not {seed!r}")
    return int(seed)


class DealSequence:
    """The deals of one duplicate pair: first dealer and deal ``i`` from ``(seed, pair)`` only."""

    def __init__(self, seed: int, pair: int) -> None:
        self.seed = _check_seed(seed)
        self.pair = _check_seed(pair)
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, _TAG_DEALER, self.pair]))
        self.first_dealer = int(rng.integers(NUM_PLAYERS))  # R4: uniformly at random
        self._cache: dict[int, tuple[list[list[int]], list[int]]] = {}

    def deal(self, i: int) -> tuple[list[list[int]], list[int]]:
        """``(hands, stock)`` of hand ``i`` (R5: 6 cards to each seat, 8 to the stock)."""
        if i not in self._cache:
            rng = np.random.default_rng(np.random.SeedSequence([self.seed, _TAG_DEAL, self.pair, i]))
            perm = rng.permutation(NUM_CARDS).tolist()
            hands = [sorted(perm[s * HAND_SIZE:(s + 1) * HAND_SIZE]) for s in range(NUM_PLAYERS)]
            self._cache[i] = (hands, perm[NUM_PLAYERS * HAND_SIZE:])
        return self._cache[i]


def agent_rng(seed: int, pair: int, game: int, seat: int) -> np.random.Generator:
    return np.random.default_rng(np.random.SeedSequence([seed, _TAG_AGENT, pair, game, seat]))


# ---------------------------------------------------------------------------- one game
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


def play_game(
    agents: Sequence[Agent],
    rules: SmearRules | None = None,
    seed: int = 0,
    deals: DealSequence | None = None,
    max_hands: int = DEFAULT_MAX_HANDS,
    rngs: Sequence[np.random.Generator] | None = None,
) -> tuple[dict[str, Any], GameStats]:
    """Play one game with ``agents[s]`` in seat ``s``; returns ``(smear-record/1 dict, stats)``.

    Deals come from ``deals`` (default ``DealSequence(seed, 0)``); agents' generators from ``rngs``
    (default derived from ``seed``). At most ``max_hands`` hands are dealt (R21): a game still running
    then is truncated (``winner`` None).
    """
    if len(agents) != NUM_PLAYERS:
        raise ValueError(f"play_game needs {NUM_PLAYERS} agents (one per seat), got {len(agents)}")
    if isinstance(max_hands, bool) or not isinstance(max_hands, int) or max_hands < 1:
        raise ValueError(f"max_hands must be an integer >= 1, not {max_hands!r}")
    rules = rules if rules is not None else SmearRules()
    game = _play(agents, rules, deals if deals is not None else DealSequence(seed, 0), max_hands,
                 rngs if rngs is not None else [agent_rng(seed, 0, 0, s) for s in range(NUM_PLAYERS)])
    truncated = game.phase != GAME_OVER
    record = game.to_record(players=[a.name for a in agents], truncated=truncated)
    return record, game_stats(game, truncated)


def _play(
    agents: Sequence[Agent],
    rules: SmearRules,
    deals: DealSequence,
    max_hands: int,
    rngs: Sequence[np.random.Generator],
) -> Game:
    for s, a in enumerate(agents):
        a.start_game(s, rules, rngs[s])
    hands, stock = deals.deal(0)
    game = Game.from_deal(hands, stock, deals.first_dealer, rules)
    fast = [has_view_fast_path(a) for a in agents]
    observe = None
    while True:
        phase = game.phase
        if phase == GAME_OVER:
            return game
        if phase == HAND_OVER:
            nxt = game.hand_number + 1
            if nxt >= max_hands:
                return game  # R21: truncated
            game.start_next_hand(deal=deals.deal(nxt))  # hand i always uses deal i of the sequence
            continue
        seat = game.to_act
        legal = game.legal_actions()
        agent = agents[seat]
        if fast[seat]:
            action = agent.act_view(view_of(game, seat).relative())  # type: ignore[attr-defined]
        else:
            if observe is None:
                from .observation import observe
            action = agent.act(observe(game, seat))
        if action not in legal:
            try:
                game.apply(action)  # raises IllegalActionError naming the action and the legal ones
            except IllegalActionError as e:
                raise IllegalActionError(f"agent {agent.name!r} in seat {seat}: {e}") from None
        else:
            game.apply(action)


# ---------------------------------------------------------------------------- duplicate pairs
def _build(spec: TeamSpec, rules: SmearRules) -> Agent:
    if isinstance(spec, str):
        from .agents.registry import make_agent

        return make_agent(spec, rules)
    if callable(spec):
        return spec()
    raise TypeError(f"a team is an agent spec string or a zero-argument agent factory, not {spec!r}")


class _PairRunner:
    """Two agent instances per team (one per seat), reused across games."""

    def __init__(self, team_a: TeamSpec, team_b: TeamSpec, rules: SmearRules, seed: int, max_hands: int,
                 records: bool) -> None:
        self.a = [_build(team_a, rules), _build(team_a, rules)]
        self.b = [_build(team_b, rules), _build(team_b, rules)]
        self.rules = rules
        self.seed = seed
        self.max_hands = max_hands
        self.records = records

    def run(self, pair: int) -> tuple[list[GameStats], list[dict[str, Any]] | None]:
        deals = DealSequence(self.seed, pair)
        a, b = self.a, self.b
        seatings = ([a[0], b[0], a[1], b[1]], [b[0], a[0], b[1], a[1]])  # A in 0/2, then A in 1/3
        stats, recs = [], []
        for g, agents in enumerate(seatings):
            rngs = [agent_rng(self.seed, pair, g, s) for s in range(NUM_PLAYERS)]
            try:
                game = _play(agents, self.rules, deals, self.max_hands, rngs)
            except Exception as e:  # e.g. a protocol bot failed: keep the records of the games finished
                e.finished_records = recs  # type: ignore[attr-defined]
                raise
            truncated = game.phase != GAME_OVER
            stats.append(game_stats(game, truncated))
            if self.records:
                rec = game.to_record(players=[x.name for x in agents], truncated=truncated)
                rec["seed"] = self.seed
                rec["duplicate"] = {"pair": pair, "game": g, "team_a_seats": [g, g + 2]}
                recs.append(rec)
        return stats, (recs if self.records else None)


_WORKER: _PairRunner | None = None


def _worker_init(team_a: TeamSpec, team_b: TeamSpec, rules: dict[str, Any], seed: int, max_hands: int,
                 records: bool) -> None:
    global _WORKER
    _WORKER = _PairRunner(team_a, team_b, SmearRules.from_dict(rules), seed, max_hands, records)


def _worker_run(pair: int) -> tuple[list[GameStats], list[dict[str, Any]] | None]:
    assert _WORKER is not None
    return _WORKER.run(pair)


# ---------------------------------------------------------------------------- match result
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
        rng = np.random.default_rng(np.random.SeedSequence([self.seed, _TAG_BOOT]))
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


def _aggregate(pairs: list[list[GameStats]]) -> tuple[np.ndarray, np.ndarray, np.ndarray, dict[str, Any]]:
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


def run_match(
    team_a: TeamSpec,
    team_b: TeamSpec,
    games: int = DEFAULT_GAMES,
    rules: SmearRules | None = None,
    seed: int = 0,
    workers: int = 1,
    max_hands: int = DEFAULT_MAX_HANDS,
    records: Callable[[dict[str, Any]], None] | None = None,
    progress: Callable[[int], None] | None = None,
    backend: str = "local",
    ray_address: str | None = None,
) -> MatchResult:
    """Duplicate match of ``games`` games (``games / 2`` pairs) between two teams.

    A team is an agent spec (``"heuristic"``, ``"pimc:samples=16"``, a checkpoint path; see
    :func:`smear_env.agents.registry.make_agent`) or a zero-argument factory returning an agent (with
    ``workers > 1`` it must be picklable). Each game's ``smear-record/1`` dict is passed to ``records``
    in order; ``progress(n)`` is called after each pair with the number of games it finished (2).
    ``backend="ray"`` plays the pairs as Ray tasks (:mod:`smear_env.ray_eval`; ``workers`` unused, the
    cluster at ``ray_address`` or a local Ray): the same result as ``"local"`` for the same seed.
    """
    if backend not in BACKENDS:
        allowed = ", ".join(map(repr, BACKENDS))
        raise ValueError(f"backend {backend!r} is not allowed; allowed values: {allowed}")
    if isinstance(games, bool) or not isinstance(games, int) or games < 2 or games % 2:
        raise ValueError(f"games must be an even integer >= 2 (duplicate pairs of games), not {games!r}")
    if isinstance(workers, bool) or not isinstance(workers, int) or workers < 1:
        raise ValueError(f"workers must be an integer >= 1, not {workers!r}")
    if isinstance(max_hands, bool) or not isinstance(max_hands, int) or max_hands < 1:
        raise ValueError(f"max_hands must be an integer >= 1, not {max_hands!r}")
    seed = _check_seed(seed)
    rules = rules if rules is not None else SmearRules()
    n_pairs = games // 2
    want_records = records is not None
    t0 = time.perf_counter()
    results: list[list[GameStats]] = []

    def take(out: tuple[list[GameStats], list[dict[str, Any]] | None]) -> None:
        stats, recs = out
        results.append(stats)
        if records is not None and recs:
            for r in recs:
                records(r)
        if progress is not None:
            progress(len(stats))

    workers = min(workers, n_pairs)
    # Build the agents here first, so that a bad spec fails fast with its own error, not in a worker.
    runner = _PairRunner(team_a, team_b, rules, seed, max_hands, want_records)
    name_a, name_b = runner.a[0].name, runner.b[0].name
    try:
        if backend == "ray":
            from .ray_eval import run_pairs

            for out in run_pairs(team_a, team_b, rules, seed, max_hands, want_records, n_pairs, ray_address):
                take(out)
        elif workers == 1:
            for p in range(n_pairs):
                take(runner.run(p))
        else:
            ctx = mp.get_context("spawn")
            chunk = max(1, min(16, n_pairs // (workers * 8)))
            with ctx.Pool(workers, initializer=_worker_init,
                          initargs=(team_a, team_b, rules.to_dict(), seed, max_hands, want_records)) as pool:
                for out in pool.imap(_worker_run, range(n_pairs), chunksize=chunk):  # ordered: deterministic
                    take(out)
    except Exception as e:  # the match stops; every finished game is still passed to ``records``
        for r in getattr(e, "finished_records", None) or ():
            records(r)  # type: ignore[misc]
        raise
    scores, margins, hands, totals = _aggregate(results)
    return MatchResult(
        team_a=name_a, team_b=name_b, rules=rules, seed=seed, games=games,
        max_hands=max_hands, pair_scores=scores, pair_margin=margins, pair_hands=hands, totals=totals,
        seconds=time.perf_counter() - t0,
    )


# ---------------------------------------------------------------------------- tournaments
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


def run_tournament(
    players: Sequence[str],
    games: int = DEFAULT_GAMES,
    rules: SmearRules | None = None,
    seed: int = 0,
    workers: int = 1,
    max_hands: int = DEFAULT_MAX_HANDS,
    anchor: str | None = None,
    records: Callable[[dict[str, Any]], None] | None = None,
    progress: Callable[[int], None] | None = None,
    n_boot: int = 500,
    backend: str = "local",
    ray_address: str | None = None,
) -> TournamentResult:
    """Every pair of ``players`` plays a duplicate match of ``games`` games (the same deal sequences for
    every matchup); ratings are a Bradley-Terry fit anchored at ``anchor`` (default ``random`` if
    playing, else the first player) = 0."""
    players = [p.strip() for p in players]
    if len(players) < 2:
        raise ValueError(f"a tournament needs at least 2 players, got {players!r}")
    if len(set(players)) != len(players):
        raise ValueError(f"tournament players must be distinct, got {players!r}")
    if anchor is None:
        anchor = "random" if "random" in players else players[0]
    if anchor not in players:
        raise ValueError(f"anchor {anchor!r} is not one of the players {players!r}")
    matches: dict[tuple[int, int], MatchResult] = {}
    for i in range(len(players)):
        for j in range(i + 1, len(players)):
            matches[(i, j)] = run_match(players[i], players[j], games, rules, seed, workers, max_hands,
                                        records, progress, backend, ray_address)
    rng = np.random.default_rng(np.random.SeedSequence([seed, _TAG_BOOT, 1]))
    ratings = rate_players(players, {k: m.pair_scores for k, m in matches.items()}, rng,
                           anchor=players.index(anchor), n_boot=n_boot)
    return TournamentResult(players=players, matches=matches, ratings=ratings, anchor=anchor)


# ---------------------------------------------------------------------------- CLI
def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _f(x: float | None, nd: int = 2) -> str:
    return "-" if x is None else f"{x:.{nd}f}"


def match_table(s: dict[str, Any]) -> Any:
    from rich.table import Table

    a, b = s["teams"]["a"], s["teams"]["b"]
    lo, hi = s["win_rate_a_ci95"]
    mlo, mhi = s["margin_per_hand_a_ci95"]
    title = (f"{s['team_a']} (A) vs {s['team_b']} (B): {s['games']} games = {s['pairs']} duplicate pairs, "
             f"seed {s['seed']}")
    t = Table(title=title)
    t.add_column("metric")
    t.add_column(f"A: {s['team_a']}", justify="right")
    t.add_column(f"B: {s['team_b']}", justify="right")
    win = s["win_rate_a"]
    t.add_row("games won", str(a["wins"]), str(b["wins"]))
    t.add_row("win rate (95% CI)", f"{_pct(win)} [{_pct(lo)}, {_pct(hi)}]",
              "-" if win is None else f"{_pct(1 - win)} [{_pct(1 - hi)}, {_pct(1 - lo)}]")
    t.add_row("score margin / hand (95% CI)", f"{_f(s['margin_per_hand_a'], 3)} [{_f(mlo, 3)}, {_f(mhi, 3)}]",
              "-" if s["margin_per_hand_a"] is None else f"{-s['margin_per_hand_a']:.3f}")
    t.add_row("points won / hand", _f(a["points_per_hand"], 3), _f(b["points_per_hand"], 3))
    t.add_row("bid rate (bidder in played hands)", _pct(a["bid_rate"]), _pct(b["bid_rate"]))
    t.add_row("contract success", _pct(a["contract_success"]), _pct(b["contract_success"]))
    t.add_row("average contract", _f(a["average_contract"]), _f(b["average_contract"]))
    for p in POINT_NAMES:
        t.add_row(f"{p} captured (of played hands)", _pct(a["capture_rate"][p]), _pct(b["capture_rate"][p]))
    t.caption = (
        f"draws {s['draws']} (truncated at {s['max_hands']} hands: {s['truncated']}); hands played "
        f"{s['hands_played']}, thrown in {s['hands_thrown_in']}; {s['seconds']:.1f} s. "
        "Win-rate CI: Wilson over pairs with design effect; margin CI: pair bootstrap."
    )
    return t


def ratings_table(s: dict[str, Any]) -> Any:
    from rich.table import Table

    t = Table(title=f"ratings (Bradley-Terry, Elo scale, {s['anchor']} = 0)")
    t.add_column("rank", justify="right")
    t.add_column("agent")
    t.add_column("rating", justify="right")
    t.add_column("95% CI", justify="right")
    for k, r in enumerate(sorted(s["ratings"], key=lambda r: -r["rating"]), 1):
        t.add_row(str(k), str(r["player"]), f"{r['rating']:.0f}", f"[{r['lo']:.0f}, {r['hi']:.0f}]")
    return t


def pairwise_table(s: dict[str, Any]) -> Any:
    from rich.table import Table

    players = s["players"]
    t = Table(title="win rate of row vs column (duplicate)")
    t.add_column("")
    for p in players:
        t.add_column(p, justify="right")
    cell = {}
    for m in s["matches"]:
        w = m["win_rate_a"]
        cell[(m["team_a"], m["team_b"])] = _pct(w)
        cell[(m["team_b"], m["team_a"])] = _pct(None if w is None else 1 - w)
    for p in players:
        t.add_row(p, *[cell.get((p, q), "") for q in players])
    return t


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="smear-eval",
        description="Duplicate evaluation of two Smear teams (or a tournament of several). An agent is "
                    "'random', 'heuristic', 'pimc[:key=value,...]' or a checkpoint path.",
        epilog="--games N means N games in total: N/2 duplicate pairs, each pair playing one deal sequence "
               "twice with the teams exchanging seats. N must be even.",
    )
    ap.add_argument("agents", nargs="+", help="TEAM_A TEAM_B (or 3+ agents: a tournament)")
    ap.add_argument("--tournament", action="store_true", help="play every pair of the agents and fit ratings")
    ap.add_argument("--games", type=int, default=DEFAULT_GAMES,
                    help=f"games in total per matchup, even (default {DEFAULT_GAMES})")
    ap.add_argument("--seed", type=int, default=0, help="seed of the deal sequences and agents (default 0)")
    ap.add_argument("--workers", type=int, default=1, help="worker processes (results do not depend on it)")
    ap.add_argument("--backend", choices=BACKENDS, default="local",
                    help="local: --workers processes on this machine; ray: the pairs as Ray tasks on a Ray "
                         "cluster (same results; needs ray)")
    ap.add_argument("--ray-address", metavar="ADDR",
                    help="--backend ray: 'auto' or host:port of a running cluster (default: a local Ray)")
    ap.add_argument("--json", action="store_true", help="print machine-readable results to stdout")
    ap.add_argument("--records", metavar="FILE", help="write every game as smear-record/1 JSON lines")
    ap.add_argument("--max-hands", type=int, default=DEFAULT_MAX_HANDS,
                    help=f"truncate a game after this many deals, R21 (default {DEFAULT_MAX_HANDS})")
    ap.add_argument("--anchor", help="tournament: the agent rated 0 (default random, else the first)")
    d = SmearRules()
    g = ap.add_argument_group("rule options (docs/RULES.md)")
    g.add_argument("--kitty-size", type=int, default=d.kitty_size, help="R9: 0..3")
    g.add_argument("--target-score", type=int, default=d.target_score, help="R18")
    g.add_argument("--high-low", default=d.high_low, choices=HIGH_LOW_VALUES, help="R13/R14")
    g.add_argument("--game-point-tie", default=d.game_point_tie, choices=GAME_POINT_TIE_VALUES, help="R16")
    g.add_argument("--all-pass", default=d.all_pass, choices=ALL_PASS_VALUES, help="R8")
    g.add_argument("--win-requires-bid", action="store_true", help="R19")
    g.add_argument("--cap-defenders", action="store_true", help="R20")
    return ap


def main(argv: Sequence[str] | None = None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    try:
        rules = SmearRules(
            kitty_size=args.kitty_size, target_score=args.target_score, high_low=args.high_low,
            game_point_tie=args.game_point_tie, all_pass=args.all_pass,
            win_requires_bid=args.win_requires_bid, cap_defenders=args.cap_defenders,
        )
    except RuleOptionError as e:
        ap.error(str(e))
    if args.games < 2 or args.games % 2:
        ap.error(f"--games must be an even number >= 2 (duplicate pairs), not {args.games}")
    if args.workers < 1:
        ap.error(f"--workers must be >= 1, not {args.workers}")
    if args.max_hands < 1:
        ap.error(f"--max-hands must be >= 1, not {args.max_hands}")
    if args.seed < 0:
        ap.error(f"--seed must be >= 0, not {args.seed}")
    if args.backend == "ray":
        import importlib.util

        if importlib.util.find_spec("ray") is None:
            ap.error('--backend ray needs ray: pip install -c constraints/rllib.txt "smear-rl[rllib]"')
    elif args.ray_address:
        ap.error("--ray-address is only used with --backend ray")
    tournament = args.tournament or len(args.agents) > 2
    if len(args.agents) < 2:
        ap.error("give two agents (TEAM_A TEAM_B), or several with --tournament")
    # check the specs up front: a clear error instead of a traceback from a worker
    from .agents.protocol import BotError
    from .agents.registry import make_agent

    for spec in args.agents:
        try:
            make_agent(spec, rules)
        except (ValueError, FileNotFoundError) as e:
            ap.error(str(e))

    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    err = Console(stderr=True)
    n_matches = len(args.agents) * (len(args.agents) - 1) // 2 if tournament else 1
    rec_file = open(args.records, "w", encoding="utf-8") if args.records else None  # noqa: SIM115
    write = None
    if rec_file is not None:
        def write(rec: dict[str, Any]) -> None:
            rec_file.write(json.dumps(rec, separators=(",", ":")) + "\n")
    try:
        columns = (TextColumn("[progress.description]{task.description}"), BarColumn(), MofNCompleteColumn(),
                   TimeRemainingColumn())
        with Progress(*columns, console=err, transient=True, disable=not err.is_terminal) as prog:
            task = prog.add_task("games", total=args.games * n_matches)

            def advance(n: int) -> None:
                prog.advance(task, n)

            if tournament:
                res = run_tournament(args.agents, args.games, rules, args.seed, args.workers, args.max_hands,
                                     anchor=args.anchor, records=write, progress=advance,
                                     backend=args.backend, ray_address=args.ray_address)
                summary = res.summary()
            else:
                summary = run_match(args.agents[0], args.agents[1], args.games, rules, args.seed,
                                    args.workers, args.max_hands, records=write, progress=advance,
                                    backend=args.backend, ray_address=args.ray_address).summary()
    except BotError as e:  # a protocol bot failed: the match stops, finished games are kept
        kept = f"\nthe finished games are in {args.records}" if args.records else ""
        err.print(f"smear-eval: match stopped: {e}{kept}", markup=False, highlight=False)
        return 1
    finally:
        if rec_file is not None:
            rec_file.close()
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    out = Console()
    if tournament:
        for m in summary["matches"]:
            out.print(match_table(m))
        out.print(pairwise_table(summary))
        out.print(ratings_table(summary))
    else:
        out.print(match_table(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main())
