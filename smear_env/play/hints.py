"""Hints that teach: for each legal move, what it is worth and how likely the shipped agent is to play it.

A hint agent sees exactly what the seat sees (:func:`smear_env.tables.table.agent_action` on the seat's view).
:meth:`Hinter.hint` gives, for the seat's decision:

* ``moves``: every legal move with ``p`` -- the probability the checkpoint hint agent (the shipped agent
  ``default`` when it plays these rules) gives it (the masked softmax of its policy logits) -- and
  ``value`` -- an estimate of what the move is worth: the mean, over sampled deals consistent with the
  seat's view (:func:`smear_env.engine.infoset.sample_hidden`), of the exact solver's R17 hand-score
  difference (own team's score change minus the other team's) after that move, both sides then playing
  double-dummy. This is the estimate :mod:`smear_env.agents.pimc` searches with, per move
  (:func:`move_values`); it is optimistic (every player is assumed to see all cards) and a guide, not the
  truth. Sorted by value, then probability.
* ``agents``: the move each hint agent would choose.

Randomness: the sampled deals come from the generator passed to :meth:`Hinter.hint` (the web table
derives it from the game and the decision, so the same question gets the same answer).

:class:`TableHints` is a web game's hint state: answers kept per (position, seat), one computation per seat
at a time, a per-seat budget of computing time, and the hint agents of each seat when a hint agent is a
process (``cmd:`` bots get one process per seat, as the bot protocol promises).
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Hashable, Sequence
from typing import Any

import numpy as np

from ..agents.base import Agent
from ..agents.heuristic import heuristic_plan
from ..agents.pimc import bid_sample, first_lead_state, greedy_discards
from ..agents.registry import make_agent
from ..agents.solver import SolverState, solve, solve_all_moves
from ..core.actions import (
    DISCARD_ACTION_BASE,
    PASS_ACTION,
    PLAY_ACTION_BASE,
    TRUMP_ACTION_BASE,
    action_bid,
    action_name,
)
from ..core.cards import CARD_NAMES, cards_of
from ..core.config import SmearRules
from ..core.rules import contract_change
from ..engine.decoding import decode
from ..engine.game import BIDDING, DISCARD, PLAY, TRUMP, Game
from ..engine.infoset import sample_hidden
from ..engine.observation import observe
from ..tables.table import agent_action
from .choices import display_name, hint_specs, is_checkpoint

PLAY_SAMPLES = 8
BID_SAMPLES = 12
PLAN_SAMPLES = 6
NODE_CAP = 1500
PLAN_NODE_CAP = 600
HINT_SHARE = 0.5
"""Seconds of hint computing a seat earns per second (half a core; answers already kept cost nothing)..."""
HINT_BURST = 20.0
"""...saved up to this many seconds (a budget per seat: a token bucket counted in seconds of computing)."""
HINTS_KEPT = 16
"""Answers a game keeps (the latest positions)."""


def action_probabilities(agent: Any, observation: dict[str, Any]) -> dict[int, float] | None:
    """A checkpoint agent's probability for each legal action of ``observation`` (the masked softmax of its
    policy logits), or ``None`` for an agent without a policy."""
    policy = getattr(agent, "policy", None)
    logits_fn = getattr(policy, "logits", None)
    if not callable(logits_fn):
        return None
    mask = np.asarray(observation["action_mask"])
    obs = np.asarray(observation["observation"])
    logits = np.asarray(logits_fn(obs[None], mask[None])[0], dtype=np.float64)
    legal = np.flatnonzero(mask)
    z = logits[legal] - logits[legal].max()
    p = np.exp(z)
    p /= p.sum()
    return {int(a): float(q) for a, q in zip(legal, p, strict=True)}


def probabilities_at(agent: Any, game: Game, seat: int) -> dict[int, float] | None:
    """:func:`action_probabilities` for ``seat`` in ``game`` (its own observation only)."""
    if not callable(getattr(getattr(agent, "policy", None), "logits", None)):
        return None

    return action_probabilities(agent, observe(game, seat))


# ---------------------------------------------------------------------------------------------- values
def move_values(game: Game, seat: int, rng: np.random.Generator, scale: float = 1.0) -> dict[int, float]:
    """The estimated worth of each legal move of ``seat`` (the seat to act) in ``game``: the mean R17
    hand-score difference for the seat's team over sampled deals consistent with the seat's view (pimc's
    solver values, see the module docstring). Only the seat's own information is used.

    * card play: every legal card solved in each sample (``solve_all_moves``, as pimc does);
    * bids: a bid b is worth ``(pB if pB >= b else -b) - pD`` where pB is the solved points of the seat's
      team as bidder (kitty drawn from the sampled stock, the heuristic's trump and discards) and pD the
      other points in play (pimc's bid estimate); a pass is worth 0, the reference pimc compares bids with;
    * trump: each suit with the heuristic's discards for it, solved from the first lead;
    * a discard: that card and the heuristic's choice of the rest, solved from the first lead.

    ``scale`` multiplies the sample counts (``>= 1`` sample each)."""

    obs = observe(game, seat)
    mask = np.asarray(obs["action_mask"])
    legal = [int(a) for a in np.flatnonzero(mask)]
    view = decode(obs["observation"], mask)  # the seat's own (relative) view: nothing else is used
    rules = game.rules

    def n(k: int) -> int:
        return max(1, round(k * scale))

    if not legal:
        return {}
    phase = view.phase
    if phase == PLAY:
        assert view.bidder is not None and view.contract is not None
        totals = {a: 0.0 for a in legal}
        first = not any(view.played_by)
        for _ in range(n(PLAY_SAMPLES)):
            deal = sample_hidden(view, rng)
            state = SolverState(hands=deal.hands, trump=view.trump if view.trump is not None else -1,
                                to_move=0, bidder=view.bidder, contract=view.contract, trick=view.trick,
                                played_by=view.played_by, won=view.won_by_team, discards=deal.discards,
                                rules=rules,
                                first_lead=first)
            for c, v in solve_all_moves(state, node_cap=NODE_CAP).items():
                totals[PLAY_ACTION_BASE + c] += v
        return {a: t / n(PLAY_SAMPLES) for a, t in totals.items()}
    if phase == BIDDING:
        bids = [a for a in legal if a != PASS_ACTION]
        worth = dict.fromkeys(bids, 0.0)
        for _ in range(n(BID_SAMPLES)):
            pb, pd = bid_sample(view, rules, rng, PLAN_NODE_CAP)
            for a in bids:
                worth[a] += contract_change(pb, action_bid(a), rules) - pd  # R17
        out = {a: w / n(BID_SAMPLES) for a, w in worth.items()}
        if PASS_ACTION in legal:
            out[PASS_ACTION] = 0.0
        return out
    assert view.contract is not None
    contract = view.contract
    if phase == TRUMP:
        totals = {a: 0.0 for a in legal}
        plans = {a: heuristic_plan(view.hand, rules, [a - TRUMP_ACTION_BASE])[1] for a in legal}
        for _ in range(n(PLAN_SAMPLES)):
            deal = sample_hidden(view, rng)
            for a, disc in plans.items():
                hands = (view.hand & ~disc, deal.hands[1], deal.hands[2], deal.hands[3])
                totals[a] += solve(first_lead_state(hands, a - TRUMP_ACTION_BASE, contract, disc, rules),
                                   node_cap=PLAN_NODE_CAP)
        return {a: t / n(PLAN_SAMPLES) for a, t in totals.items()}
    if phase == DISCARD:
        assert view.trump is not None
        left = view.kitty_size - view.discards.bit_count()
        plans = {}
        for a in legal:
            c = a - DISCARD_ACTION_BASE
            rest = view.hand & ~(1 << c)
            plans[a] = (1 << c) | (greedy_discards(rest, view.trump, left - 1) if left > 1 else 0)
        totals = {a: 0.0 for a in legal}
        for _ in range(n(PLAN_SAMPLES)):
            deal = sample_hidden(view, rng)
            for a, disc in plans.items():
                hands = (view.hand & ~disc, deal.hands[1], deal.hands[2], deal.hands[3])
                totals[a] += solve(first_lead_state(hands, view.trump, contract, view.discards | disc, rules),
                                   node_cap=PLAN_NODE_CAP)
        return {a: t / n(PLAN_SAMPLES) for a, t in totals.items()}
    return {}  # pragma: no cover - nobody acts in HAND_OVER / GAME_OVER


def discard_partners(game: Game, seat: int) -> dict[int, list[str]]:
    """For each legal discard of ``seat``: the other cards :func:`move_values` assumes go with it (the
    heuristic's choice of the rest of the discards), by name; a discard's worth is that of the whole set."""

    if game.phase != DISCARD or game.to_act != seat:
        return {}
    hand = game.hands[seat]
    left = game.rules.kitty_size - len(game.discards)
    out = {}
    for a in game.legal_actions():
        c = a - DISCARD_ACTION_BASE
        rest = greedy_discards(hand & ~(1 << c), game.trump, left - 1) if left > 1 else 0
        out[a] = [CARD_NAMES[x] for x in cards_of(rest)]
    return out


VALUE_NOTE = ("worth: the expected hand score for your team minus the opponents' after this move, averaged "
              "over deals consistent with what you know, solved with every card open (optimistic: a guide)")


class Hinter:
    """Agents built from ``specs`` (separate from the players), asked for advice on a seat's decision.
    Specs that cannot play ``rules`` are replaced the same way a seat's agent is
    (:func:`smear_env.play.choices.hint_specs`); ``notes`` says so."""

    def __init__(self, specs: Sequence[str], rules: SmearRules, seed: int | None = None,
                 values: bool = True, value_scale: float = 1.0) -> None:

        self.rules = rules
        self.specs, self.notes = hint_specs(specs, rules)
        self.names = [display_name(s) for s in self.specs]
        self.agents: list[Agent] = [make_agent(s, rules) for s in self.specs]
        self.values = values
        self.value_scale = value_scale
        self._rng = np.random.default_rng(seed)
        self._started: dict[int, int] = {}

    def close(self) -> None:
        for a in self.agents:
            close = getattr(a, "close", None)
            if callable(close):
                close()

    def hint(self, game: Game, seat: int, rng: np.random.Generator | None = None) -> dict[str, Any]:
        """The hint for ``seat``'s decision (``seat`` must be to act)::

            {"agents": [{"agent", "id", "name"}],          # each hint agent's choice
             "moves": [{"id", "name", "p", "value", "chosen_by"}],   # every legal move, best first
                                          # (a discard also: "with", the other cards valued with it)
             "probability_from": name or None, "value_note": str or None, "notes": [str]}

        ``p`` is None without a checkpoint hint agent, ``value`` None with ``values=False``."""
        rng = rng if rng is not None else self._rng
        legal = game.legal_actions()
        chosen: dict[int, list[str]] = {a: [] for a in legal}
        agents_out = []
        probs: dict[int, float] | None = None
        prob_from = None
        for i, agent in enumerate(self.agents):
            restart = self._started.get(i) != seat or not callable(getattr(agent, "close", None))
            if restart:  # a fresh generator per question: the same question gets the same answer
                agent.start_game(seat, self.rules, np.random.default_rng(rng.integers(2**63)))
                self._started[i] = seat
            action = int(agent_action(agent, game, seat))
            chosen.setdefault(action, []).append(self.names[i])
            agents_out.append({"agent": self.names[i], "id": action, "name": action_name(action)})
            if probs is None and is_checkpoint(self.specs[i]):
                probs = probabilities_at(agent, game, seat)
                prob_from = self.names[i] if probs is not None else None
        values = move_values(game, seat, np.random.default_rng(rng.integers(2**63)), self.value_scale) \
            if self.values else {}
        partners = discard_partners(game, seat) if self.values else {}
        moves = [{"id": a, "name": action_name(a),
                  "p": None if probs is None else round(probs.get(a, 0.0), 4),
                  "value": None if a not in values else round(values[a], 2),
                  "chosen_by": chosen.get(a, []), **({"with": partners[a]} if a in partners else {})}
                 for a in legal]
        moves.sort(key=lambda m: (-(m["value"] if m["value"] is not None else -1e9),
                                  -(m["p"] if m["p"] is not None else 0.0), m["id"]))
        notes = list(self.notes)
        if probs is None:
            notes.append("no probabilities: no checkpoint agent among the hint agents plays these rules")
        return {"agents": agents_out, "moves": moves, "probability_from": prob_from,
                "value_note": VALUE_NOTE if self.values else None, "notes": notes}


def runs_a_process(spec: str) -> bool:
    """Whether the agent of ``spec`` is a program of its own (a ``cmd:`` bot): it must see one seat only."""
    return spec.startswith(("cmd:", "cmd["))


class HintRefused(Exception):
    """A hint is not computed now (one is being computed for the seat, or its budget is spent): the message
    says why and when to ask again."""


class TableHints:
    """One web game's hints (see the module docstring). Thread-safe; the caller computes the answer between
    :meth:`begin` and :meth:`end`, holding no lock of the game. A seat computes one hint at a time, and
    only while its budget (``burst`` seconds, earning ``share`` seconds a second) is not spent: each
    computation is charged the time it took."""

    def __init__(self, share: float = HINT_SHARE, burst: float = HINT_BURST, kept: int = HINTS_KEPT) -> None:
        self.share = share
        self.burst = burst
        self.kept = kept
        self._lock = threading.Lock()
        self._answers: OrderedDict[Hashable, dict[str, Any]] = OrderedDict()
        self._busy: dict[int, float] = {}
        self._tokens: dict[int, tuple[float, float]] = {}
        self._hinters: dict[int, tuple[Hinter, threading.Lock]] = {}
        self._closed = False

    def cached(self, key: Hashable) -> dict[str, Any] | None:
        """The answer kept for ``key`` (a position and a seat), or None."""
        with self._lock:
            return self._answers.get(key)

    def begin(self, seat: int, now: float | None = None) -> None:
        """Start a computation for ``seat``: HintRefused when one is running for it or its budget is spent."""
        now = time.monotonic() if now is None else now
        with self._lock:
            if self._closed:
                raise HintRefused("the game is over")
            if seat in self._busy:
                raise HintRefused("a hint for this seat is being computed; ask again when it answers")
            budget, last = self._tokens.get(seat, (self.burst, now))
            budget = min(self.burst, budget + (now - last) * self.share)
            self._tokens[seat] = (budget, now)
            if budget <= 0.0:
                raise HintRefused(f"this seat's hints have used their share of the server ({self.share:g} s "
                                  f"of computing a second); ask again in {-budget / self.share + 0.1:.1f} s")
            self._busy[seat] = now

    def end(self, seat: int, key: Hashable, answer: dict[str, Any] | None, now: float | None = None) -> None:
        """End ``seat``'s computation (charged to its budget), keeping ``answer`` (None: it failed) for
        ``key``."""
        now = time.monotonic() if now is None else now
        with self._lock:
            started = self._busy.pop(seat, now)
            budget, last = self._tokens.get(seat, (self.burst, now))
            self._tokens[seat] = (budget - (now - started), last)
            if answer is not None:
                self._answers[key] = answer
                while len(self._answers) > self.kept:
                    self._answers.popitem(last=False)

    def hinter(self, seat: int, make: Callable[[], Hinter]) -> tuple[Hinter, threading.Lock]:
        """``seat``'s own hinter (made by ``make`` on first use) and its lock: for hint agents that are
        processes, so that no process sees two seats' hands."""
        with self._lock:
            if self._closed:
                raise HintRefused("the game is over")
            entry = self._hinters.get(seat)
            if entry is None:
                entry = self._hinters[seat] = (make(), threading.Lock())
            return entry

    def close(self) -> None:
        """Close the seats' hinters (their bot processes end); no hint is computed after."""
        with self._lock:
            self._closed = True
            hinters = [h for h, _ in self._hinters.values()]
            self._hinters.clear()
        for h in hinters:
            h.close()


__all__ = ["HINT_BURST", "HINT_SHARE", "HintRefused", "Hinter", "TableHints", "VALUE_NOTE",
           "action_probabilities", "discard_partners", "move_values", "probabilities_at", "runs_a_process"]
