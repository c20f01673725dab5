"""Why does learning stall? Bid statistics and the "which half is weak" evaluation.

* :class:`BidStats` reads ``smear-record/1`` game records (as
  :func:`~smear_env.evaluation.duplicate.run_match` passes them to its ``records`` callback, one at a time,
  so nothing is kept) and counts, per player name, every bid decision (pass / 2 / 3 / 4), the contracts it
  won at each level and how many it made.
* :func:`match_with_bids` plays a duplicate match on the batched engine and returns its summary plus those
  counts for both teams. A team is an agent spec, a ``split:bid=<spec>,play=<spec>`` composite
  (:mod:`smear_env.agents.composite`: the first agent bids and names trump, the second discards and plays) or
  a batched agent.
* :func:`which_half` plays ``agent``, ``split:bid=agent,play=heuristic`` and
  ``split:bid=heuristic,play=agent`` against ``heuristic`` on the same deals.
* A team may also be ``ensemble:<ckpt>+<ckpt>+...`` (:class:`EnsemblePolicy`): greedy on the mean of the
  checkpoints' log-probabilities over the legal actions (a measurement of what averaging several trained
  policies is worth; not an agent of the registry).

Command line::

    python -m training.diagnostics which-half scratch --games 4000 --seed 2501 [--json out.json]
    python -m training.diagnostics match split:bid=scratch,play=heuristic heuristic --games 4000 --seed 2501
    python -m training.diagnostics match "ensemble:default+runs/a/checkpoints/latest.safetensors" heuristic \
        --games 2000 --seed 2501
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from smear_env.agents.composite import SPLIT_PREFIX, composite_from_spec
from smear_env.agents.rollout import ROLLOUT_PREFIX, rollout_from_spec
from smear_env.config import SmearRules

ENSEMBLE_PREFIX = "ensemble:"

BID_LEVELS = ("pass", "2", "3", "4")


def _level(bid: Any) -> str:
    if bid == "pass" or bid == 0:
        return "pass"
    if bid in (2, 3, 4):
        return str(bid)
    raise ValueError(f"record bid {bid!r} is not 'pass', 2, 3 or 4")


@dataclass
class PlayerBids:
    """One player's bid counts over a set of games."""

    decisions: dict[str, int] = field(default_factory=lambda: dict.fromkeys(BID_LEVELS, 0))
    """Bid decisions by level (each seat's bid in each dealt hand, thrown-in hands included)."""
    contracts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(BID_LEVELS[1:], 0))
    """Contracts won (the high bid of a played hand) by level."""
    made: dict[str, int] = field(default_factory=lambda: dict.fromkeys(BID_LEVELS[1:], 0))
    """Contracts made by level."""
    hands: int = 0
    """Hands played (scored) with this player at the table, counted once per seat it holds."""

    def summary(self) -> dict[str, Any]:
        n = sum(self.decisions.values())
        won = sum(self.contracts.values())
        made = sum(self.made.values())
        return {
            "bid_decisions": n,
            "bid_share": {k: (v / n if n else None) for k, v in self.decisions.items()},
            "contracts": dict(self.contracts),
            "contracts_per_hand_seat": won / self.hands if self.hands else None,
            "contract_success": made / won if won else None,
            "success_by_level": {k: (self.made[k] / c if c else None) for k, c in self.contracts.items()},
            "average_contract": (sum(int(k) * c for k, c in self.contracts.items()) / won) if won else None,
        }


class BidStats:
    """Streaming bid statistics over game records, per player name (``record["players"][seat]``)."""

    def __init__(self) -> None:
        self.players: dict[str, PlayerBids] = {}

    def __call__(self, record: dict[str, Any]) -> None:
        self.add(record)

    def add(self, record: dict[str, Any]) -> None:
        names = record["players"]
        for hand in record["hands"]:
            for b in hand.get("bids", ()):
                self._of(names[b["seat"]]).decisions[_level(b["bid"])] += 1
            if "points" not in hand:  # thrown in: no contract
                continue
            for seat in range(4):
                self._of(names[seat]).hands += 1
            bidder, contract = hand.get("bidder"), hand.get("contract")
            if bidder is None or contract is None:
                continue
            p = self._of(names[bidder])
            p.contracts[str(contract)] += 1
            p.made[str(contract)] += int(bool(hand.get("made_contract")))

    def _of(self, name: str) -> PlayerBids:
        p = self.players.get(name)
        if p is None:
            p = self.players[name] = PlayerBids()
        return p

    def summary(self) -> dict[str, Any]:
        return {name: p.summary() for name, p in self.players.items()}


class EnsemblePolicy:
    """Several checkpoints' numpy policies as one: ``logits`` are the mean over the members of their
    log-softmax over the legal actions (``-inf`` elsewhere), so a greedy player takes the action with the
    highest mean log-probability."""

    def __init__(self, policies: Sequence[Any]) -> None:
        if len(policies) < 2:
            raise ValueError(f"an ensemble needs at least 2 checkpoints, not {len(policies)}")
        self.policies = list(policies)

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        legal = mask.astype(bool)
        acc = np.zeros(legal.shape, dtype=np.float64)
        for pol in self.policies:
            lg = np.where(legal, pol.logits(obs, legal).astype(np.float64), -np.inf)
            lg -= lg.max(axis=1, keepdims=True)
            acc += np.where(legal, lg - np.log(np.exp(lg).sum(axis=1, keepdims=True)), 0.0)
        return np.where(legal, acc / len(self.policies), -np.inf).astype(np.float32)


def ensemble_from_spec(spec: str, rules: SmearRules) -> Any:
    """The batched greedy agent of ``ensemble:<ckpt>+<ckpt>+...`` (checkpoint paths or shipped agent
    names, each checked against ``rules`` as ``smear-eval`` checks one)."""
    from smear_env.agents.batched import BatchedCheckpointAgent, make_batched_agent

    parts = [p.strip() for p in spec[len(ENSEMBLE_PREFIX):].split("+")]
    if any(not p for p in parts):
        raise ValueError(f"team {spec!r}: expected ensemble:<checkpoint>+<checkpoint>+... with no empty part")
    members = [make_batched_agent(p, rules) for p in parts]
    for p, m in zip(parts, members, strict=True):
        if not isinstance(m, BatchedCheckpointAgent):
            raise ValueError(f"team {spec!r}: {p!r} is not a checkpoint file or a shipped agent")
    return BatchedCheckpointAgent(EnsemblePolicy([m.policy for m in members]), spec)


def team(spec: Any, rules: SmearRules) -> Any:
    """A run_match team: a ``split:`` spec as a composite batched agent, an ``ensemble:`` spec as
    :func:`ensemble_from_spec`'s agent, a ``rollout:`` spec as
    :func:`~smear_env.agents.rollout.rollout_from_spec`'s search agent, anything else unchanged."""
    if isinstance(spec, str) and spec.strip().startswith(SPLIT_PREFIX):
        return composite_from_spec(spec.strip(), rules)
    if isinstance(spec, str) and spec.strip().startswith(ENSEMBLE_PREFIX):
        return ensemble_from_spec(spec.strip(), rules)
    if isinstance(spec, str) and spec.strip().startswith(ROLLOUT_PREFIX):
        return rollout_from_spec(spec.strip(), rules)
    return spec


def match_with_bids(team_a: Any, team_b: Any, games: int, seed: int, rules: SmearRules | None = None,
                    workers: int = 1) -> dict[str, Any]:
    """A duplicate match (batched engine) with bid statistics: ``{"summary": run_match summary, "bids":
    {player name: PlayerBids.summary()}}``."""
    from smear_env.evaluation.duplicate import run_match

    rules = rules if rules is not None else SmearRules()
    stats = BidStats()
    a, b = team(team_a, rules), team(team_b, rules)
    composite = not isinstance(a, str) or not isinstance(b, str)
    res = run_match(a, b, games=games, rules=rules, seed=seed, records=stats,
                    engine="batched" if composite else "auto", workers=1 if composite else workers)
    return {"summary": res.summary(), "bids": stats.summary()}


def which_half(agent: str, games: int, seed: int, baseline: str = "heuristic",
               rules: SmearRules | None = None, workers: int = 1) -> dict[str, Any]:
    """``agent``, its bidding with ``baseline``'s play and ``baseline``'s bidding with its play, each
    against ``baseline`` over the same ``games`` duplicate games (seed ``seed``)."""
    out = {}
    for spec in (agent, f"split:bid={agent},play={baseline}", f"split:bid={baseline},play={agent}"):
        out[spec] = match_with_bids(spec, baseline, games, seed, rules, workers)
    return out


def _row(spec: str, r: dict[str, Any]) -> str:
    s = r["summary"]
    lo, hi = s["win_rate_a_ci95"]
    return (f"| {spec} | {100 * s['win_rate_a']:.1f}% [{100 * lo:.1f}, {100 * hi:.1f}] | "
            f"{s['margin_per_hand_a']:+.3f} | {s['games']} |")


def _bid_row(name: str, b: dict[str, Any]) -> str:
    share = b["bid_share"]
    sl = b["success_by_level"]

    def pct(x: float | None) -> str:
        return "-" if x is None else f"{100 * x:.1f}%"

    return (f"| {name} | " + " | ".join(pct(share[k]) for k in BID_LEVELS)
            + f" | {pct(b['contract_success'])} | " + " / ".join(pct(sl[k]) for k in BID_LEVELS[1:])
            + f" | {'-' if b['average_contract'] is None else round(b['average_contract'], 2)}"
            + f" | {b['bid_decisions']} |")


def markdown(results: dict[str, dict[str, Any]]) -> str:
    """Win-rate table and bid table of :func:`which_half` / :func:`match_with_bids` results."""
    lines = ["| team A (vs team B) | win rate A [95% CI] | margin/hand | games |", "|---|---|---|---|"]
    lines += [_row(spec, r) for spec, r in results.items()]
    lines += ["", "| player | pass | bid 2 | bid 3 | bid 4 | contracts made | made at 2 / 3 / 4 "
              "| avg contract | bid decisions |", "|---|---|---|---|---|---|---|---|---|"]
    seen = set()
    for r in results.values():
        for name, b in r["bids"].items():
            if name not in seen:
                seen.add(name)
                lines.append(_bid_row(name, b))
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m training.diagnostics", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    w = sub.add_parser("which-half", help="agent, its bids + baseline play, baseline bids + its play")
    w.add_argument("agent")
    w.add_argument("--baseline", default="heuristic")
    m = sub.add_parser("match", help="one match with bid statistics (team specs may be split:bid=..,play=..)")
    m.add_argument("team_a")
    m.add_argument("team_b")
    for s in (w, m):
        s.add_argument("--games", type=int, default=4000)
        s.add_argument("--seed", type=int, required=True)
        s.add_argument("--workers", type=int, default=1)
        s.add_argument("--json", default=None, help="write the full results here")
    args = p.parse_args(argv)
    try:
        if args.cmd == "which-half":
            results = which_half(args.agent, args.games, args.seed, args.baseline, workers=args.workers)
        else:
            results = {args.team_a: match_with_bids(args.team_a, args.team_b, args.games, args.seed,
                                                    workers=args.workers)}
    except (ValueError, FileNotFoundError, TypeError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(markdown(results))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
