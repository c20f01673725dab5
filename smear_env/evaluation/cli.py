"""``smear-eval``: duplicate evaluation of two teams of agents (or a tournament) from the command line.

The rule flags are derived from :class:`~smear_env.core.config.SmearRules`
(:func:`smear_env.tables.arguments.add_rule_arguments`); the matches run in
:mod:`smear_env.evaluation.duplicate`; the tables print :mod:`smear_env.evaluation.results` summaries. User
errors (a bad agent spec, option or path, Ctrl-C) end with one ``smear-eval: error: ...`` line, never a
traceback.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shlex
import signal
import sys
import tempfile
import threading
from collections.abc import Sequence
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn
from rich.table import Table

from ..agents.protocol import BotError
from ..agents.registry import make_agent
from ..agents.shipped import SHIPPED_AGENTS, shipped_path
from ..core.actions import short_repr
from ..engine.game import POINT_NAMES
from ..tables.arguments import add_rule_arguments, check_run_arguments, rules_from_args
from .duplicate import (
    BACKENDS,
    DEFAULT_GAMES,
    DEFAULT_MAX_HANDS,
    ENGINES,
    MAX_GAMES,
    run_match,
    run_tournament,
)

MAX_WORKERS = 1024
"""The most worker processes ``--workers`` accepts."""


def _pct(x: float | None) -> str:
    return "-" if x is None else f"{100 * x:.1f}%"


def _f(x: float | None, nd: int = 2) -> str:
    return "-" if x is None else f"{x:.{nd}f}"


def match_table(s: dict[str, Any]) -> Any:
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
    t = Table(title=f"ratings (Bradley-Terry, Elo scale, {s['anchor']} = 0)")
    t.add_column("rank", justify="right")
    t.add_column("agent")
    t.add_column("rating", justify="right")
    t.add_column("95% CI", justify="right")
    for k, r in enumerate(sorted(s["ratings"], key=lambda r: -r["rating"]), 1):
        t.add_row(str(k), str(r["player"]), f"{r['rating']:.0f}", f"[{r['lo']:.0f}, {r['hi']:.0f}]")
    return t


def pairwise_table(s: dict[str, Any]) -> Any:
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
                    "'random', 'heuristic', 'pimc[:key=value,...]', a shipped agent "
                    f"({', '.join(SHIPPED_AGENTS)}), 'cmd:<command line>', a checkpoint path, a search "
                    "'rollout:key=value,...' or 'split:bid=<spec>,play=<spec>' (docs/agents.md).",
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
    ap.add_argument("--engine", choices=ENGINES, default="auto",
                    help="auto: the batched engine when both teams can be vectorised (random, heuristic, "
                         "checkpoints), else the reference; batched / reference: force one (same results)")
    ap.add_argument("--ray-address", metavar="ADDR",
                    help="--backend ray: 'auto' or host:port of a running cluster (default: a local Ray)")
    ap.add_argument("--json", action="store_true", help="print machine-readable results to stdout")
    ap.add_argument("--records", metavar="FILE", help="write every game as smear-record/1 JSON lines")
    ap.add_argument("--max-hands", type=int, default=DEFAULT_MAX_HANDS,
                    help=f"truncate a game after this many deals, R21 (default {DEFAULT_MAX_HANDS})")
    ap.add_argument("--anchor", help="tournament: the agent rated 0 (default random, else the first)")
    add_rule_arguments(ap)
    return ap


def _interrupt(signum: int, frame: Any) -> None:
    raise KeyboardInterrupt(f"signal {signum}")


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``smear-eval``; returns the exit status. Ctrl-C and SIGTERM, at any point, end with one line
    (status 130); a closed stdout (``smear-eval ... --json | head -1``) ends quietly with status 141."""

    old = {}
    if threading.current_thread() is threading.main_thread():
        old = {sig: signal.signal(sig, _interrupt) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        return _main(argv)
    except KeyboardInterrupt:
        print("smear-eval: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # the reader of stdout went away (`| head`): no traceback; the interpreter's final flush of stdout
        # would fail again, so stdout now points at /dev/null
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 141
    finally:
        for sig, handler in old.items():
            signal.signal(sig, handler)


def _spec_files(spec: str) -> list[str]:
    """The files an agent spec reads: a checkpoint path, a shipped agent's file, the files named on a
    ``cmd:`` bot's command line."""

    spec = spec.strip()
    if spec.startswith("cmd"):  # a bot: its program and script files

        try:
            words = shlex.split(spec.partition(":")[2])
        except ValueError:
            return []
        return [w for w in words if os.path.isfile(w)]
    if spec in SHIPPED_AGENTS:
        try:
            return [str(shipped_path(spec))]
        except (ValueError, FileNotFoundError):
            return []
    return [spec] if os.path.exists(spec) else []


def same_file(a: str, b: str) -> bool:
    """Whether paths ``a`` and ``b`` name the same file (same resolved path, or the same inode)."""
    try:
        if os.path.exists(a) and os.path.exists(b):
            return os.path.samefile(a, b)
    except OSError:
        pass
    return os.path.realpath(a) == os.path.realpath(b)


class RecordsFile:
    """``--records FILE``, written atomically: the games go to a temporary file in FILE's folder
    (``FILE.<random>.tmp``) that replaces FILE when the match ends (finished, stopped by a bot or
    interrupted), so a failed run never truncates an existing FILE. A FILE that exists and is not a
    regular file (``/dev/stdout``, a pipe) is written directly."""

    def __init__(self, path: str) -> None:
        self.path = path
        target = os.path.realpath(path)
        self.tmp: str | None = None
        if os.path.exists(target) and not os.path.isfile(target):
            self.file = open(path, "w", encoding="utf-8")  # noqa: SIM115
            return

        fd, self.tmp = tempfile.mkstemp(prefix=os.path.basename(target) + ".", suffix=".tmp",
                                        dir=os.path.dirname(target) or ".")
        self.target = target
        self.file = os.fdopen(fd, "w", encoding="utf-8")

    def write(self, text: str) -> None:
        self.file.write(text)

    def close(self) -> None:
        """Close, and put the temporary file in place (removed instead when that fails)."""
        try:
            self.file.close()
            if self.tmp is not None:
                os.chmod(self.tmp, 0o644)
                os.replace(self.tmp, self.target)
                self.tmp = None
        finally:
            if self.tmp is not None and os.path.exists(self.tmp):
                os.unlink(self.tmp)


def _close_records(rec_file: RecordsFile, path: str) -> bool:
    """Close ``--records`` (put it in place); False, with one line, when that fails."""
    try:
        rec_file.close()
        return True
    except OSError as e:
        print(f"smear-eval: error: --records {path!r}: {e.strerror or e}", file=sys.stderr)
        return False


def _main(argv: Sequence[str] | None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    rules = rules_from_args(args, ap)
    if not 2 <= args.games <= MAX_GAMES or args.games % 2:
        ap.error(f"--games must be an even number from 2 to {MAX_GAMES:,} (duplicate pairs), not "
                 f"{short_repr(args.games)}")
    if not 1 <= args.workers <= MAX_WORKERS:
        ap.error(f"--workers must be from 1 to {MAX_WORKERS}, not {short_repr(args.workers)}")
    check_run_arguments(args, ap)
    if args.backend == "ray":
        if importlib.util.find_spec("ray") is None:
            ap.error('--backend ray needs ray: pip install -c constraints/rllib.txt "smear-rl[rllib]"')
        if args.engine == "batched":
            ap.error("--engine batched runs on --backend local")
    elif args.ray_address:
        ap.error("--ray-address is only used with --backend ray")
    tournament = args.tournament or len(args.agents) > 2
    if len(args.agents) < 2:
        ap.error("give two agents (TEAM_A TEAM_B), or several with --tournament")
    if args.anchor is not None and args.anchor.strip() not in [a.strip() for a in args.agents]:
        ap.error(f"--anchor {args.anchor!r} is not one of the agents: {', '.join(args.agents)}")
    if tournament:
        names = [a.strip() for a in args.agents]
        twice = sorted({n for n in names if names.count(n) > 1})
        if twice:
            ap.error(f"tournament: {', '.join(map(repr, twice))} given more than once; a tournament rates "
                     "different players, give each once (to measure an agent against itself, play it as "
                     "a match: smear-eval X X)")
    if args.records:
        for spec in args.agents:
            for f in _spec_files(spec):
                if same_file(args.records, f):
                    ap.error(f"--records {args.records!r} is the checkpoint or program of agent {spec!r}: "
                             "writing the records there would destroy it; pick another file")
    # check the specs up front: a clear error instead of a traceback from a worker

    for spec in args.agents:
        try:
            make_agent(spec, rules)
        except (ValueError, FileNotFoundError) as e:
            ap.error(str(e))

    err = Console(stderr=True)
    n_matches = len(args.agents) * (len(args.agents) - 1) // 2 if tournament else 1
    try:
        rec_file = RecordsFile(args.records) if args.records else None
    except OSError as e:
        ap.error(f"--records {args.records!r}: cannot write there ({e.strerror or e})")
    written = 0
    write = None
    if rec_file is not None:
        def write(rec: dict[str, Any]) -> None:
            nonlocal written
            rec_file.write(json.dumps(rec, separators=(",", ":")) + "\n")
            written += 1
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
                                     backend=args.backend, ray_address=args.ray_address, engine=args.engine)
                summary = res.summary()
            else:
                summary = run_match(args.agents[0], args.agents[1], args.games, rules, args.seed,
                                    args.workers, args.max_hands, records=write, progress=advance,
                                    backend=args.backend, ray_address=args.ray_address,
                                    engine=args.engine).summary()
    except BotError as e:  # a protocol bot failed: the match stops, finished games are kept
        kept = f"\nthe finished games are in {args.records}" if args.records else ""
        err.print(f"smear-eval: match stopped: {e}{kept}", markup=False, highlight=False)
        return 1
    except KeyboardInterrupt:
        kept = f"; {written} finished games are in {args.records}" if args.records else ""
        print(f"smear-eval: interrupted{kept}", file=sys.stderr)
        return 130
    except OSError as e:
        print(f"smear-eval: error: --records {args.records!r}: {e.strerror or e}", file=sys.stderr)
        return 1
    finally:
        if rec_file is not None:
            closed = _close_records(rec_file, args.records)
    if rec_file is not None and not closed:
        return 1
    if args.json:
        print(json.dumps(summary, indent=2))
        sys.stdout.flush()  # a closed pipe raises here (BrokenPipeError, handled in main), not at exit
        return 0
    out = Console()
    if tournament:
        for m in summary["matches"]:
            out.print(match_table(m))
        out.print(pairwise_table(summary))
        out.print(ratings_table(summary))
    else:
        out.print(match_table(summary))
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
