"""Game records of the batched engine's lanes (``VectorGame(record=True)``).

A :class:`LaneRecorder` keeps each lane's decisions of the hand in progress, its trick winners and the
result of the hand it scored; when a hand ends it writes the hand with
:func:`smear_env.engine.recording.hand_record` (the writer of every engine) and, when the game ends with it,
the game with :func:`smear_env.engine.recording.game_record`.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.actions import PLAY_ACTION_BASE, TRUMP_ACTION_BASE
from ..core.cards import cards_of
from ..core.config import SmearRules
from ..core.phases import NUM_PLAYERS, kitty_cards
from .recording import game_record, hand_record, hand_result

_I = np.int64
MAX_DECISIONS = 32
"""Decisions in one hand at most: 4 bids + trump + 3 discards + 24 plays."""


class LaneRecorder:
    """The records of ``num_lanes`` lanes playing under ``rules``."""

    def __init__(self, num_lanes: int, rules: SmearRules) -> None:
        self.rules = rules
        self.log = np.zeros((num_lanes, MAX_DECISIONS), dtype=_I)  # actions of the hand in progress
        self.log_len = np.zeros(num_lanes, dtype=_I)
        self.trick_winners = np.zeros((num_lanes, 6), dtype=_I)
        self.results: dict[int, tuple[Any, ...]] = {}  # lane -> hand_result arguments of its scored hand
        self.hands: list[list[dict[str, Any]]] = [[] for _ in range(num_lanes)]
        self.finished: list[dict[str, Any]] = []

    def dealt(self, lanes: np.ndarray) -> None:
        """Lanes ``lanes`` start a hand."""
        self.log_len[lanes] = 0

    def decided(self, lanes: np.ndarray, actions: np.ndarray) -> None:
        """Lanes ``lanes`` (distinct) took ``actions``."""
        self.log[lanes, self.log_len[lanes]] = actions
        self.log_len[lanes] += 1

    def trick_won(self, lanes: np.ndarray, trick: np.ndarray, winner: np.ndarray) -> None:
        """Trick number ``trick`` of each of ``lanes`` went to seat ``winner``."""
        self.trick_winners[lanes, trick] = winner

    def scored(self, lanes: np.ndarray, points: np.ndarray, card_points: np.ndarray, made: np.ndarray,
               change: np.ndarray, scores: np.ndarray) -> None:
        """Lanes ``lanes`` scored their hands: ``points`` (k, 4) teams (-1 nobody) winning High, Low, Jack
        and Game, ``card_points`` (k, 2), ``made`` (k,), ``change`` and ``scores`` (k, 2)."""
        pts, cps, ch, sc = points.tolist(), card_points.tolist(), change.tolist(), scores.tolist()
        self.results = {
            lane: (pts[i], cps[i], bool(made[i]), ch[i], sc[i]) for i, lane in enumerate(lanes.tolist())
        }

    def hands_ended(self, engine: Any, lanes: np.ndarray, thrown_in: np.ndarray, winner: np.ndarray,
                    new_game: np.ndarray) -> None:
        """Record the hands ``lanes`` of ``engine`` (a :class:`~smear_env.engine.vector.VectorGame`, read
        before its next deal) ended, thrown in (R8) or scored; ``new_game`` where the game ended with it
        (``winner`` the team, -1 when truncated)."""
        k = self.rules.kitty_size
        for i, lane in enumerate(lanes.tolist()):
            dealer = int(engine.dealer[lane])
            log = self.log[lane, : self.log_len[lane]].tolist()
            bids: list[tuple[int, int]] = []
            for a in log:  # the bids come first, one a seat at most, from the dealer's left (R6)
                if a >= TRUMP_ACTION_BASE or len(bids) == NUM_PLAYERS:
                    break
                bids.append(((dealer + 1 + len(bids)) & 3, 0 if a == 0 else a + 1))
            deal = [cards_of(m) for m in engine.deal[lane].tolist()]
            stock = engine.stock[lane].tolist()
            if thrown_in[lane]:
                rec = hand_record(dealer, deal, stock, bids, k, thrown_in=True)
            else:
                plays = [a - PLAY_ACTION_BASE for a in log[len(bids) + (1 + k if k else 0):]]
                winners = self.trick_winners[lane].tolist()
                bidder = int(engine.bidder[lane])
                tricks = []
                leader = bidder  # R12: the bidder leads the first trick, each trick's winner the next
                for tn in range(6):
                    tricks.append((leader, [(leader + j) & 3 for j in range(4)], plays[4 * tn : 4 * tn + 4],
                                   winners[tn]))
                    leader = winners[tn]
                rec = hand_record(
                    dealer, deal, stock, bids, k, bidder=bidder, contract=int(engine.high_bid[lane]),
                    kitty=kitty_cards(stock, k), trump=int(engine.trump[lane]),
                    discards=engine.discard_order[lane, :k].tolist(), tricks=tricks,
                    result=hand_result(*self.results[lane]),
                )
            self.hands[lane].append(rec)
            if new_game[i]:
                w = int(winner[lane])
                self.game_over(lane, engine.scores[lane].tolist(), None if w < 0 else w)

    def game_over(self, lane: int, scores: list[int], winner: int | None) -> None:
        """Lane ``lane``'s game ended with ``scores`` (``winner`` None: truncated, R21)."""
        self.finished.append(game_record(self.rules.to_dict(), None, self.hands[lane], scores, winner))
        self.hands[lane] = []

    def take(self) -> list[dict[str, Any]]:
        """The games finished since the last call (then cleared)."""
        out, self.finished = self.finished, []
        return out
