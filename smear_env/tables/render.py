"""Text rendering of a game (the env's ``"ansi"`` and ``"human"`` render modes).

``render_text(game)`` is a spectator view: every hand is shown, and private facts (R23: the kitty, the
discards, a trump chosen but not yet led) are shown marked *(hidden)*. ``render_text(game, viewer=seat)``
shows only what that seat may know (R22, R23).
"""

from __future__ import annotations

from ..core.actions import action_name
from ..core.cards import NUM_RANKS, RANK_CHARS, SUIT_SYMBOLS
from ..engine.game import BIDDING, Game, Phase

SEAT_NAMES = ("player_0", "player_1", "player_2", "player_3")


def card_text(c: int) -> str:
    """A card with its suit symbol, e.g. ``T♠``."""
    return RANK_CHARS[c % NUM_RANKS] + SUIT_SYMBOLS[c // NUM_RANKS]


def hand_text(mask: int) -> str:
    """Cards of a mask grouped by suit, high to low: ``♣ A J 7  ♥ T``."""
    groups = []
    for s in range(4):
        ranks = [RANK_CHARS[r] for r in range(NUM_RANKS - 1, -1, -1) if mask >> (s * NUM_RANKS + r) & 1]
        if ranks:
            groups.append(SUIT_SYMBOLS[s] + " " + " ".join(ranks))
    return "  ".join(groups) if groups else "-"


def _mask(cards: list[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def render_text(game: Game, viewer: int | None = None) -> str:
    """A multi-line text table of the game; ``viewer=None`` is the spectator view (all cards)."""
    lines = []
    phase = Phase(game.phase)
    lines.append(
        f"Smear  hand {game.hand_number + 1}  phase {phase.name}  target {game.rules.target_score}  "
        f"scores: team 0 (seats 0+2) {game.scores[0]}, team 1 (seats 1+3) {game.scores[1]}"
    )
    bids: dict[int, str] = {}
    for s, b in game.bids:
        bids[s] = "pass" if b == 0 else f"bid {b}"
    is_public_trump = game.trump_public
    if game.trump < 0:
        trump = "-"
    elif is_public_trump or viewer is None or (viewer == game.bidder and game.phase != BIDDING):
        trump = SUIT_SYMBOLS[game.trump] + ("" if is_public_trump else " (hidden)")
    else:
        trump = "?"
    contract = f"{game.contract} by player_{game.bidder}" if game.contract is not None else "-"
    lines.append(f"dealer player_{game.dealer}   contract {contract}   trump {trump}")
    lines.append(f"{'seat':<10}{'team':<6}{'bid':<8}{'cards':<6}hand")
    for s in range(4):
        marks = ("*" if game.current_player == s else " ") + ("D" if s == game.dealer else " ")
        if viewer is None or viewer == s:
            hand = hand_text(game.hands[s])
        else:
            hand = "?" * game.hands[s].bit_count()
        lines.append(
            f"{SEAT_NAMES[s]:<10}{s & 1:<6}{bids.get(s, ''):<8}{game.hands[s].bit_count():<6}{hand}  {marks}"
        )
    can_see_private = viewer is None or (viewer == game.bidder and game.phase != BIDDING)
    if game.kitty and can_see_private:
        hidden = "" if viewer is not None else " (hidden)"
        lines.append(
            f"kitty {hand_text(_mask(game.kitty))}{hidden}   "
            f"discards {hand_text(_mask(game.discards))}{hidden}"
        )
    if game.tricks:
        leader, seats, cards, winner = game.tricks[-1]
        played = ", ".join(f"player_{s} {card_text(c)}" for s, c in zip(seats, cards, strict=True))
        lines.append(f"last trick ({len(game.tricks)}/6): {played} -> won by player_{winner}")
    if game.trick:
        played = ", ".join(
            f"player_{s} {card_text(c)}" for s, c in zip(game.trick_seats, game.trick, strict=True)
        )
        lines.append(f"current trick: {played}")
    lines.append(f"won cards: team 0 {hand_text(game.won[0])} | team 1 {hand_text(game.won[1])}")
    if game.current_player is not None and (viewer is None or viewer == game.current_player):
        legal = ", ".join(action_name(a) for a in game.legal_actions())
        lines.append(f"player_{game.current_player} to act: {legal}")
    if game.hand_result is not None and game.phase >= 4:
        r = game.hand_result
        lines.append(f"hand result: points {r['points']} score change {r['score_change']}")
    if game.hand_thrown_in:
        lines.append("all passed: hand thrown in (R8), same dealer redeals")
    if game.winner is not None:
        lines.append(f"GAME OVER: team {game.winner} wins")
    return "\n".join(lines)


def render_mode_output(game: Game, render_mode: str | None) -> str | None:
    """What an env's ``render()`` gives: ``"ansi"`` returns the table, ``"human"`` prints it, ``None`` warns
    (as Gymnasium and PettingZoo envs do) and returns None."""
    if render_mode is None:
        import warnings

        warnings.warn("You are calling render method without specifying any render mode.", stacklevel=3)
        return None
    text = render_text(game)
    if render_mode == "human":
        print(text + "\n")
        return None
    return text
