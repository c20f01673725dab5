"""The ladder: a round robin of every built-in and shipped agent in duplicate games, rated on one scale.

    python -m smear_env.evaluation.ladder                # make ladder: docs/ladder.md + docs/ladder.json
    python -m smear_env.evaluation.ladder --scale 0.05   # a quick version (5% of the games per pair)
    python -m smear_env.evaluation.ladder --add runs/x/checkpoints/latest.safetensors --add "cmd:./my_bot"

Players: :data:`DEFAULT_PLAYERS` (random, heuristic, pimc at two strengths, the shipped agents) plus every
``--add`` spec (any spec of :func:`smear_env.agents.registry.make_agent`, ``cmd:`` bots included). Every pair
plays one duplicate match (:func:`smear_env.evaluation.run_match`: the same deal sequences of ``--seed`` for
every pair, seats exchanged within each pair of games) on the batched engine when both players can be
vectorised (random, heuristic, checkpoints), else on the reference engine with ``--workers`` processes.
A pair plays ``--games`` games (default 2,000), or ``--slow-games`` (default 400) when either player is
searched or external (``pimc``, ``cmd:``), both times ``--scale`` (rounded to an even number, at least 2).

Ratings: a Bradley-Terry fit on the Elo scale (:func:`smear_env.tables.stats.rate_players`: 400 log10 odds,
one virtual drawn game per matchup as a prior), anchored at ``--anchor`` = 0 (default ``heuristic``, else the
first player: ``random`` loses nearly every game, so its distance to the others is set by the prior and
makes a poor zero), with 95% percentile bootstrap
intervals over the duplicate pairs of each matchup. Output: a Markdown page (the ratings, the win rate of
every pair with its interval, the games per pair, the seed, the date, the machine in figures) and a JSON
file with every match summary and its per-pair scores. ``--cache`` (a JSON-lines file) keeps each finished
match, so an interrupted ladder continues where it stopped and players can be added without replaying the
other pairs (a cached match is reused only for the same players, games, seed and rules).

References outside the round robin (``--references FILE``, ``make ladder`` passes
``results/ladder-references.json``): matches of other agents against ladder players, each with its own seed
and games (:func:`read_references`); the page lists them with the rating each win rate implies on the
ladder's scale. ``--render-only`` writes the page again from the JSON file and the references, playing no
game.
"""

from __future__ import annotations

import argparse
import datetime as _dt
import hashlib
import json
import os
import platform
import shlex
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..agents.registry import is_checkpoint_spec
from ..agents.shipped import SHIPPED_AGENTS, shipped_path
from ..core.config import SmearRules
from ..tables.stats import rate_players
from .duplicate import run_match
from .results import TAG_BOOT

DEFAULT_PLAYERS = ("random", "heuristic", "pimc:samples=2,bid_samples=8", "pimc", "default", "scratch")
"""The built-in agents -- pimc at its default strength (6 card-play and 16 bid samples) and a weaker one (2
and 8) -- and the shipped agents. Measured on 2 cores (the full ladder, two or three matches or other jobs
at a time, load average 2-3): 400 games of a pair with the weaker pimc took 589-839 s, with the
default pimc 1,353-1,945 s (random's long games included), the two pimcs together 2,949 s; the 9 pairs with a
pimc player take about 3-4 hours of one core (``make ladder`` plays each match on 2 processes). A stronger
search (``pimc:samples=24,bid_samples=32``, roughly 4x the default's cost) is a command-line player."""
DEFAULT_GAMES = 2000
DEFAULT_SLOW_GAMES = 400
DEFAULT_SEED = 2026
DEFAULT_BOOT = 1000
FORMAT = "smear-ladder/1"
REFERENCES_FORMAT = "smear-ladder-references/1"
REFERENCE_KEYS = {"agent": str, "against": str, "seed": int, "games": int, "win_rate": float,
                  "ci95": list, "margin": float, "margin_ci95": list, "command": str, "played": str}


class LadderError(ValueError):
    """Bad ladder input (the message names the bad value and the allowed ones)."""


def is_slow(spec: str) -> bool:
    """Whether a player is searched or external (``pimc``, ``rollout:``, ``openspiel:``, ``cmd:``, a
    ``split:`` with such a half): its pairs play the smaller count."""
    text = spec.strip()
    if text.startswith("split:"):
        return any(is_slow(half.partition("=")[2]) for half in text[len("split:"):].split(","))
    return text.split(":", 1)[0] in ("pimc", "rollout", "openspiel") or text.startswith(("cmd:", "cmd["))


def games_for(a: str, b: str, games: int, slow_games: int, scale: float) -> int:
    """Games of the pair ``a``-``b``: ``games`` (or ``slow_games`` when either is slow) times ``scale``,
    rounded to an even number >= 2."""
    n = (slow_games if is_slow(a) or is_slow(b) else games) * scale
    return max(2, 2 * int(round(n / 2)))


def _now() -> str:
    return _dt.datetime.now(_dt.UTC).strftime("%Y-%m-%d %H:%M UTC")


def machine() -> dict[str, Any]:
    """Cores, load average (1, 5, 15 minutes), platform and Python version of this machine."""
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except OSError:  # pragma: no cover - not on every platform
        load = None
    return {"cores": os.cpu_count(), "load_average": load, "platform": platform.platform(),
            "python": platform.python_version()}


def player_identity(spec: str) -> str:
    """What a cached match of ``spec`` is keyed by: the spec, plus the SHA-256 of the file for a shipped
    agent or a checkpoint path -- so a retrained ``scratch`` (same name, new weights) plays its matches again
    instead of reusing the old file's results."""

    path = shipped_path(spec) if spec in SHIPPED_AGENTS else Path(spec) if is_checkpoint_spec(spec) else None
    if path is None or not path.is_file():
        return spec
    return f"{spec}@sha256:{hashlib.sha256(path.read_bytes()).hexdigest()[:16]}"


def _key(a: str, b: str, games: int, seed: int, rules: SmearRules) -> str:
    return json.dumps([player_identity(a), player_identity(b), games, seed, rules.to_dict()], sort_keys=True)


def _read_cache(path: Path | None) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    if path is None or not path.is_file():
        return out
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
            out[rec["key"]] = rec
        except (json.JSONDecodeError, KeyError, TypeError):
            continue  # a line cut by an interrupted write: that match is played again
    return out


def run_ladder(
    players: Sequence[str] = DEFAULT_PLAYERS,
    games: int = DEFAULT_GAMES,
    slow_games: int = DEFAULT_SLOW_GAMES,
    scale: float = 1.0,
    seed: int = DEFAULT_SEED,
    workers: int = 1,
    rules: SmearRules | None = None,
    n_boot: int = DEFAULT_BOOT,
    cache: str | Path | None = None,
    log: Callable[[str], None] | None = None,
    anchor: str | None = None,
) -> dict[str, Any]:
    """Play the round robin and rate it (see the module docstring); returns the JSON document."""
    players = [p.strip() for p in players]
    if len(players) < 2:
        raise LadderError(f"a ladder needs at least 2 players, got {players!r}")
    if len(set(players)) != len(players):
        dup = sorted({p for p in players if players.count(p) > 1})
        raise LadderError(f"ladder players must be distinct; given more than once: {dup!r}")
    for name, v in (("games", games), ("slow_games", slow_games), ("workers", workers), ("n_boot", n_boot)):
        if isinstance(v, bool) or not isinstance(v, int) or v < 1:
            raise LadderError(f"{name} must be an integer >= 1, got {v!r}")
    if isinstance(scale, bool) or not isinstance(scale, int | float) or not 0 < scale <= 100:
        raise LadderError(f"scale must be a number in (0, 100], got {scale!r}")
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise LadderError(f"seed must be a non-negative integer, got {seed!r}")
    if anchor is None:
        anchor = "heuristic" if "heuristic" in players else players[0]
    if anchor not in players:
        raise LadderError(f"anchor {anchor!r} is not one of the players {players!r}")
    rules = rules if rules is not None else SmearRules()
    log = log or (lambda line: print(line, file=sys.stderr, flush=True))
    cache_path = Path(cache) if cache is not None else None
    cached = _read_cache(cache_path)
    start = machine()
    t0 = time.perf_counter()
    matches: list[dict[str, Any]] = []
    scores: dict[tuple[int, int], np.ndarray] = {}
    for i in range(len(players)):
        for j in range(i + 1, len(players)):
            a, b = players[i], players[j]
            n = games_for(a, b, games, slow_games, scale)
            key = _key(a, b, n, seed, rules)
            rec = cached.get(key)
            if rec is None:
                res = run_match(a, b, games=n, rules=rules, seed=seed, workers=workers)
                rec = {"key": key, "summary": res.summary(), "pair_scores": res.pair_scores.tolist(),
                       "played": {"date": _now(), "load_average": machine()["load_average"]}}
                if cache_path is not None:
                    cache_path.parent.mkdir(parents=True, exist_ok=True)
                    with open(cache_path, "a", encoding="utf-8") as f:
                        f.write(json.dumps(rec) + "\n")
                how = f"{res.seconds:.0f} s"
            else:
                how = "cached"
            s = rec["summary"]
            lo, hi = s["win_rate_a_ci95"]
            log(f"{a} vs {b}: {s['win_rate_a']:.1%} [{lo:.1%}, {hi:.1%}] of {s['games']} games ({how})")
            matches.append({"a": a, "b": b, "games": s["games"], "engine_seconds": s["seconds"],
                            "played": rec.get("played"), "summary": s, "pair_scores": rec["pair_scores"]})
            scores[(i, j)] = np.asarray(rec["pair_scores"], dtype=float)
    rng = np.random.default_rng(np.random.SeedSequence([seed, TAG_BOOT, 1]))
    ratings = rate_players(players, scores, rng, anchor=players.index(anchor), n_boot=n_boot)
    return {
        "format": FORMAT,
        "players": players,
        "anchor": anchor,
        "seed": seed,
        "games": games,
        "slow_games": slow_games,
        "scale": scale,
        "rules": rules.to_dict(),
        "n_boot": n_boot,
        "rating_method": "Bradley-Terry (Elo scale, 400*log10), 1 virtual drawn game per matchup as prior; "
                         "95% percentile bootstrap over duplicate pairs",
        "ratings": sorted(ratings, key=lambda r: -float(r["rating"])),
        "matches": matches,
        "date": _now(),
        "machine": {"start": start, "end": machine()},
        "seconds": round(time.perf_counter() - t0, 1),
    }


# ------------------------------------------------------------------------------------------- page
def _timing(doc: dict[str, Any]) -> str:
    """``"; 6.1 s a game in pairs with a pimc or cmd: player, 0.02 s in the others"`` (wall-clock, as
    played, cached matches included at their own time)."""
    parts = []
    for label, slow in (("in pairs with a pimc or cmd: player", True), ("in the others", False)):
        ms = [m for m in doc["matches"] if is_slow(m["a"]) or is_slow(m["b"])] if slow else [
            m for m in doc["matches"] if not (is_slow(m["a"]) or is_slow(m["b"]))]
        n = sum(m["games"] for m in ms)
        if n:
            parts.append(f"{sum(m.get('engine_seconds') or 0.0 for m in ms) / n:.3g} s a game {label}")
    return "; " + ", ".join(parts) if parts else ""


def _played(doc: dict[str, Any]) -> str:
    dates = sorted({m["played"]["date"] for m in doc["matches"] if m.get("played")})
    if not dates:
        return "(not recorded)"
    return dates[0] if len(dates) == 1 else f"{dates[0]} to {dates[-1]}"


def _loads(doc: dict[str, Any]) -> str:
    loads = [m["played"]["load_average"] for m in doc["matches"]
             if m.get("played") and m["played"].get("load_average")]
    if not loads:
        return "(not recorded)"
    first = [round(x, 1) for x in loads[0]]
    low = min(x[0] for x in loads)
    high = max(x[0] for x in loads)
    if low == high:
        return str(first)
    return f"{first} after the first match, then a 1-minute figure from {low:.1f} to {high:.1f}"


def _pct(x: float | None) -> str:
    return "–" if x is None else f"{100 * x:.1f}%"


def read_references(path: str | Path) -> list[dict[str, Any]]:
    """The matches of a references file: ``{"format": REFERENCES_FORMAT, "matches": [...]}``, each match with
    the keys of :data:`REFERENCE_KEYS` (``win_rate`` and ``ci95`` of ``agent`` against ``against``, a ladder
    player; ``command`` the smear-eval line that played it; ``played`` its date)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError) as e:
        raise LadderError(f"references file {str(path)!r}: {e}") from None
    if not isinstance(data, dict) or data.get("format") != REFERENCES_FORMAT or \
            not isinstance(data.get("matches"), list):
        raise LadderError(f"references file {str(path)!r}: expected an object with format "
                          f"{REFERENCES_FORMAT!r} and a list 'matches'")
    def fits(value: Any, kind: type) -> bool:
        if kind is list:  # an interval: two numbers
            return isinstance(value, list) and len(value) == 2 and all(fits(v, float) for v in value)
        return isinstance(value, (int, float) if kind is float else kind) and not isinstance(value, bool)

    for i, m in enumerate(data["matches"]):
        bad = [k for k, t in REFERENCE_KEYS.items() if not isinstance(m, dict) or not fits(m.get(k), t)]
        if bad or not 0 < m["ci95"][0] <= m["win_rate"] <= m["ci95"][1] < 1:
            raise LadderError(f"references file {str(path)!r}: match {i} needs {', '.join(bad) or 'ci95'} "
                              f"(keys {', '.join(REFERENCE_KEYS)}; ci95 and margin_ci95 two numbers; "
                              "0 < ci95[0] <= win_rate <= ci95[1] < 1)")
    return data["matches"]


def _implied(rating: float, w: float) -> float:
    return rating + 400 * float(np.log10(w / (1 - w)))


def _references_section(doc: dict[str, Any], refs: Sequence[dict[str, Any]]) -> list[str]:
    rating = {r["player"]: r["rating"] for r in doc["ratings"]}
    unknown = sorted({m["against"] for m in refs} - set(rating))
    if unknown:
        raise LadderError(f"references against {', '.join(unknown)}: not ladder players "
                          f"({', '.join(rating)})")
    lines = ["## Outside the round robin", "",
             "Matches of other agents against ladder players, each on its own seed, with the rating its "
             "win rate implies on this page's scale (the opponent's rating + 400 log10 of the odds, the "
             "interval's ends alike) and the margin per hand with its pair-bootstrap interval.", "",
             "| agent | against | seed | games | win rate [95%] | margin per hand | implied rating |",
             "|---|---|---:|---:|---|---|---|"]
    for m in refs:
        r, (lo, hi), (mlo, mhi) = rating[m["against"]], m["ci95"], m["margin_ci95"]
        lines.append(f"| `{m['agent']}` | `{m['against']}` | {m['seed']} | {m['games']:,} | "
                     f"{_pct(m['win_rate'])} [{_pct(lo)}, {_pct(hi)}] | {m['margin']:+.2f} [{mlo:+.2f}, "
                     f"{mhi:+.2f}] | {_implied(r, m['win_rate']):+.0f} [{_implied(r, lo):+.0f}, "
                     f"{_implied(r, hi):+.0f}] |")
    lines += ["", "Played " + ", ".join(sorted({m["played"] for m in refs})) + " with:", "", "```bash",
              *(m["command"] for m in refs), "```", ""]
    return lines


def render_markdown(doc: dict[str, Any], command: str = "",
                    references: Sequence[dict[str, Any]] = ()) -> str:
    """The ladder page (docs/ladder.md) of a :func:`run_ladder` document; ``references``: matches from
    :func:`read_references`, listed below the round robin."""
    players = doc["players"]
    m0 = doc["machine"]["start"]
    counts = sorted({m["games"] for m in doc["matches"]})
    lines = [
        "# Ladder: every agent on one scale",
        "",
        "<!-- generated by smear_env.evaluation.ladder (make ladder); do not edit by hand -->",
        "",
        f"A round robin in duplicate games (each pair of games on one deal sequence with the seats "
        f"exchanged), rated by a Bradley–Terry fit on the Elo scale anchored at `{doc['anchor']}` = 0, "
        f"with 95% bootstrap intervals over the duplicate pairs (an agent that loses nearly every game, "
        f"as `random` does, gets a distance set by the fit's prior of one drawn game per pair: read it as "
        f"'far below'). Default rules. Pairs of vectorisable agents "
        f"play on the batched engine, the others on the reference engine; the same games either way.",
        "",
        "| rank | agent | rating | 95% interval |",
        "|---:|---|---:|---|",
    ]
    for k, r in enumerate(doc["ratings"], 1):
        lines.append(f"| {k} | `{r['player']}` | {r['rating']:+.0f} | [{r['lo']:+.0f}, {r['hi']:+.0f}] |")
    lines += [
        "",
        "## Every pair",
        "",
        "Win rate of the row agent against the column agent (a draw counts ½), its 95% interval (Wilson "
        "over duplicate pairs, with the pairs' design effect), and the games played.",
        "",
        "| agent | " + " | ".join(f"`{p}`" for p in players) + " |",
        "|---|" + "---|" * len(players),
    ]
    cell: dict[tuple[str, str], str] = {}
    for m in doc["matches"]:
        s = m["summary"]
        w, (lo, hi) = s["win_rate_a"], s["win_rate_a_ci95"]
        cell[(m["a"], m["b"])] = f"{_pct(w)} [{_pct(lo)}, {_pct(hi)}] ({m['games']:,})"
        cell[(m["b"], m["a"])] = (f"{_pct(1 - w)} [{_pct(1 - hi)}, {_pct(1 - lo)}] ({m['games']:,})"
                                  if w is not None else "–")
    for p in players:
        lines.append(f"| `{p}` | " + " | ".join("" if p == q else cell[(p, q)] for q in players) + " |")
    total = sum(m["games"] for m in doc["matches"])
    lines += [
        "",
        "## How it was made",
        "",
        f"- Games per pair: {doc['games']:,} × scale {doc['scale']:g} for pairs of vectorisable agents, "
        f"{doc['slow_games']:,} × scale {doc['scale']:g} when either agent is searched or external "
        f"(`pimc`, `cmd:`); played: {', '.join(f'{c:,}' for c in counts)} ({total:,} games in all).",
        f"- Seed: {doc['seed']} (every pair plays the deal sequences of this seed); bootstrap resamples: "
        f"{doc['n_boot']}.",
        f"- Date: matches played {_played(doc)}; page generated {doc['date']}. Playing time "
        f"{sum(m.get('engine_seconds') or 0.0 for m in doc['matches']) / 60:.1f} minutes{_timing(doc)}.",
        f"- Machine: {m0['cores']} cores; load average (1, 5, 15 minutes) {_loads(doc)} as the matches "
        f"finished (other work shared the cores); {m0['platform']}, Python {m0['python']}.",
        f"- Reproduce: `{command or 'make ladder'}` (the same seed and games give the same table).",
        "",
    ]
    if references:
        lines += _references_section(doc, references)
    short = [m for m in doc["matches"]
             if m["games"] < (DEFAULT_SLOW_GAMES if is_slow(m["a"]) or is_slow(m["b"]) else DEFAULT_GAMES)]
    if short:
        lines.insert(4, f"**A reduced ladder**: {len(short)} of {len(doc['matches'])} pairs played fewer "
                        f"games than the full ladder's {DEFAULT_GAMES:,} per pair "
                        f"({DEFAULT_SLOW_GAMES:,} for pairs with a pimc or cmd: player); their intervals are "
                        f"wider accordingly.\n")
    return "\n".join(lines)


# ------------------------------------------------------------------------------------------- CLI
def split_players(text: str) -> list[str]:
    """``--players`` as specs: split at commas, except that a piece of the form ``key=value`` continues
    the spec before it (``pimc:samples=2,bid_samples=8`` is one player)."""
    out: list[str] = []
    for piece in text.split(","):
        head = piece.split("=", 1)[0]
        if out and "=" in piece and ":" not in head and " " not in head and ":" in out[-1]:
            out[-1] += "," + piece
        else:
            out.append(piece)
    return [p.strip() for p in out if p.strip()]


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(prog="python -m smear_env.evaluation.ladder",
                                 description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--add", action="append", default=[], metavar="SPEC",
                    help="another player (any agent spec, cmd: bots included); repeatable")
    ap.add_argument("--players", help="comma-separated players instead of the default ones "
                                      f"({', '.join(DEFAULT_PLAYERS)})")
    ap.add_argument("--games", type=int, default=DEFAULT_GAMES,
                    help=f"games per pair (default {DEFAULT_GAMES})")
    ap.add_argument("--slow-games", type=int, default=DEFAULT_SLOW_GAMES,
                    help=f"games per pair with a pimc or cmd: player (default {DEFAULT_SLOW_GAMES})")
    ap.add_argument("--scale", type=float, default=1.0, help="multiply both game counts (quick: 0.05)")
    ap.add_argument("--seed", type=int, default=DEFAULT_SEED, help=f"seed (default {DEFAULT_SEED})")
    ap.add_argument("--workers", type=int, default=1, help="processes per match (default 1)")
    ap.add_argument("--boot", type=int, default=DEFAULT_BOOT, help="bootstrap resamples of the ratings")
    ap.add_argument("--anchor", help="the player rated 0 (default heuristic)")
    ap.add_argument("--cache", help="JSON-lines file of finished matches (reused when rerun)")
    ap.add_argument("--out", default="docs/ladder.md", help="Markdown page to write (default docs/ladder.md)")
    ap.add_argument("--json", help="JSON file to write (default: the page's path with .json)")
    ap.add_argument("--references", metavar="FILE",
                    help="matches of other agents against ladder players to list below the round robin")
    ap.add_argument("--render-only", action="store_true",
                    help="write the page again from the JSON file (and --references); play no game")
    return ap


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    for var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(var, "1")  # one BLAS thread in the worker processes (started after this)
    players = split_players(args.players) if args.players else list(DEFAULT_PLAYERS)
    players += args.add
    command = " ".join(["python -m smear_env.evaluation.ladder",
                        *map(shlex.quote, sys.argv[1:] if argv is None else argv)])
    out = Path(args.out)
    js = Path(args.json) if args.json else out.with_suffix(".json")
    try:
        refs = read_references(args.references) if args.references else []
        if args.render_only:
            doc = json.loads(js.read_text(encoding="utf-8"))
            out.write_text(render_markdown(doc, doc.get("command", ""), refs), encoding="utf-8")
            print(f"wrote {out} from {js}", file=sys.stderr)
            return 0
        doc = run_ladder(players, args.games, args.slow_games, args.scale, args.seed, args.workers,
                         n_boot=args.boot, cache=args.cache, anchor=args.anchor)
        page = render_markdown(doc, command, refs)
    except (LadderError, ValueError, OSError) as e:
        print(f"ladder: error: {str(e)[:2000]}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("ladder: interrupted" + (f" (finished matches are in {args.cache})" if args.cache else ""),
              file=sys.stderr)
        return 130
    out.parent.mkdir(parents=True, exist_ok=True)
    doc["command"] = command
    out.write_text(page, encoding="utf-8")
    js.write_text(json.dumps(doc, indent=1) + "\n", encoding="utf-8")
    for r in doc["ratings"]:
        print(f"{r['player']:40s} {r['rating']:+7.0f}  [{r['lo']:+.0f}, {r['hi']:+.0f}]")
    print(f"wrote {out} and {js}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
