"""A composite ("which half is weak") batched agent: one agent bids and names trump, another plays the cards.

:class:`CompositeAgent` routes each row of a batch by the phase of its observation (the ``phase`` one-hot of
:mod:`smear_env.engine.observation`): ``BIDDING`` and ``TRUMP`` rows go to the *bid* agent, ``DISCARD`` and
``PLAY`` rows to the *play* agent. Both agents are told of every game of every slot (``start_game``), each
with its own generator spawned from the slot's, so either half sees a full game history.

Against the heuristic, ``make_composite("scratch", "heuristic")`` plays a learnt bidder with the heuristic's
card play and ``make_composite("heuristic", "scratch")`` the reverse: which half of an agent loses the games.

:func:`make_composite` builds one from two agent specs (anything
:func:`~smear_env.agents.batched.make_batched_agent` accepts); :func:`parse_split_spec` reads the spec
syntax ``split:bid=<spec>,play=<spec>``, an agent spec of :func:`~smear_env.agents.registry.make_agent`
(``smear-eval 'split:bid=scratch,play=heuristic' heuristic``).
"""

from __future__ import annotations

import numpy as np

from ..core.config import SmearRules
from ..engine.game import BIDDING, DISCARD, PLAY, TRUMP
from ..engine.observation import SLICES
from .batched import BatchedAgent, check_batch

__all__ = ["BID_PHASES", "PLAY_PHASES", "CompositeAgent", "parse_split_spec", "row_phases"]

BID_PHASES = (BIDDING, TRUMP)
PLAY_PHASES = (DISCARD, PLAY)
SPLIT_PREFIX = "split:"
_PHASE = SLICES["phase"]


def row_phases(obs: np.ndarray) -> np.ndarray:
    """(B,) int64 phase of each observation row (its ``phase`` one-hot); ``ValueError`` for a row whose
    phase is not a decision phase (BIDDING, TRUMP, DISCARD, PLAY)."""
    one_hot = obs[:, _PHASE]
    phase = np.argmax(one_hot, axis=1).astype(np.int64)
    bad = (one_hot.sum(axis=1) != 1) | (phase > PLAY)
    if bad.any():
        row = int(np.flatnonzero(bad)[0])
        raise ValueError(f"observation row {row} is not in a decision phase (phase one-hot "
                         f"{one_hot[row].tolist()}; expected one of BIDDING, TRUMP, DISCARD, PLAY)")
    return phase


class CompositeAgent:
    """Bid/trump decisions from ``bid``, discard/play decisions from ``play`` (two batched agents)."""

    def __init__(self, bid: BatchedAgent, play: BatchedAgent, name: str | None = None) -> None:
        for role, agent in (("bid", bid), ("play", play)):
            if not callable(getattr(agent, "act_batch", None)) or not callable(getattr(agent, "start_game",
                                                                                       None)):
                raise TypeError(f"composite agent: {role} must be a batched agent (act_batch, start_game), "
                                f"not {type(agent).__name__}")
        self.bid = bid
        self.play = play
        self.name = name if name is not None else f"split:bid={bid.name},play={play.name}"
        self.vectorised = bool(getattr(bid, "vectorised", False) and getattr(play, "vectorised", False))

    def start_game(self, slot: int, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        if not isinstance(rng, np.random.Generator):
            raise TypeError(f"agent {self.name!r}: rng must be a numpy.random.Generator, not "
                            f"{type(rng).__name__}")
        r_bid, r_play = rng.spawn(2)
        self.bid.start_game(slot, seat, rules, r_bid)
        self.play.start_game(slot, seat, rules, r_play)

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, slots: np.ndarray) -> np.ndarray:
        obs, mask, slots = check_batch(self.name, obs, mask, slots)
        out = np.empty(slots.size, dtype=np.int64)
        if slots.size == 0:
            return out
        is_bid = row_phases(obs) <= TRUMP
        for agent, rows in ((self.bid, np.flatnonzero(is_bid)), (self.play, np.flatnonzero(~is_bid))):
            if rows.size:
                out[rows] = agent.act_batch(obs[rows], mask[rows], slots[rows])
        return out

    def close(self) -> None:
        try:
            self.bid.close()
        finally:
            self.play.close()


def parse_split_spec(spec: str) -> tuple[str, str]:
    """``(bid_spec, play_spec)`` of ``split:bid=<spec>,play=<spec>`` (both keys, once each, in any order);
    a ``ValueError`` naming the spec and the expected form otherwise. A comma-separated piece whose key is
    not ``bid`` or ``play`` continues the half before it, so a half may have options of its own
    (``split:bid=pimc:samples=2,bid_samples=8,play=heuristic``)."""
    form = "split:bid=<agent spec>,play=<agent spec>"
    if not isinstance(spec, str) or not spec.startswith(SPLIT_PREFIX):
        raise ValueError(f"bad composite spec {spec!r}: expected {form}")
    parts: dict[str, str] = {}
    last = None
    for item in spec[len(SPLIT_PREFIX):].split(","):
        key, eq, value = item.partition("=")
        key, value = key.strip(), value.strip()
        if key not in ("bid", "play") and last is not None and item.strip():
            parts[last] += "," + item.strip()  # an option of the half before
            continue
        if not eq or key not in ("bid", "play") or not value or key in parts:
            raise ValueError(f"bad composite spec {spec!r}: expected {form} (each key once, non-empty)")
        parts[key], last = value, key
    if set(parts) != {"bid", "play"}:
        raise ValueError(f"bad composite spec {spec!r}: expected {form} (both bid= and play=)")
    return parts["bid"], parts["play"]
