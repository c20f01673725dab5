"""Bid statistics of a duplicate match: how often each player passes or bids 2, 3 or 4, and makes it.

* :class:`BidStats` reads ``smear-record/1`` game records (as
  :func:`~smear_env.evaluation.duplicate.run_match` passes them to its ``records`` callback, one at a time,
  so nothing is kept) and counts, per player name, every bid decision (pass / 2 / 3 / 4), the contracts it
  won at each level and how many it made.
* :func:`match_with_bids` plays a duplicate match on the batched engine and returns its summary plus those
  counts for both teams. A team is any agent spec (``split:`` and ``rollout:`` included) or a batched agent.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from smear_env.core.config import SmearRules
from smear_env.evaluation.duplicate import run_match

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


def match_with_bids(team_a: Any, team_b: Any, games: int, seed: int, rules: SmearRules | None = None,
                    workers: int = 1) -> dict[str, Any]:
    """A duplicate match (batched engine) with bid statistics: ``{"summary": run_match summary, "bids":
    {player name: PlayerBids.summary()}}``."""

    rules = rules if rules is not None else SmearRules()
    stats = BidStats()
    agents = not isinstance(team_a, str) or not isinstance(team_b, str)  # (objects play in this process)
    res = run_match(team_a, team_b, games=games, rules=rules, seed=seed, records=stats,
                    engine="batched" if agents else "auto", workers=1 if agents else workers)
    return {"summary": res.summary(), "bids": stats.summary()}
