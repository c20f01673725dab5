"""A rule-based baseline player that uses only its own information (R22, R23).

The agent reasons on what the observer sees, relative to its seat (observer = seat 0, left = 1, partner =
2, right = 3; own team = team 0). The rules are written once, in
:mod:`smear_env.agents.heuristic_rules`, over the observation's card and state fields: for many rows at
once on numpy arrays (:class:`~smear_env.agents.heuristic_batched.BatchedHeuristicAgent`) and for one row
on Python ints (:func:`~smear_env.agents.heuristic_row.choose`). :class:`HeuristicAgent` is the
per-seat adapter: ``act(obs)`` reads the fields from the observation vector, :meth:`HeuristicAgent.act_view`
from an observer-relative :class:`~smear_env.engine.infoset.PlayerView` (the evaluation loop uses it to skip
the encode step; both give the same action). The numbers it compares are in
:mod:`smear_env.agents.heuristic_values`.

Design (the numbers are hand-tuned estimates, not fitted):

* **Bidding** (R6-R8). For every suit, estimate the points the hand would win with that suit as trump:
  High (R13: the ace; ``in_play`` also a king/queen that the missing higher trumps may not beat), Low
  (R14: the 7; ``in_play`` also an 8/9), Jack (R15: the jack, better with protection) and Game (R16: trump
  length, honours and tens; side tens can be banked by discarding them, R11). The bidder will see
  ``kitty_size`` more cards (R9), so the estimate adds the expected gain of k random unseen cards. Bid the
  floor of the best estimate plus one (the estimate ignores the partner's cards; the offset was tuned in
  duplicate self-play) if it is at least 2 and beats the current bid; a
  partner's bid is only overbid with a clearly stronger hand; a stuck dealer (R8 ``dealer_must_bid``)
  bids conservatively (2 unless the hand is clearly worth more).
* **Trump** (R10): the suit with the best estimate of the hand after the kitty.
* **Discards** (R11; they count for the bidder's Game total, R16): trump is kept; side tens are banked
  (a side ten is beaten by J, Q, K and A, so it is rarely safe in play); then side cards that cannot win
  (short suits first, to make voids for trumping); side aces are kept.
* **Play** (R12). High and Low are fixed by who holds the cards (every dealt card is played), so play
  fights for Jack (R15) and Game (R16): lead the top outstanding trump to pull trump (and the jack) when
  holding it; take tricks that hold points with the cheapest card that wins (and is safe against the
  players still to act when possible); feed tens and the jack of trump to a partner who is safely
  winning; don't trump tricks without points; otherwise throw the card that costs least.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.actions import DISCARD_ACTION_BASE
from ..core.config import SmearRules
from ..core.rules import discard_pool
from ..engine.infoset import PlayerView
from ..engine.observation import HAND, TRUMP_
from .heuristic_row import FIELDS, choose, observation_fields, view_fields
from .heuristic_values import BID_MARGIN, MIN_ESTIMATE, best_suit, keep_value, rules_code, suit_estimate

__all__ = ["HeuristicAgent", "suit_estimate", "best_suit", "keep_value", "heuristic_plan"]


class HeuristicAgent:
    """Rule-based baseline; see the module docstring for the design."""

    name = "heuristic"

    def __init__(
        self,
        rules: SmearRules | None = None,
        bid_margin: float = BID_MARGIN,
        min_estimate: float = MIN_ESTIMATE,
    ) -> None:
        self.rules = rules if rules is not None else SmearRules()
        self.bid_margin = float(bid_margin)
        self.min_estimate = float(min_estimate)
        self.seat = 0
        self._rng = np.random.default_rng(0)
        self._code = rules_code(self.rules)

    def start_game(self, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        self.seat = seat
        self.rules = rules
        self._rng = rng
        self._code = rules_code(rules)

    def act(self, observation: dict[str, Any]) -> int:
        mask = np.asarray(observation["action_mask"])
        legal = int.from_bytes(np.packbits(mask != 0, bitorder="little").tobytes(), "little")
        if legal & (legal - 1) == 0:
            return self._only(legal)
        return choose(observation_fields(observation["observation"]), legal, self._code, self.bid_margin,
                      self.min_estimate)

    def act_view(self, view: PlayerView) -> int:
        """The action for an observer-relative view (``view_of(game, seat).relative()``)."""
        actions = view.legal_actions
        if len(actions) < 2:
            if not actions:
                raise ValueError("HeuristicAgent.act: no legal action (is this agent to act?)")
            return actions[0]
        legal = 0
        for a in actions:
            legal |= 1 << a
        return choose(view_fields(view), legal, self._code, self.bid_margin, self.min_estimate)

    @staticmethod
    def _only(legal: int) -> int:
        """The one legal action of the bits ``legal``; none: ``ValueError``."""
        if not legal:
            raise ValueError("HeuristicAgent.act: no legal action (is this agent to act?)")
        return legal.bit_length() - 1


_HAND = [o for o, _ in FIELDS].index(HAND)
_TRUMP = [o for o, _ in FIELDS].index(TRUMP_)


def heuristic_plan(hand: int, rules: SmearRules, suits: Sequence[int]) -> tuple[int, int]:
    """The heuristic's trump among ``suits`` for the bidder's ``hand`` (kitty taken, R10) and the
    ``rules.kitty_size`` cards it then discards (R11, one at a time as it would): ``(trump, discards)``,
    the discards a card mask."""
    _, trump = best_suit(hand, rules, 0, tuple(suits))
    code = rules_code(rules)
    fields = [0] * len(FIELDS)
    fields[_TRUMP] = 1 << trump
    disc = 0
    for _ in range(rules.kitty_size):
        fields[_HAND] = hand & ~disc
        disc |= 1 << (choose(fields, discard_pool(hand & ~disc, trump) << DISCARD_ACTION_BASE, code)
                      - DISCARD_ACTION_BASE)
    return trump, disc
