"""Cards as small ints and hands as 32-bit masks (R2, R3); what the cards are worth and do is
:mod:`smear_env.core.rules`.

A card id is ``suit * 8 + rank`` with suits ``C D H S`` = 0..3 and ranks ``7 8 9 T J Q K A`` = 0..7
(low to high), so within a suit a larger id is a higher card. A set of cards is an ``int`` bitmask
with bit ``card`` set.
"""

from __future__ import annotations

from collections.abc import Iterable

NUM_SUITS = 4
NUM_RANKS = 8
NUM_CARDS = NUM_SUITS * NUM_RANKS  # R2: 32 cards
HAND_SIZE = 6  # R5
STOCK_SIZE = NUM_CARDS - 4 * HAND_SIZE  # R5: 8
NUM_TRICKS = HAND_SIZE  # R12

SUIT_CHARS = "CDHS"  # R3
RANK_CHARS = "789TJQKA"  # R3, low to high
SUIT_SYMBOLS = "♣♦♥♠"

CLUBS, DIAMONDS, HEARTS, SPADES = range(NUM_SUITS)
RANK_7, RANK_8, RANK_9, RANK_10, RANK_JACK, RANK_QUEEN, RANK_KING, RANK_ACE = range(NUM_RANKS)

FULL_DECK = (1 << NUM_CARDS) - 1
SUIT_MASKS = tuple(0xFF << (NUM_RANKS * s) for s in range(NUM_SUITS))


def card(suit: int, rank: int) -> int:
    """The card id of ``rank`` of ``suit``."""
    return suit * NUM_RANKS + rank


def suit_of(c: int) -> int:
    return c >> 3


def rank_of(c: int) -> int:
    return c & 7


def card_name(c: int) -> str:
    """R3 text name, e.g. ``"TS"`` for the ten of spades."""
    if not 0 <= c < NUM_CARDS:
        raise ValueError(f"card id {c!r} is not in 0..{NUM_CARDS - 1}")
    return RANK_CHARS[c & 7] + SUIT_CHARS[c >> 3]


def parse_card(name: str) -> int:
    """The card id of an R3 name such as ``"TS"``; raises ``ValueError`` on anything else."""
    if not isinstance(name, str) or len(name) != 2 or name[0] not in RANK_CHARS or name[1] not in SUIT_CHARS:
        raise ValueError(
            f"{name!r} is not a card name: rank in {RANK_CHARS!r} then suit in {SUIT_CHARS!r}, e.g. 'TS'"
        )
    return SUIT_CHARS.index(name[1]) * NUM_RANKS + RANK_CHARS.index(name[0])


def to_card(c: int | str) -> int:
    """Accept a card id or an R3 name."""
    if isinstance(c, str):
        return parse_card(c)
    c = int(c)
    if not 0 <= c < NUM_CARDS:
        raise ValueError(f"card id {c!r} is not in 0..{NUM_CARDS - 1}")
    return c


def mask_of(cards: Iterable[int | str]) -> int:
    m = 0
    for c in cards:
        m |= 1 << to_card(c)
    return m


def cards_of(mask: int) -> list[int]:
    """Card ids in a mask, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


CARD_NAMES = tuple(RANK_CHARS[c & 7] + SUIT_CHARS[c >> 3] for c in range(NUM_CARDS))  # R3 names by card id


def names(cards_or_mask: Iterable[int] | int) -> list[str]:
    cs = cards_of(cards_or_mask) if isinstance(cards_or_mask, int) else cards_or_mask
    return [card_name(c) for c in cs]


def popcount(mask: int) -> int:
    return mask.bit_count()
