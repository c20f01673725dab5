"""The one action-id layout shared by every decision (bids, trump, discards, card play).

Computed once from named terms, in the manner of OpenSpiel's ``kBiddingActionBase``:

=========================  ===========  =====================================
ids                        decision     meaning
=========================  ===========  =====================================
``0``                      bidding      pass
``1 .. 3``                 bidding      bid 2, 3, 4 (``BID_ACTION_BASE + bid - 1``)
``4 .. 7``                 trump        name trump C, D, H, S (R10, kitty_size > 0)
``8 .. 39``                discard      discard card id 0..31 (R11)
``40 .. 71``               play         play card id 0..31 (R12)
=========================  ===========  =====================================
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .cards import NUM_CARDS, NUM_SUITS, SUIT_CHARS, card_name

MIN_BID = 2
MAX_BID = 4
NUM_BID_ACTIONS = 1 + (MAX_BID - MIN_BID + 1)  # pass + bids 2..4
BID_ACTION_BASE = 0
PASS_ACTION = BID_ACTION_BASE
TRUMP_ACTION_BASE = BID_ACTION_BASE + NUM_BID_ACTIONS
DISCARD_ACTION_BASE = TRUMP_ACTION_BASE + NUM_SUITS
PLAY_ACTION_BASE = DISCARD_ACTION_BASE + NUM_CARDS
NUM_ACTIONS = PLAY_ACTION_BASE + NUM_CARDS

assert (TRUMP_ACTION_BASE, DISCARD_ACTION_BASE, PLAY_ACTION_BASE, NUM_ACTIONS) == (4, 8, 40, 72)


def action_id(value: Any) -> int | None:
    """``value`` as a Python ``int`` when it is an integer-valued scalar: a Python ``int``, a numpy integer
    (``np.int64(3)``) or a 0-d integer array (``np.array(3)``, what ``model.predict(obs)`` of SB3 /
    sb3-contrib returns for one observation). ``None`` for anything else: bools (``True`` is not action 1),
    floats (even ``3.0``), strings, ``None``, arrays with a shape. The range is not checked."""
    if isinstance(value, bool | np.bool_):
        return None
    if isinstance(value, int | np.integer):
        return int(value)
    if isinstance(value, np.ndarray) and value.shape == () and np.issubdtype(value.dtype, np.integer):
        return int(value)
    return None


def short_repr(value: Any, limit: int = 60) -> str:
    """``repr(value)`` cut to about ``limit`` characters (for error messages that echo user input)."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a broken __repr__ must not hide the real error
        text = f"<{type(value).__name__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


def bid_action(bid: int) -> int:
    """Action id of a bid of 2, 3 or 4 (``0`` means pass)."""
    if bid == 0:
        return PASS_ACTION
    if not MIN_BID <= bid <= MAX_BID:
        raise ValueError(f"bid {bid!r} is not 0 (pass) or {MIN_BID}..{MAX_BID}")
    return BID_ACTION_BASE + bid - MIN_BID + 1


def action_bid(action: int) -> int:
    """The bid (0 = pass) of a bidding action."""
    return 0 if action == PASS_ACTION else action - BID_ACTION_BASE - 1 + MIN_BID


def trump_action(suit: int) -> int:
    return TRUMP_ACTION_BASE + suit


def discard_action(card: int) -> int:
    return DISCARD_ACTION_BASE + card


def play_action(card: int) -> int:
    return PLAY_ACTION_BASE + card


def is_bid(action: int) -> bool:
    return BID_ACTION_BASE <= action < TRUMP_ACTION_BASE


def is_trump(action: int) -> bool:
    return TRUMP_ACTION_BASE <= action < DISCARD_ACTION_BASE


def is_discard(action: int) -> bool:
    return DISCARD_ACTION_BASE <= action < PLAY_ACTION_BASE


def is_play(action: int) -> bool:
    return PLAY_ACTION_BASE <= action < NUM_ACTIONS


def action_card(action: int) -> int:
    """The card of a discard or play action."""
    if is_discard(action):
        return action - DISCARD_ACTION_BASE
    if is_play(action):
        return action - PLAY_ACTION_BASE
    raise ValueError(f"action {action!r} is not a discard or a card play")


def action_name(action: int) -> str:
    """Human-readable name: ``pass``, ``bid 3``, ``trump H``, ``discard TS``, ``play 7H``."""
    if not 0 <= action < NUM_ACTIONS:
        return f"<invalid action {action!r}>"
    if is_bid(action):
        b = action_bid(action)
        return "pass" if b == 0 else f"bid {b}"
    if is_trump(action):
        return f"trump {SUIT_CHARS[action - TRUMP_ACTION_BASE]}"
    if is_discard(action):
        return f"discard {card_name(action - DISCARD_ACTION_BASE)}"
    return f"play {card_name(action - PLAY_ACTION_BASE)}"


def parse_action(name: str) -> int:
    """Inverse of :func:`action_name`: ``"pass"``, ``"bid 3"``, ``"trump H"``, ``"discard TS"``,
    ``"play 7H"``; anything else raises ``ValueError``."""
    from .cards import parse_card

    if not isinstance(name, str):
        raise ValueError(f"action name must be a string, not {type(name).__name__}")
    parts = name.split()
    try:
        if parts == ["pass"]:
            return PASS_ACTION
        if len(parts) == 2:
            verb, arg = parts
            if verb == "bid" and arg.isdigit():
                return bid_action(int(arg)) if int(arg) != 0 else _bad_action(name)
            if verb == "trump" and len(arg) == 1 and arg in SUIT_CHARS:
                return trump_action(SUIT_CHARS.index(arg))
            if verb == "discard":
                return discard_action(parse_card(arg))
            if verb == "play":
                return play_action(parse_card(arg))
    except ValueError:
        pass
    return _bad_action(name)


def _bad_action(name: str) -> int:
    raise ValueError(
        f"{name!r} is not an action name; expected 'pass', 'bid 2'..'bid 4', 'trump C|D|H|S', "
        "'discard <card>' or 'play <card>' with a card like 'TS'"
    )
