"""What one player may know (R22, R23): :class:`PlayerView`, built from a game by :func:`view_of`.

A view holds the observer's information and nothing more; it is what the observation encoder writes
and what agents reason about. Seats in a view are absolute (``view.seat`` is the observer); use
:meth:`PlayerView.relative` for the observer-relative form (observer = seat 0, left = 1, partner = 2,
right = 3; own team = team 0) that the observation vector holds.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from .game import BIDDING, Game, Phase


@dataclass(frozen=True)
class PlayerView:
    seat: int
    """The observer."""
    phase: Phase
    to_act: int | None
    """Seat to act, or None in HAND_OVER/GAME_OVER."""
    dealer: int
    scores: tuple[int, int]
    """Team scores, indexed by team (team = seat % 2)."""
    target_score: int
    kitty_size: int
    hand: int
    """The observer's cards (bitmask)."""
    bids: tuple[int | None, int | None, int | None, int | None]
    """Per seat this hand: None = not acted yet, 0 = pass, 2..4 = bid (R22)."""
    bidder: int | None
    contract: int | None
    trump: int | None
    """Trump suit 0..3 once known to the observer: the bidder from the trump choice, others from the
    first lead."""
    kitty: int
    """Bitmask of the kitty; 0 unless the observer is the bidder (R23)."""
    discards: int
    """Bitmask of the bidder's discards; 0 unless the observer is the bidder (R23)."""
    played_by: tuple[int, int, int, int]
    """Cards each seat has played this hand (bitmasks, R22)."""
    won_by_team: tuple[int, int]
    """Cards in tricks won by each team this hand."""
    trick_leader: int | None
    """Leader of the current trick, None when no card of it is played."""
    trick: tuple[int, ...]
    """Cards of the current trick in play order."""
    voids: tuple[int, int, int, int]
    """Per seat, 4-bit mask of suits the seat has shown void in by not following suit."""
    hand_sizes: tuple[int, int, int, int]
    legal_actions: tuple[int, ...]
    """Legal action ids when the observer is to act, else empty."""

    def relative(self) -> PlayerView:
        """The same view with seats rotated so the observer is seat 0 (teams: own team = 0)."""
        s = self.seat

        def rot(seq):  # index by relative seat
            return tuple(seq[(r + s) % 4] for r in range(4))

        def rs(x: int | None) -> int | None:
            return None if x is None else (x - s) % 4

        def team_rot(pair):
            return (pair[s & 1], pair[1 - (s & 1)])

        return replace(
            self,
            seat=0,
            to_act=rs(self.to_act),
            dealer=rs(self.dealer),
            scores=team_rot(self.scores),
            bids=rot(self.bids),
            bidder=rs(self.bidder),
            played_by=rot(self.played_by),
            won_by_team=team_rot(self.won_by_team),
            trick_leader=rs(self.trick_leader),
            voids=rot(self.voids),
            hand_sizes=rot(self.hand_sizes),
        )


def view_of(game: Game, seat: int) -> PlayerView:
    """The information of ``seat`` in ``game`` (R22, R23)."""
    bids: list[int | None] = [None, None, None, None]
    for s, b in game.bids:
        bids[s] = b
    is_bidder = game.bidder == seat and game.phase != BIDDING
    trump_known = game.trump >= 0 and (is_bidder or bool(game.tricks) or bool(game.trick))
    current = game.current_player
    return PlayerView(
        seat=seat,
        phase=Phase(game.phase),
        to_act=current,
        dealer=game.dealer,
        scores=(game.scores[0], game.scores[1]),
        target_score=game.rules.target_score,
        kitty_size=game.rules.kitty_size,
        hand=game.hands[seat],
        bids=tuple(bids),  # type: ignore[arg-type]
        bidder=game.bidder if game.phase != BIDDING else None,
        contract=game.contract if game.phase != BIDDING else None,
        trump=game.trump if trump_known else None,
        kitty=sum(1 << c for c in game.kitty) if is_bidder else 0,
        discards=sum(1 << c for c in game.discards) if is_bidder else 0,
        played_by=tuple(game.played_by),  # type: ignore[arg-type]
        won_by_team=(game.won[0], game.won[1]),
        trick_leader=game.trick_leader if game.trick else None,
        trick=tuple(game.trick),
        voids=tuple(game.voids),  # type: ignore[arg-type]
        hand_sizes=tuple(h.bit_count() for h in game.hands),  # type: ignore[arg-type]
        legal_actions=game.legal_actions() if current == seat else (),
    )
