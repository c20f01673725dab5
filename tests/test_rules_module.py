"""smear_env.core.rules (R5, R10-R20, R22/R23): every function on ints equals the same function on arrays and
a plain branchy statement of its rule on many random inputs; the reference and the batched engine, which ask
it, play those statements in random games."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from smear_env.core import rules as R
from smear_env.core.cards import SUIT_MASKS, cards_of
from smear_env.core.config import (
    GAME_POINT_TIE_VALUES,
    HIGH_LOW_VALUES,
    RuleOptionError,
    SmearRules,
)

N = 4000  # random inputs per check


def _rng(seed: int) -> np.random.Generator:
    return np.random.default_rng(seed)


def _masks(rng: np.random.Generator, n: int, density: float = 0.25) -> np.ndarray:
    """``n`` random 32-bit card masks (int64)."""
    bits = rng.random((n, 32)) < density
    return (bits.astype(np.int64) << np.arange(32, dtype=np.int64)).sum(axis=1)


def _ints(a: np.ndarray) -> list[int]:
    return [int(x) for x in a]


def _both(fn, *arrays):
    """``fn`` on the arrays and elementwise on Python ints: asserts they agree, returns the int results."""
    out = fn(*arrays)
    outs = out if isinstance(out, tuple) else (out,)
    scalar = [fn(*(int(a[i]) if isinstance(a, np.ndarray) else a for a in arrays))
              for i in range(len(arrays[0]))]
    for k, o in enumerate(outs):
        got = [s[k] if isinstance(out, tuple) else s for s in scalar]
        assert all(type(x) in (int, bool) for x in got), {type(x) for x in got}
        assert np.asarray(o).tolist() == [int(x) for x in got]
    return scalar


# -------------------------------------------------------------------------------- spec (the rule text)
def _spec_playable(hand: int, led: int, trump: int, first_lead: bool) -> int:
    """R12/R10 read off RULES.md (the engine's branchy form before rules.py)."""
    if led < 0:
        if first_lead and trump >= 0:
            return hand & SUIT_MASKS[trump]
        return hand
    follow = hand & SUIT_MASKS[led]
    if not follow:
        return hand
    return follow | (hand & SUIT_MASKS[trump]) if trump >= 0 else follow


def _spec_winner(trick: list[int], trump: int) -> int:
    led = trick[0] >> 3
    keys = [(c & 7) + (64 if c >> 3 == trump else 32 if c >> 3 == led else 0) for c in trick]
    return keys.index(max(keys))


def _random_trick(rng: np.random.Generator, n: int) -> list[int]:
    return [int(c) for c in rng.permutation(32)[:n]]


# ---------------------------------------------------------------------------------------------- R16
def test_r16_game_points_tables_and_function():
    assert R.RANK_GAME_VALUE == (0, 0, 0, 10, 1, 2, 3, 4)
    assert R.game_points((1 << 32) - 1) == 80
    masks = _masks(_rng(0), N)
    got = _both(R.game_points, masks)
    assert got == [sum(R.RANK_GAME_VALUE[c & 7] for c in cards_of(m)) for m in _ints(masks)]


def test_r16_game_point_team_both_tie_options():
    rng = _rng(1)
    p0, p1 = rng.integers(0, 81, N), rng.integers(0, 81, N)
    p1[: N // 4] = p0[: N // 4]  # ties
    bt = rng.integers(0, 2, N)
    for tie in GAME_POINT_TIE_VALUES:
        rules = SmearRules(game_point_tie=tie)
        got = _both(lambda a, b, t, rules=rules: R.game_point_team(a, b, t, rules), p0, p1, bt)
        for a, b, t, g in zip(_ints(p0), _ints(p1), _ints(bt), got, strict=True):
            assert g == (0 if a > b else 1 if b > a else t if tie == "bidder" else -1)


# ---------------------------------------------------------------------------------------------- R12
def test_r12_trick_key_orders_trump_then_led_then_rank():
    for trump, led in itertools.product((-1, 0, 1, 2, 3), (0, 1, 2, 3)):
        cards = np.arange(32)
        keys = _both(lambda c, t=trump, ld=led: R.trick_key(c, ld, t), cards)
        assert keys == list(R.TRICK_KEYS[trump][led])
        for c in range(32):
            s, r = c >> 3, c & 7
            assert keys[c] == r + (64 if s == trump else 32 if s == led else 0)


def test_r12_trick_winner_ints_arrays_and_spec():
    rng = _rng(2)
    tricks = np.array([_random_trick(rng, 4) for _ in range(N)])
    trump = rng.integers(-1, 4, N)
    got = R.trick_winner(tricks, trump)
    for t, tr, g in zip(tricks.tolist(), _ints(trump), got.tolist(), strict=True):
        assert R.trick_winner(t, tr) == g == _spec_winner(t, tr)
        for n in (1, 2, 3):  # a partial trick: the card winning so far
            assert R.trick_winner(t[:n], tr) == _spec_winner(t[:n], tr)


def test_r12_trick_winner_with_led_given_for_tricks_stored_by_seat():
    rng = _rng(3)
    tricks = np.array([_random_trick(rng, 4) for _ in range(N)])
    leader = rng.integers(0, 4, N)
    # seat (ld + i) % 4 plays t[i]
    by_seat = np.array([np.roll(t, ld) for t, ld in zip(tricks, leader, strict=True)])
    trump = rng.integers(0, 4, N)
    led = tricks[:, 0] >> 3
    got = R.trick_winner(by_seat, trump, led)
    assert got.tolist() == [(ld + _spec_winner(t, tr)) % 4 for t, ld, tr in
                            zip(tricks.tolist(), _ints(leader), _ints(trump), strict=True)]


def test_r12_cards_beating_the_card_winning_so_far_ints_arrays_and_spec():
    """cards_beating(best, trump) (the heuristics' "winners") holds exactly the cards that, played next,
    would win the partial trick whose winning card so far is ``best``."""
    rng = _rng(16)
    best, trump, want = [], [], []
    for _ in range(N):
        trick = _random_trick(rng, int(rng.integers(1, 4)))
        tr = int(rng.integers(-1, 4))
        b = trick[R.trick_winner(trick, tr)]
        best.append(b)
        trump.append(tr)
        want.append(sum(1 << c for c in range(32) if c not in trick
                        and _spec_winner([*trick, c], tr) == len(trick)))
    got = _both(R.cards_beating, np.array(best), np.array(trump))
    assert got == want


def test_r10_r12_playable_ints_arrays_and_spec():
    rng = _rng(4)
    hands = _masks(rng, N)
    led = rng.integers(-1, 4, N)
    trump = rng.integers(-1, 4, N)
    first = rng.random(N) < 0.5
    got = R.playable(hands, led, trump, first)
    rows = zip(_ints(hands), _ints(led), _ints(trump), first.tolist(), got.tolist(), strict=True)
    for h, ld, tr, f, g in rows:
        assert R.playable(h, ld, tr, f) == g == _spec_playable(h, ld, tr, f)
    assert type(R.playable(5, -1, -1, False)) is int


def test_r10_suits_held_and_r11_discard_pool():
    rng = _rng(5)
    hands = _masks(rng, N, density=0.1)
    hands[:50] = SUIT_MASKS[2] & hands[:50]  # hands of trumps only
    trump = rng.integers(0, 4, N)
    trump[:50] = 2
    held = _both(R.suits_held, hands)
    assert held == [sum(1 << s for s in range(4) if h & SUIT_MASKS[s]) for h in _ints(hands)]
    pool = _both(R.discard_pool, hands, trump)
    assert pool == [h & ~SUIT_MASKS[t] or h for h, t in zip(_ints(hands), _ints(trump), strict=True)]


# ------------------------------------------------------------------------------------------ R13-R15
def _spec_high_low(trump: int, team0: int, team1: int, high_low: str) -> tuple[int, int]:
    def team(c: int) -> int:
        return 0 if team0 >> c & 1 else 1 if team1 >> c & 1 else -1

    if high_low == "ace_seven":
        return team(trump * 8 + 7), team(trump * 8)
    t = (team0 | team1) & SUIT_MASKS[trump]
    if not t:
        return -1, -1
    return team(t.bit_length() - 1), team((t & -t).bit_length() - 1)


@pytest.mark.parametrize("high_low", HIGH_LOW_VALUES)
def test_r13_r14_high_low_teams_both_options(high_low):
    rng = _rng(6)
    deck = np.array([rng.permutation(32) for _ in range(N)])
    cut = rng.integers(0, 33, N)  # cards played: the first `cut` of a shuffled deck, split between teams
    side = rng.integers(0, 2, (N, 32))
    t0 = np.array([sum(1 << int(c) for c, s in zip(d[:k], sd, strict=False) if s == 0)
                   for d, k, sd in zip(deck, cut, side, strict=True)])
    t1 = np.array([sum(1 << int(c) for c, s in zip(d[:k], sd, strict=False) if s == 1)
                   for d, k, sd in zip(deck, cut, side, strict=True)])
    trump = rng.integers(0, 4, N)
    got = _both(lambda tr, a, b: R.high_low_teams(tr, a, b, SmearRules(high_low=high_low)), trump, t0, t1)
    assert got == [_spec_high_low(tr, a, b, high_low) for tr, a, b in
                   zip(_ints(trump), _ints(t0), _ints(t1), strict=True)]


@pytest.mark.parametrize("high_low", HIGH_LOW_VALUES)
def test_r13_r15_points_out_of_play(high_low):
    rng = _rng(7)
    cards = _masks(rng, N, density=0.5)
    trump = rng.integers(-1, 4, N)
    got = _both(lambda c, t: R.points_out_of_play(c, t, SmearRules(high_low=high_low)), cards, trump)
    for c, t, g in zip(_ints(cards), _ints(trump), got, strict=True):
        if t < 0:
            want = 0
        elif high_low == "ace_seven":
            want = sum(1 for r in (0, 4, 7) if not c >> (8 * t + r) & 1)
        else:
            want = (0 if c & SUIT_MASKS[t] else 2) + (0 if c >> (8 * t + 4) & 1 else 1)
        assert g == want


# ------------------------------------------------------------------------------------------ R17-R20
def test_r17_contract_change_and_made():
    rng = _rng(8)
    pts, con = rng.integers(0, 5, N), rng.integers(2, 5, N)
    rules = SmearRules()
    got = _both(lambda p, c: R.contract_change(p, c, rules), pts, con)
    assert got == [p if p >= c else -c for p, c in zip(_ints(pts), _ints(con), strict=True)]
    made = _both(lambda p, c: R.contract_made(p, c, rules), pts, con)
    assert made == [p >= c for p, c in zip(_ints(pts), _ints(con), strict=True)]
    margin = 0.5  # pimc's bid estimate: made only with a margin
    for p, c in zip(_ints(pts), _ints(con), strict=True):
        assert R.contract_change(p, c, rules, made=p >= c + margin) == (p if p >= c + margin else -c)


def _spec_score(rules: SmearRules, trump, p0, p1, w0, w1, disc, bteam, contract, s0, s1):
    """R13-R20 as the engine's branchy _score_hand was written before rules.py."""
    high, low = _spec_high_low(trump, p0, p1, rules.high_low)
    jb = 1 << (8 * trump + 4)
    jack = 0 if w0 & jb else 1 if w1 & jb else -1
    cp = [R.game_points(w0), R.game_points(w1)]
    cp[bteam] += R.game_points(disc)
    game = 0 if cp[0] > cp[1] else 1 if cp[1] > cp[0] else (bteam if rules.game_point_tie == "bidder" else -1)
    won = [0, 0]
    for t in (high, low, jack, game):
        if t >= 0:
            won[t] += 1
    made = won[bteam] >= contract
    change = [0, 0]
    d = 1 - bteam
    change[bteam] = won[bteam] if made else -contract
    change[d] = won[d]
    old = [s0, s1]
    new = [old[0] + change[0], old[1] + change[1]]
    if rules.cap_defenders and new[d] > rules.target_score:
        new[d] = max(old[d], rules.target_score)
        change[d] = new[d] - old[d]
    target = rules.target_score
    if rules.win_requires_bid:
        winner = bteam if made and new[bteam] >= target else -1
    else:
        winner = bteam if new[bteam] >= target else d if new[d] >= target else -1
    return (high, low, jack, game, tuple(cp), made, tuple(change), tuple(new), winner)


def _all_rules() -> list[SmearRules]:
    return [SmearRules(high_low=h, game_point_tie=g, win_requires_bid=w, cap_defenders=c, target_score=t)
            for h, g, w, c, t in itertools.product(HIGH_LOW_VALUES, GAME_POINT_TIE_VALUES, (False, True),
                                                   (False, True), (3, 15))]


def _random_hands(rng: np.random.Generator, n: int) -> tuple[np.ndarray, ...]:
    """Finished hands: each deck splits into team 0 / team 1 plays (24 cards), won cards, discards."""
    p0, p1, w0, w1, disc = (np.zeros(n, dtype=np.int64) for _ in range(5))
    for i in range(n):
        deck = rng.permutation(32)
        who = rng.integers(0, 2, 24)
        for c, t in zip(deck[:24], who, strict=True):
            (p0 if t == 0 else p1)[i] |= 1 << int(c)
        won_by = rng.integers(0, 2, 24)
        for c, t in zip(deck[:24], won_by, strict=True):
            (w0 if t == 0 else w1)[i] |= 1 << int(c)
        for c in deck[24:24 + int(rng.integers(0, 4))]:
            disc[i] |= 1 << int(c)
    return p0, p1, w0, w1, disc


def test_r13_r20_score_hand_ints_arrays_and_spec_under_every_option():
    rng = _rng(9)
    n = 300
    p0, p1, w0, w1, disc = _random_hands(rng, n)
    trump, bt, con = rng.integers(0, 4, n), rng.integers(0, 2, n), rng.integers(2, 5, n)
    s0, s1 = rng.integers(-8, 20, n), rng.integers(-8, 20, n)
    for rules in _all_rules():
        arr = R.score_hand(rules, trump, p0, p1, w0, w1, disc, bt, con, s0, s1)
        for i in range(n):
            args = [int(a[i]) for a in (trump, p0, p1, w0, w1, disc, bt, con, s0, s1)]
            sc = R.score_hand(rules, *args)
            assert tuple(sc) == _spec_score(rules, *args), (rules, args)
            flat = [sc.high, sc.low, sc.jack, sc.game, *sc.card_points, sc.made, *sc.change, *sc.scores,
                    sc.winner]
            assert all(type(x) in (int, bool) for x in flat)
            assert type(sc.made) is bool
            row = [arr.high[i], arr.low[i], arr.jack[i], arr.game[i], arr.card_points[0][i],
                   arr.card_points[1][i], arr.made[i], arr.change[0][i], arr.change[1][i], arr.scores[0][i],
                   arr.scores[1][i], arr.winner[i]]
            assert [int(x) for x in row] == [int(x) for x in flat]


def test_r20_capped_defender_score():
    old, ch = np.array([10, 14, 16, 13, 16]), np.array([3, 1, 2, 1, 0])
    to15 = SmearRules(target_score=15)
    assert R.capped_defender_score(old, ch, to15).tolist() == [13, 15, 16, 14, 16]
    got = [R.capped_defender_score(int(o), int(c), to15) for o, c in zip(old, ch, strict=True)]
    assert got == [13, 15, 16, 14, 16]


# ---------------------------------------------------------------------------------------------- R23
def test_r22_r23_trump_known():
    rng = _rng(10)
    trump = rng.integers(-1, 4, N)
    bidder, led = rng.random(N) < 0.5, rng.random(N) < 0.5
    got = _both(R.trump_known, trump, bidder, led)
    rows = zip(_ints(trump), bidder.tolist(), led.tolist(), strict=True)
    assert got == [t >= 0 and (b or ld) for t, b, ld in rows]


# ----------------------------------------------------------------------------------------------- R5
def test_r5_deals_from_a_generator_and_as_masks():
    rng = _rng(11)
    hands, stock = R.shuffled_deal(np.random.default_rng(5))
    assert (hands, stock) == R.deal_from(np.random.default_rng(5).permutation(32).tolist())
    assert sorted(c for h in hands for c in h) + sorted(stock) != []
    assert sorted([c for h in hands for c in h] + stock) == list(range(32))
    perms = np.array([rng.permutation(32) for _ in range(50)])
    masks, st = R.deal_masks(perms)
    for p, m, s in zip(perms.tolist(), masks.tolist(), st.tolist(), strict=True):
        h, s2 = R.deal_from(p)
        assert m == [sum(1 << c for c in x) for x in h] and s == s2


# ------------------------------------------------------- the engines asking rules.py, against the spec
def test_r5_hashed_deals_are_the_batched_engines_pinned_deals():
    """rules.lane_keys / hashed_deals / lane_deal give the deals the batched engine dealt before they moved
    to rules.py (digest and one deal taken from vector.py's own copy of the hash)."""
    import hashlib

    rng = _rng(12)
    lanes = rng.integers(0, 1000, 200)
    games, hands = rng.integers(0, 1 << 20, 200), rng.integers(0, 300, 200)
    h = hashlib.sha256()
    for seed in (0, 7, 2**40 + 3, 2**64 - 1):
        perm, dealer = R.hashed_deals(R.lane_keys(seed, lanes), games, hands)
        assert (np.sort(perm, axis=1) == np.arange(32)).all() and ((dealer >= 0) & (dealer < 4)).all()
        h.update(perm.astype("<i8").tobytes())
        h.update(dealer.astype("<i8").tobytes())
    assert h.hexdigest()[:16] == "4f9ab4c1a6b35394"
    hands = [[7, 19, 21, 24, 28, 31], [0, 3, 4, 13, 16, 29], [5, 8, 12, 25, 27, 30], [2, 10, 15, 17, 18, 22]]
    assert R.lane_deal(5, 3, 2, 1) == (0, hands, [26, 6, 23, 9, 14, 11, 1, 20])
    from smear_env.engine.vector import lane_deal

    assert lane_deal(5, 3, 2, 1) == R.lane_deal(5, 3, 2, 1)


def _vector_games(rules: SmearRules, n: int, seed: int):
    from smear_env.engine.vector import VectorGame

    return VectorGame(n, rules, seed=seed)


@pytest.mark.parametrize("kitty", [0, 3])
def test_vector_legal_bits_equal_the_spec(kitty):
    """vector.legal_bits (R10, R11, R12) on the states of random play equals the plain statements of
    playable cards, the discard pool and the trump choices."""
    from smear_env.engine.game import DISCARD, PLAY, TRUMP

    vg = _vector_games(SmearRules(kitty_size=kitty), 64, seed=kitty)
    rng = _rng(14)
    seen = set()
    for _ in range(150):
        bits, base = vg.legal_bits()
        hand = vg.hands[np.arange(64), vg.to_act]
        for i in range(64):
            h, t, ph = int(hand[i]), int(vg.trump[i]), int(vg.phase[i])
            if ph == PLAY:
                want = _spec_playable(h, int(vg.led[i]), t, int(vg.tricks_done[i]) == 0)
                assert (int(bits[i]), int(base[i])) == (want, 40)
            elif ph == DISCARD:
                assert (int(bits[i]), int(base[i])) == (h & ~SUIT_MASKS[t] or h, 8)
            elif ph == TRUMP:
                want = sum(1 << (4 + s) for s in range(4) if h & SUIT_MASKS[s])
                assert (int(bits[i]), int(base[i])) == (want, 0)
        seen |= set(vg.phase.tolist())
        vg.step(vg.random_actions(rng))
    assert PLAY in seen and (kitty == 0 or DISCARD in seen)


@pytest.mark.parametrize("rules", _all_rules()[::3], ids=lambda r: f"{r.high_low}-{r.game_point_tie}-"
                         f"{int(r.win_requires_bid)}{int(r.cap_defenders)}-{r.target_score}")
def test_vector_score_and_trick_winner_equal_the_spec(rules, monkeypatch):
    """vector._score (R13-R20) equals the plain statement of the scoring on the arrays it scores;
    vector._play's trick winner (R12) equals the plain statement on the trick in play order."""
    from smear_env.engine.vector import VectorGame

    checked = {"hands": 0, "tricks": 0}
    orig = VectorGame._score

    def wrapped(self, idx, res):
        pb = self.played_by[idx]
        args = [a.tolist() for a in (self.trump[idx], pb[:, 0] | pb[:, 2], pb[:, 1] | pb[:, 3],
                                     self.won[idx, 0], self.won[idx, 1], self.discards[idx],
                                     self.bidder[idx] & 1, self.high_bid[idx], self.scores[idx, 0],
                                     self.scores[idx, 1])]
        orig(self, idx, res)
        for i, lane in enumerate(idx.tolist()):
            want = _spec_score(self.rules, *(a[i] for a in args))
            assert tuple(res.score_delta[lane].tolist()) == want[6]
            assert tuple(res.scores[lane].tolist()) == want[7]
            assert int(res.winner[lane]) == want[8]
            assert tuple(self.hand_points[lane].tolist()) == want[:4]
            assert bool(self.hand_made[lane]) == want[5]
        checked["hands"] += len(idx)

    monkeypatch.setattr(VectorGame, "_score", wrapped)
    vg = VectorGame(64, rules, seed=1)
    rng = _rng(15)
    for _ in range(400):
        last = (vg.phase == 3) & (vg.trick_len == 3) & (vg.tricks_done < 5)
        trick, leader, trump = vg.trick.copy(), vg.leader.copy(), vg.trump.copy()
        acts = vg.random_actions(rng)
        seat = vg.to_act.copy()
        vg.step(acts)
        for lane in np.flatnonzero(last).tolist():
            by_seat = trick[lane].tolist()
            by_seat[seat[lane]] = int(acts[lane]) - 40
            ld = int(leader[lane])
            in_order = [by_seat[(ld + k) % 4] for k in range(4)]
            assert int(vg.to_act[lane]) == (ld + _spec_winner(in_order, int(trump[lane]))) % 4
            checked["tricks"] += 1
    assert checked["hands"] > 50 and checked["tricks"] > 200


def test_reference_engine_equals_spec_functions_in_random_games():
    """The reference engine, now asking rules.py, still plays R10-R20 as their plain statements say."""
    from smear_env.engine.game import HAND_OVER, PLAY, Game

    rng = _rng(19)
    hands_scored = 0
    for i, rules in enumerate(_all_rules()):
        g = Game(SmearRules(**{**rules.to_dict(), "kitty_size": i % 4}), seed=i)
        for _ in range(600):
            if g.is_over:
                break
            if g.phase == HAND_OVER:
                g.start_next_hand()
                continue
            if g.phase == PLAY:
                led = g.trick[0] >> 3 if g.trick else -1
                want = _spec_playable(g.hands[g.to_act], led, g.trump, not g.tricks)
                assert {a - 40 for a in g.legal_actions()} == set(cards_of(want))
            la = g.legal_actions()
            before, trick, seats, old = len(g.tricks), list(g.trick), list(g.trick_seats), list(g.scores)
            a = la[int(rng.integers(len(la)))]
            g.apply(a)
            if len(g.tricks) > before:  # R12
                winner_i = _spec_winner([*trick, a - 40], g.trump)
                assert g.tricks[-1][3] == [*seats, g.tricks[-1][1][-1]][winner_i]
            if len(g.tricks) == 6 and g.phase != PLAY:  # R13-R20
                pb, bt = g.played_by, g.bidder & 1
                want = _spec_score(g.rules, g.trump, pb[0] | pb[2], pb[1] | pb[3], g.won[0], g.won[1],
                                   sum(1 << c for c in g.discards), bt, g.contract, *old)
                hr = g.hand_result
                pts = tuple(-1 if hr["points"][k] is None else hr["points"][k]
                            for k in ("high", "low", "jack", "game"))
                assert pts == want[:4]
                assert (tuple(hr["card_points"]), hr["made_contract"], tuple(hr["score_change"]),
                        tuple(hr["scores"])) == want[4:8]
                assert (-1 if g.winner is None else g.winner) == want[8]
                hands_scored += 1
    assert hands_scored > 40


# -------------------------------------------------------------------- config: options by meaning
def test_option_constants_are_the_allowed_values():
    from smear_env.core import config as C

    assert C.HIGH_LOW_VALUES == (C.HIGH_LOW_ACE_SEVEN, C.HIGH_LOW_IN_PLAY) == ("ace_seven", "in_play")
    assert C.GAME_POINT_TIE_VALUES == (C.GAME_POINT_TIE_NOBODY, C.GAME_POINT_TIE_BIDDER)
    assert C.GAME_POINT_TIE_VALUES == ("nobody", "bidder")
    assert C.ALL_PASS_VALUES == (C.ALL_PASS_REDEAL, C.ALL_PASS_DEALER_MUST_BID)
    assert C.ALL_PASS_VALUES == ("redeal", "dealer_must_bid")


def test_differences_from_reads_a_missing_option_as_its_default():
    rules = SmearRules()
    old = rules.to_dict()
    del old["cap_defenders"], old["all_pass"]  # recorded before these options existed
    assert rules.differences_from(old) == []
    assert SmearRules(cap_defenders=True).differences_from(old) == ["cap_defenders"]
    assert SmearRules.with_defaults(old) == rules.to_dict()


def test_differences_from_names_changed_and_unknown_options():
    rules = SmearRules(kitty_size=2)
    rec = {**SmearRules().to_dict(), "high_low": "in_play", "jokers": 1}
    assert rules.differences_from(rec) == ["kitty_size", "high_low", "jokers"]
    # 0 is not the bool False
    assert rules.differences_from({"win_requires_bid": 0, "kitty_size": 2}) == ["win_requires_bid"]
    assert rules.differences_from({}) == ["kitty_size"]


def test_deals_reexported_by_game_are_the_rules_functions():
    from smear_env.engine.game import deal_from, shuffled_deal

    assert deal_from is R.deal_from and shuffled_deal is R.shuffled_deal
    with pytest.raises(RuleOptionError):
        SmearRules(high_low="x")
