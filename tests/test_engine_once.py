"""The parts of the game written once (smear_env.core.phases, observation.feature_parts,
smear_env.engine.recording), checked against answers worked out by hand rather than against the other engine:
a scripted hand's observation from two seats on both engines, the legal actions of known positions, the kitty,
and the integer and array forms of the legal-action function on the states of random play."""

from __future__ import annotations

import numpy as np
import pytest

from smear_env.core import phases
from smear_env.core import transitions as T
from smear_env.core.actions import bid_action, discard_action, play_action, trump_action
from smear_env.core.cards import parse_card
from smear_env.core.config import SmearRules
from smear_env.engine import decoding as D
from smear_env.engine import observation as O
from smear_env.engine.game import Game
from smear_env.engine.record import replay, validate_record
from smear_env.engine.vector import VectorGame, deck_of

DEAL = [
    ["AC", "KC", "QC", "JC", "TC", "9C"],
    ["8C", "7C", "AD", "KD", "QD", "JD"],
    ["TD", "9D", "8D", "7D", "AH", "KH"],
    ["QH", "JH", "TH", "9H", "8H", "7H"],
]
STOCK = ["AS", "KS", "QS", "JS", "TS", "9S", "8S", "7S"]
C = parse_card
# dealer 3: seat 0 passes, seat 1 bids 3, seats 2 and 3 pass; seat 1 takes AS KS QS (R9), names diamonds,
# discards 8C 7C QS, leads AD (R10: the first lead is a trump); seat 2 follows with 7D.
SCRIPT = [bid_action(0), bid_action(3), bid_action(0), bid_action(0), trump_action(1),
          discard_action(C("8C")), discard_action(C("7C")), discard_action(C("QS")),
          play_action(C("AD")), play_action(C("7D"))]


def _mask(*names: str) -> list[int]:
    return sorted(C(n) for n in names)


def _expected(observer: int) -> np.ndarray:
    """The observation after SCRIPT, written term by term from the script (not from an encoder)."""
    v = np.zeros(O.OBS_SIZE, dtype=np.float32)

    def rel(seat: int) -> int:
        return (seat - observer) & 3

    def one(term: str, i: int) -> None:
        v[O.SLICES[term].start + i] = 1

    def cards(term: str, names: list[str], block: int = 0) -> None:
        for c in _mask(*names):
            v[O.SLICES[term].start + 32 * block + c] = 1

    one("phase", int(phases.PLAY))
    one("to_act", rel(3))
    one("dealer", rel(3))
    v[O.SLICES["target_score"]] = SmearRules().target_score
    one("kitty_size", 3)
    hands = {0: DEAL[0], 1: ["KD", "QD", "JD", "AS", "KS"], 2: ["TD", "9D", "8D", "AH", "KH"], 3: DEAL[3]}
    cards("hand", hands[observer])
    for seat, state in ((0, 1), (1, 3), (2, 1), (3, 1)):  # pass = 1, bid b = b
        v[O.SLICES["bids"].start + 5 * rel(seat) + state] = 1
    one("bidder", rel(1))
    one("contract", 3 - 2)
    one("trump", 1)  # shown: a card was led (R22)
    if observer == 1:  # the bidder alone sees the kitty and the discards (R23)
        cards("kitty", ["AS", "KS", "QS"])
        cards("discards", ["8C", "7C", "QS"])
    cards("played_by", ["AD"], rel(1))
    cards("played_by", ["7D"], rel(2))
    one("trick_leader", rel(1))
    cards("trick", ["AD"], rel(1))
    cards("trick", ["7D"], rel(2))
    v[O.SLICES["hand_sizes"]] = [len(hands[(observer + r) & 3]) for r in range(4)]
    return v


class _OneDeal:
    """A deal source giving every hand the scripted deal, dealer 3."""

    def deals(self, lanes, games, hands):
        k = len(lanes)
        perm = np.array([deck_of([[C(c) for c in h] for h in DEAL], [C(c) for c in STOCK])] * k)
        return perm, np.full(k, 3)


@pytest.mark.parametrize("observer", [1, 2])
def test_scripted_hand_observation_known_answer_on_both_engines(observer: int) -> None:
    g = Game.from_deal(DEAL, STOCK, dealer=3)
    vg = VectorGame(1, deals=_OneDeal())
    for a in SCRIPT:
        g.apply(a)
        vg.step(np.array([a]))
    want = _expected(observer)
    np.testing.assert_array_equal(O.encode_game(g, observer), want)
    np.testing.assert_array_equal(vg.observe(np.array([observer]))[0], want)
    np.testing.assert_array_equal(O.encode(D.decode(want)), want)  # and through a player's view


def test_kitty_is_the_first_stock_cards_on_both_engines_r9() -> None:
    g = Game.from_deal(DEAL, STOCK, dealer=3)
    vg = VectorGame(1, deals=_OneDeal(), record=True)
    for a in SCRIPT[:4]:
        g.apply(a)
        vg.step(np.array([a]))
    assert g.kitty == [C("AS"), C("KS"), C("QS")]  # in stock order
    assert int(vg.kitty[0]) == sum(1 << c for c in _mask("AS", "KS", "QS"))
    assert phases.kitty_cards(g.stock, 3) == g.stock[:3]
    np.testing.assert_array_equal(phases.kitty_cards(vg.stock, 3), vg.stock[:, :3])


def test_legal_actions_of_known_positions() -> None:
    # R6: above the high bid; R8 dealer_must_bid: a stuck dealer may not pass
    assert phases.bid_actions(0, False) == (0, 1, 2, 3)
    assert phases.bid_actions(2, False) == (0, 2, 3)
    assert phases.bid_actions(3, False) == (0, 3)
    assert phases.bid_actions(0, True) == (1, 2, 3)
    assert phases.BID_BITS == (0b1110, 0b1110, 0b1100, 0b1000, 0)
    g = Game.from_deal(DEAL, STOCK, dealer=3, rules=SmearRules(all_pass="dealer_must_bid"))
    for a in (0, 0, 0):
        g.apply(a)
    assert g.dealer_stuck() and g.legal_actions() == (1, 2, 3)
    g = Game.from_deal(DEAL, STOCK, dealer=3)
    for a in SCRIPT[:4]:
        g.apply(a)
    assert g.legal_actions() == tuple(trump_action(s) for s in (0, 1, 3))  # R10: suits held (no hearts)
    g.apply(SCRIPT[4])
    assert g.legal_actions() == tuple(discard_action(c) for c in _mask("8C", "7C", "AS", "KS", "QS"))  # R11
    for a in SCRIPT[5:8]:
        g.apply(a)
    assert g.legal_actions() == tuple(play_action(c) for c in _mask("AD", "KD", "QD", "JD"))  # R10 first lead
    g.apply(SCRIPT[8])
    assert g.legal_actions() == tuple(play_action(c) for c in _mask("TD", "9D", "8D", "7D"))  # R12 follow


@pytest.mark.parametrize("kitty", [0, 3])
def test_legal_bits_on_arrays_equal_the_int_form_row_by_row(kitty: int) -> None:
    rules = SmearRules(kitty_size=kitty, all_pass="dealer_must_bid")
    vg = VectorGame(48, rules=rules, seed=5)
    rng = np.random.default_rng(6)
    for _ in range(60):
        to_act = vg.to_act
        hand = vg.hands[np.arange(48), to_act]
        phase = vg.phase.copy()
        phase[:3] = (phases.HAND_OVER, phases.GAME_OVER, phases.HAND_OVER)  # rows with nobody to act
        stuck = phases.dealer_stuck(rules, phase, to_act, to_act, vg.dealer, vg.high_bid)
        first = vg.tricks_done == 0
        bits, base = phases.legal_bits(phase, hand, vg.high_bid, stuck, vg.trump, vg.led, first)
        for i in range(48):
            want = phases.legal_bits(int(phase[i]), int(hand[i]), int(vg.high_bid[i]), bool(stuck[i]),
                                     int(vg.trump[i]), int(vg.led[i]), bool(first[i]))
            assert (int(bits[i]), int(base[i])) == want, i
        vg.step(vg.random_actions(rng))


def test_records_of_both_engines_replay_through_the_validator() -> None:
    vg = VectorGame(4, seed=11, record=True, max_hands=6)
    rng = np.random.default_rng(12)
    recs: list[dict] = []
    while len(recs) < 6:
        vg.step(vg.random_actions(rng))
        recs += vg.records()
    g = Game(seed=13)
    for _ in range(400):  # random play may never reach the target: at most 400 decisions (truncated)
        if g.is_over:
            break
        if g.phase == phases.HAND_OVER:
            g.start_next_hand()
        else:
            legal = g.legal_actions()
            g.apply(legal[int(rng.integers(len(legal)))])
    for rec in [*recs, g.to_record(truncated=not g.is_over)]:
        validate_record(rec)
        assert replay(rec).to_record(truncated=rec["truncated"]) == rec


# ------------------------------------------------------------------ the state machine (core.transitions)
def test_after_bid_known_answers() -> None:
    r3, r0 = SmearRules(), SmearRules(kitty_size=0)
    # dealer 3; seat 0 passes: seat 1 bids next (R6)
    assert T.after_bid(r3, 0, 0, 3, 0, -1) == (phases.BIDDING, 1, 0, -1, False)
    # seat 1 bids 2 over nobody: it holds the high bid, seat 2 next
    assert T.after_bid(r3, 1, 2, 3, 0, -1) == (phases.BIDDING, 2, 2, 1, False)
    # seat 2 passes; the dealer passes too: bidding ends, seat 1's 2 is the contract, seat 1 takes the kitty
    # and leads (R7, R9, R12)
    assert T.after_bid(r3, 3, 0, 3, 2, 1) == (phases.TRUMP, 1, 2, 1, True)
    assert T.after_bid(r0, 3, 0, 3, 2, 1) == (phases.PLAY, 1, 2, 1, True)  # no kitty: the bidder leads
    # a bid of 4 ends the bidding at once, before the dealer acts (R7)
    assert T.after_bid(r3, 0, 4, 3, 3, 2) == (phases.TRUMP, 0, 4, 0, True)
    # everybody passed: the hand is thrown in (R8), nobody holds a bid
    assert T.after_bid(r3, 3, 0, 3, 0, -1) == (phases.HAND_OVER, 3, 0, -1, True)
    # the dealer bids last over seat 2's 3 (a bid of 4): it leads
    assert T.after_bid(r3, 1, 4, 1, 3, 2) == (phases.TRUMP, 1, 4, 1, True)


def test_after_play_trick_and_hand_known_answers() -> None:
    r3, r0 = SmearRules(), SmearRules(kitty_size=0)
    ah, kh, ts, qc = C("AH"), C("KH"), C("TS"), C("QC")
    hearts, spades, clubs = ah >> 3, ts >> 3, qc >> 3
    # seat 2 leads AH, trump spades: hearts led, seat 2 leads the trick, seat 3 next
    assert T.after_play(r3, 2, ah, -1, 1, spades, 0) == (hearts, 2, spades, False, 1, 3)
    # seat 3 trumps with TS: not void shown (a trump may be played, R12)
    assert T.after_play(r3, 3, ts, hearts, 2, spades, 1) == (hearts, 2, spades, False, 2, 0)
    # seat 0 plays QC on hearts led, spades trump: it shows it has no heart
    assert T.after_play(r3, 0, qc, hearts, 2, spades, 2) == (hearts, 2, spades, True, 3, 1)
    # seat 1 follows with KH: the trick is full
    assert T.after_play(r3, 1, kh, hearts, 2, spades, 3)[4] == T.TRICK_SIZE
    # no kitty and no trump yet: the first card led names trump (R10)
    assert T.after_play(r0, 1, qc, -1, -1, -1, 0)[:3] == (clubs, 1, clubs)
    assert T.after_play(r3, 1, qc, -1, -1, -1, 0)[2] == -1  # with a kitty, trump was named (R10): unchanged
    # the winner leads the next trick; its team takes the cards; the sixth trick ends the hand
    assert T.after_trick(3, 0) == (3, 1, 1, False)
    assert T.after_trick(2, 5) == (2, 0, 6, True)


def test_dealer_truncation_and_discards_known_answers() -> None:
    r2 = SmearRules(kitty_size=2)
    assert T.first_to_bid(3) == 0 and T.first_to_bid(1) == 2  # R6
    assert T.next_dealer(3, 1) == 0 and T.next_dealer(3, 0) == 3  # R4; R8 the same dealer after a throw-in
    assert T.truncated(200, 200, False)  # R21
    assert not T.truncated(200, 200, True) and not T.truncated(199, 200, False)
    hand = (1 << C("AH")) | (1 << C("7C")) | (1 << C("TS"))
    assert T.after_discard(r2, hand, C("7C"), 1) == ((1 << C("AH")) | (1 << C("TS")), phases.DISCARD)
    assert T.after_discard(r2, hand, C("7C"), 2)[1] == phases.PLAY  # R11: kitty_size discards, then play
    assert T.after_trump(2) == (2, phases.DISCARD)
    stock = [C(n) for n in STOCK]
    assert T.take_kitty(r2, hand, stock) == (hand | (1 << C("AS")) | (1 << C("KS")),
                                             (1 << C("AS")) | (1 << C("KS")))  # R9: the first stock cards


@pytest.mark.parametrize("kitty", [0, 3])
def test_transitions_on_arrays_equal_the_int_form_entry_by_entry(kitty: int) -> None:
    """Every transition of random arguments, once on arrays and once per entry on ints: the same values."""
    rules = SmearRules(kitty_size=kitty)
    rng = np.random.default_rng(kitty)
    n = 500
    seat, dealer, card = rng.integers(0, 4, n), rng.integers(0, 4, n), rng.integers(0, 32, n)
    high = rng.choice([0, 2, 3], n)
    bid = np.where(rng.random(n) < 0.5, 0, np.minimum(high + rng.integers(1, 3, n), 4))
    bidder = np.where(high > 0, rng.integers(0, 4, n), -1)
    led, trump = rng.integers(-1, 4, n), rng.integers(-1, 4, n)
    leader, tlen = rng.integers(-1, 4, n), rng.integers(0, 4, n)
    done, hands = rng.integers(0, 6, n), rng.integers(0, 1 << 32, n)
    stock = np.stack([rng.permutation(32)[:8] for _ in range(n)])
    calls = [
        (T.after_bid, lambda i, a: (rules, a(seat, i), a(bid, i), a(dealer, i), a(high, i), a(bidder, i))),
        (T.after_play, lambda i, a: (rules, a(seat, i), a(card, i), a(led, i), a(leader, i), a(trump, i),
                                     a(tlen, i))),
        (T.after_trick, lambda i, a: (a(seat, i), a(done, i))),
        (T.next_dealer, lambda i, a: (a(dealer, i), a(seat, i) & 1)),
        (T.after_discard, lambda i, a: (rules, a(hands, i), a(card, i), a(tlen, i))),
        (T.take_kitty, lambda i, a: (rules, a(hands, i), stock if i is None else stock[i].tolist())),
    ]
    whole = lambda x, i: x  # noqa: E731
    entry = lambda x, i: int(x[i])  # noqa: E731
    for fn, args in calls:
        if fn is T.take_kitty and not kitty:
            continue
        arrays = fn(*args(None, whole))
        arrays = arrays if isinstance(arrays, tuple) else (arrays,)
        for i in range(n):
            ints = fn(*args(i, entry))
            ints = ints if isinstance(ints, tuple) else (ints,)
            assert all(type(v) in (int, bool) for v in ints), (fn.__name__, ints)
            assert tuple(int(v) for v in ints) == tuple(int(np.broadcast_to(v, (n,))[i]) for v in arrays), \
                (fn.__name__, i)
