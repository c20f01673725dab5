"""Perfect-information solver for the play phase of one Smear hand (R12-R17).

Given every hand (a determinized deal), :func:`solve` returns the exact minimax value of the rest of the
hand and :func:`solve_all_moves` the value of each legal card of the player to move. The two teams play
against each other; values are from the point of view of the team of the seat to move at the root
(positive = good for it).

Value. By default the hand's score difference under the contract rule (R17): the bidder team's score
change minus the defenders' -- ``(pB if pB >= contract else -contract) - pD`` for pB / pD points won --
negated for a defender to move. A custom ``value_fn(pB, pD)`` (bidder team's view, must be nondecreasing
in pB and nonincreasing in pD) may replace it; targets and caps (R18-R20) are not modelled.

Why it is fast enough in pure Python:

* Every card still in a hand will be played, so High and Low (R13, R14, either option) are fixed by the
  deal; only Jack (R15: who wins the trick holding it) and Game (R16: card points) depend on play. The
  state carried down the tree is the bidder team's card points so far and the jack status.
* At each trick start: optimistic/pessimistic bounds (bidder team gets all / none of the rest, jack
  included) cut the search when they fall outside the window or coincide (outcome decided); a
  transposition table keyed on (hands, leader, bidder points, jack status) stores lower/upper bounds.
* Equivalent cards: cards of one suit in one hand with no live card between them (in other hands or in
  the current trick) and of the same scoring class are interchangeable; only one is searched. While the
  Game point is still open the classes are the card-point values (7/8/9 merge), once it is decided only
  the jack of trump stands apart.
* Move ordering: leads of the top live card of a suit first (trump first); followers take the trick with
  the cheapest winning card, or smear points onto a partner who is winning, else throw the cheapest card.
  Trick-winning keys and follower ordering keys come from per-trump tables built once (``_tables``).
* Optional ``node_cap`` (used by the PIMC agent; default None = exact): past the cap, trick starts are
  estimated instead of searched, which bounds the rare pathological deals (see :func:`solve`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from ..core.cards import RANK_JACK, SUIT_MASKS, cards_of
from ..core.config import SmearRules
from ..core.rules import (
    CARD_GAME_POINTS,
    TRICK_KEYS,
    contract_change,
    game_point_team,
    game_points,
    high_low_teams,
    jack_bit,
    playable,
)
from ..engine.game import PLAY

ValueFn = Callable[[int, int], float]
DEFAULT_RULES = SmearRules()

_INF = float("inf")
JACK_BIDDER, JACK_DEFENDERS, JACK_NOBODY, JACK_OPEN = 0, 1, 2, 3


@dataclass(frozen=True)
class SolverState:
    """A play-phase position with every hand known (seats 0..3, team = seat % 2, R1)."""

    hands: tuple[int, int, int, int]
    """Current hand of each seat (card bitmasks)."""
    trump: int
    """Trump suit 0..3; -1 only before the first lead with kitty_size 0 (the first card led names it, R10)."""
    to_move: int
    """Seat to play."""
    bidder: int
    contract: int
    trick: tuple[int, ...] = ()
    """Cards of the current trick in play order (its leader is ``to_move - len(trick)``)."""
    played_by: tuple[int, int, int, int] = (0, 0, 0, 0)
    """Cards each seat has played this hand, current trick included (R13/R14 need who played a trump)."""
    won: tuple[int, int] = (0, 0)
    """Cards in tricks each team has won this hand."""
    discards: int = 0
    """The bidder's discards (count for the bidder team's Game total, R16)."""
    rules: SmearRules = DEFAULT_RULES
    """The rule options (R13/R14 ``high_low``, R16 ``game_point_tie``, ...), passed to
    :mod:`smear_env.core.rules` as they are: the solver reads no option itself."""
    first_lead: bool = False
    """True before the first card of the hand is led: with a known trump it must be led (R10)."""

    def __post_init__(self) -> None:
        if not 0 <= self.to_move < 4 or not 0 <= self.bidder < 4:
            raise ValueError(f"to_move {self.to_move!r} and bidder {self.bidder!r} must be seats 0..3")
        if self.trump not in (-1, 0, 1, 2, 3):
            raise ValueError(f"trump {self.trump!r} must be a suit 0..3 or -1 (not yet named)")
        if not isinstance(self.rules, SmearRules):
            raise TypeError(f"rules must be a SmearRules, not {type(self.rules).__name__}")
        if len(self.trick) > 3:
            raise ValueError(f"a current trick holds 0..3 cards, not {len(self.trick)}")
        sizes = [h.bit_count() for h in self.hands]
        n = len(self.trick)
        for i in range(4):
            seat = (self.to_move + i) % 4
            want = sizes[self.to_move] - (1 if i >= 4 - n else 0)
            if sizes[seat] != want:
                raise ValueError(
                    f"hand sizes {sizes} do not fit seat {self.to_move} to move after {n} card(s)"
                )
        if self.trump < 0 and (n or not self.first_lead):
            raise ValueError("trump may be unknown (-1) only before the first lead")

    @classmethod
    def from_game(cls, game, hands: tuple[int, int, int, int] | None = None, discards: int | None = None
                  ) -> SolverState:
        """The position of a :class:`~smear_env.engine.game.Game` in the PLAY phase (optionally with other
        hands)."""

        if game.phase != PLAY:
            raise ValueError(f"the solver needs a game in phase PLAY, not {game.phase!r}")
        return cls(
            hands=tuple(hands if hands is not None else game.hands),  # type: ignore[arg-type]
            trump=game.trump,
            to_move=game.to_act,
            bidder=game.bidder,
            contract=game.contract,
            trick=tuple(game.trick),
            played_by=tuple(game.played_by),  # type: ignore[arg-type]
            won=(game.won[0], game.won[1]),
            discards=sum(1 << c for c in game.discards) if discards is None else discards,
            rules=game.rules,
            first_lead=not game.tricks and not game.trick,
        )


def contract_value(contract: int, rules: SmearRules = DEFAULT_RULES) -> ValueFn:
    """R17 (:func:`smear_env.core.rules.contract_change`): bidder team's score change minus the defenders'."""

    def value(pb: int, pd: int) -> float:
        return contract_change(pb, contract, rules) - pd

    return value


def _legal(state: SolverState, trump: int) -> int:
    """R10/R12 (:func:`smear_env.core.rules.playable`) for ``trump``; a first lead from a sampled hand
    without trump may be any card."""
    hand = state.hands[state.to_move]
    return playable(hand, state.trick[0] >> 3 if state.trick else -1, trump, state.first_lead) or hand


# ---------------------------------------------------------------------------- equivalent cards
_REPS: dict[int, tuple[int, tuple[int, ...]]] = {}


def rank_representatives(alive: int, mine: int, mode: int) -> tuple[int, tuple[int, ...]]:
    """Representatives among ``mine`` (8-bit rank mask within one suit, subset of ``alive``) and, per rank
    in ``mine``, the rank of its representative. ``mode`` 0: all ranks one class; 1: card-point classes
    (7/8/9 merge); 2: one class except the jack."""
    key = mode << 16 | alive << 8 | mine
    got = _REPS.get(key)
    if got is not None:
        return got
    rep_of = [-1] * 8
    reps = 0
    prev_mine = False
    prev_cls = -1
    cur = -1
    for r in range(7, -1, -1):
        if not alive >> r & 1:
            continue
        if mine >> r & 1:
            cls = 0 if mode == 0 else (r if r > 2 else 0) if mode == 1 else (1 if r == RANK_JACK else 0)
            if not (prev_mine and cls == prev_cls):
                cur = r
                reps |= 1 << r
            rep_of[r] = cur
            prev_mine, prev_cls = True, cls
        else:
            prev_mine = False
    got = (reps, tuple(rep_of))
    _REPS[key] = got
    return got


# ---------------------------------------------------------------------------- per-trump tables
_TABLES: dict[int, tuple] = {}


def _tables(trump: int) -> tuple:
    """Per-trump lookup tables (pure functions of the trump suit, built once per process):
    ``kt[led][c]`` trick-winning key of card ``c`` with suit ``led`` led (R12: trumps beat the led suit,
    which beats the rest); ``fk[led][wkey + 1][c]`` move-ordering key for a follower whose opponent is
    winning with key ``wkey`` (cheapest winning card, else cheapest throw); ``pk[led][wkey + 1][c]`` the
    same when the partner is winning (smear card points onto it, R16)."""
    got = _TABLES.get(trump)
    if got is not None:
        return got
    gv = CARD_GAME_POINTS
    kt = TRICK_KEYS[trump][:4]  # R12: smear_env.core.rules.trick_key
    fk = tuple(tuple(tuple(kt[led][c] if kt[led][c] > w else 200 + gv[c] * 8 + (c & 7) for c in range(32))
                     for w in range(-1, 72)) for led in range(4))
    pk = tuple(tuple(tuple(-gv[c] * 8 + (kt[led][c] > w) * 4 for c in range(32)) for w in range(-1, 72))
               for led in range(4))
    got = (kt, fk, pk)
    _TABLES[trump] = got
    return got


# ---------------------------------------------------------------------------- the search
@dataclass
class _Search:
    trump: int
    bteam: int
    leaf: tuple[tuple[float, ...], ...]
    gcls: tuple[int, ...]
    hands: list[int]
    tt: dict = field(default_factory=dict)
    nodes: int = 0
    hint: int = -1
    best_lead: int = -1
    node_cap: int | None = None
    """Search at most this many nodes per root move; past it, trick starts are estimated (see solve)."""
    capped: bool = False
    """Set when the node cap was hit (the result is then an estimate, not exact)."""

    def make(self) -> Callable[..., float]:
        trump = self.trump
        bteam = self.bteam
        leaf = self.leaf
        gcls = self.gcls
        hands = self.hands
        tt = self.tt
        tmask = SUIT_MASKS[trump]
        suit_masks = SUIT_MASKS
        jbit = jack_bit(trump)
        gp = game_points
        gv = CARD_GAME_POINTS
        reps_fn = rank_representatives
        reps_cache = _REPS
        inf = _INF
        me = self
        kt_all, fk_all, pk_all = _tables(trump)
        cap = self.node_cap if self.node_cap is not None else 1 << 62

        def card_key(c: int, led: int) -> int:
            return kt_all[led][c]

        def moves_of(legal: int, alive: int, pm: bool, jack: int) -> list[int]:
            out = []
            s = 0
            while legal:
                mine = legal & 0xFF
                if mine:
                    if mine & (mine - 1):  # two or more cards of the suit: reduce equivalents
                        mode = 1 if pm else (2 if s == trump and jack == JACK_OPEN else 0)
                        a = alive >> (8 * s) & 0xFF
                        got = reps_cache.get(mode << 16 | a << 8 | mine)
                        if got is None:
                            got = reps_fn(a, mine, mode)
                        mine = got[0]
                    base = 8 * s
                    while mine:
                        low = mine & -mine
                        out.append(base + low.bit_length() - 1)
                        mine ^= low
                legal >>= 8
                s += 1
            return out

        def trick_start(leader: int, bpts: int, jack: int, alpha: float, beta: float) -> float:
            h0, h1, h2, h3 = hands
            allh = h0 | h1 | h2 | h3
            if not allh:
                return leaf[jack][bpts]
            rest = gp(allh)
            # bounds: the bidder team wins all / none of the rest -- except the run of top live trumps,
            # which its holding team surely captures (each wins its trick or falls to a higher one of it)
            sure = 0
            jlo = JACK_DEFENDERS if jack == JACK_OPEN else jack
            jhi = JACK_BIDDER if jack == JACK_OPEN else jack
            t = allh & tmask
            if t:
                top = 1 << (t.bit_length() - 1)
                team0 = h0 | h2
                x = 0 if team0 & top else 1
                xm = team0 if x == 0 else (h1 | h3)
                while t and xm & top:
                    sure |= top
                    t ^= top
                    top = 1 << (t.bit_length() - 1) if t else 0
                sp = gp(sure)
                if x == bteam:
                    lb = leaf[JACK_BIDDER if sure & jbit else jlo][bpts + sp]
                    ub = leaf[jhi][bpts + rest]
                else:
                    lb = leaf[jlo][bpts]
                    ub = leaf[JACK_DEFENDERS if sure & jbit else jhi][bpts + rest - sp]
            else:
                ub = leaf[jhi][bpts + rest]
                lb = leaf[jlo][bpts]
            if ub == lb or ub <= alpha:
                return ub
            if lb >= beta:
                return lb
            if me.nodes > cap:
                # node cap (pathological deals): estimate that each team takes the card points and the jack
                # it holds; a leaf value inside [lb, ub], not stored in the transposition table
                me.capped = True
                bh = hands[bteam] | hands[bteam + 2]
                nj = jack if jack != JACK_OPEN else (JACK_BIDDER if bh & jbit else JACK_DEFENDERS)
                v = leaf[nj][bpts + gp(bh)]
                return lb if v < lb else ub if v > ub else v
            pm = gcls[bpts] != gcls[bpts + rest]
            # the past matters only through the open Game threshold (or the decided Game class)
            key = (h0, h1, h2, h3, leader, bpts if pm else -1 - gcls[bpts], jack)
            e = tt.get(key)
            hint = -1
            if e is not None:
                lo, hi, hint = e
                if lo >= beta:
                    return lo
                if hi <= alpha or lo == hi:
                    return hi
            else:
                lo, hi = lb, ub
            if alpha < lo:
                alpha = lo
            if beta > hi:
                beta = hi
            if allh.bit_count() == 4:  # last trick: every play is forced
                c0 = hands[leader]
                c1 = hands[(leader + 1) & 3]
                c2 = hands[(leader + 2) & 3]
                c3 = hands[(leader + 3) & 3]
                kt = kt_all[(c0.bit_length() - 1) >> 3]
                best = kt[c0.bit_length() - 1]
                wi = 0
                k = kt[c1.bit_length() - 1]
                if k > best:
                    best, wi = k, 1
                k = kt[c2.bit_length() - 1]
                if k > best:
                    best, wi = k, 2
                k = kt[c3.bit_length() - 1]
                if k > best:
                    wi = 3
                wteam = (leader + wi) & 1
                nb = bpts + rest if wteam == bteam else bpts
                nj = jack
                if allh & jbit:
                    nj = JACK_BIDDER if wteam == bteam else JACK_DEFENDERS
                v = leaf[nj][nb]
                tt[key] = (v, v, -1)
                return v
            me.hint = hint
            v = play(leader, leader, (), -1, -1, bpts, jack, pm, alpha, beta, 0, allh)
            hint = me.best_lead
            if v <= alpha:
                tt[key] = (lo, v, hint)
            elif v >= beta:
                tt[key] = (v, hi, hint)
            else:
                tt[key] = (v, v, hint)
            return v

        def play(mover: int, leader: int, trick: tuple, wkey: int, wseat: int, bpts: int, jack: int,
                 pm: bool, alpha: float, beta: float, legal: int, alive: int) -> float:
            """``alive``: every card in a hand or in the current trick (constant during a trick)."""
            me.nodes += 1
            hand = hands[mover]
            n = len(trick)
            if n:
                led = trick[0] >> 3
                kt = kt_all[led]
                if not legal:
                    legal = playable(hand, led, trump, False)  # R12: follow suit or trump
            else:
                led = -1
                if not legal:
                    legal = hand  # R12: a later lead is any card (the hand's first lead comes with its cards)
            moves = moves_of(legal, alive, pm, jack)
            if len(moves) > 1:
                if n == 0:
                    # leads: the top live card of a suit first (trump first), then cheap cards
                    def lead_key(c: int) -> int:
                        s = c >> 3
                        top = not (alive >> (c + 1)) & (suit_masks[s] >> (c + 1))
                        return (0 if top and s == trump else 1 if top else 2) * 64 + gv[c] * 8 + (c & 7)

                    moves.sort(key=lead_key)
                    hint = me.hint
                    if hint >= 0 and hint in moves:
                        moves.remove(hint)
                        moves.insert(0, hint)
                elif (wseat & 1) == (mover & 1):
                    moves.sort(key=pk_all[led][wkey + 1].__getitem__)  # smear onto partner
                else:
                    moves.sort(key=fk_all[led][wkey + 1].__getitem__)  # cheapest winner, else cheapest
            maximize = (mover & 1) == bteam
            best = -inf if maximize else inf
            best_c = moves[0]
            nxt = (mover + 1) & 3
            for c in moves:
                hands[mover] = hand ^ (1 << c)
                k = kt[c] if n else kt_all[c >> 3][c]
                if k > wkey:
                    nk, ns = k, mover
                else:
                    nk, ns = wkey, wseat
                if n == 3:
                    wteam = ns & 1
                    t0, t1, t2 = trick
                    nb = bpts + gv[t0] + gv[t1] + gv[t2] + gv[c] if wteam == bteam else bpts
                    nj = jack
                    if ((1 << t0) | (1 << t1) | (1 << t2) | (1 << c)) & jbit:
                        nj = JACK_BIDDER if wteam == bteam else JACK_DEFENDERS
                    v = trick_start(ns, nb, nj, alpha, beta)
                else:
                    v = play(nxt, leader, trick + (c,), nk, ns, bpts, jack, pm, alpha, beta, 0, alive)
                hands[mover] = hand
                if maximize:
                    if v > best:
                        best = v
                        best_c = c
                        if v > alpha:
                            alpha = v
                            if alpha >= beta:
                                break
                else:
                    if v < best:
                        best = v
                        best_c = c
                        if v < beta:
                            beta = v
                            if alpha >= beta:
                                break
            if n == 0:
                me.best_lead = best_c
            return best

        self.trick_start = trick_start  # type: ignore[attr-defined]
        self.play = play  # type: ignore[attr-defined]
        self.moves_of = moves_of  # type: ignore[attr-defined]
        self.card_key = card_key  # type: ignore[attr-defined]
        return play


def _setup(state: SolverState, trump: int, value_fn: ValueFn | None, node_cap: int | None = None
           ) -> tuple[_Search, int, int]:
    """Build the search for ``trump``; returns it, the bidder team's card points so far and jack status."""
    bteam = state.bidder & 1
    hands = state.hands
    in_hands = hands[0] | hands[1] | hands[2] | hands[3]
    pb = state.played_by
    # R13/R14: every card in a hand will be played, so High and Low are fixed now.
    team0 = hands[0] | pb[0] | hands[2] | pb[2]
    team1 = hands[1] | pb[1] | hands[3] | pb[3]
    high, low = high_low_teams(trump, team0, team1, state.rules)
    fixed = [0, 0]
    for t in (high, low):
        if t >= 0:
            fixed[t] += 1
    fb, fd = fixed[bteam], fixed[1 - bteam]
    trick_mask = 0
    for c in state.trick:
        trick_mask |= 1 << c
    won = state.won
    bpts = game_points(won[bteam]) + game_points(state.discards)
    total = bpts + game_points(won[1 - bteam]) + game_points(in_hands | trick_mask)
    jbit = jack_bit(trump)
    if (in_hands | trick_mask) & jbit:
        jack = JACK_OPEN
    elif won[bteam] & jbit:
        jack = JACK_BIDDER
    elif won[1 - bteam] & jbit:
        jack = JACK_DEFENDERS
    else:
        jack = JACK_NOBODY
    vf = value_fn if value_fn is not None else contract_value(state.contract, state.rules)
    gcls = []  # per bidder-team card points b: 0 the bidder's team wins Game, 1 the defenders, 2 nobody
    for b in range(total + 1):
        g = game_point_team(b, total - b, 0, state.rules)  # R16, the bidder's team as team 0
        gcls.append(g if g >= 0 else 2)
    leaf = []
    for j in (JACK_BIDDER, JACK_DEFENDERS, JACK_NOBODY):
        row = []
        for b in range(total + 1):
            g = gcls[b]
            p_b = fb + (j == JACK_BIDDER) + (g == 0)
            p_d = fd + (j == JACK_DEFENDERS) + (g == 1)
            row.append(vf(p_b, p_d))
        leaf.append(tuple(row))
    search = _Search(trump=trump, bteam=bteam, leaf=tuple(leaf), gcls=tuple(gcls), hands=list(hands),
                     node_cap=node_cap)
    search.make()
    return search, bpts, jack


def _root_values(state: SolverState, value_fn: ValueFn | None, exact: bool, node_cap: int | None = None
                 ) -> dict[int, float]:
    """Values (bidder team's view) of each legal card; with ``exact`` False only the best is exact and the
    others are bounds no better than it."""
    own = state.hands[state.to_move]
    trumps = [state.trump] if state.trump >= 0 else sorted({c >> 3 for c in cards_of(own)})
    out: dict[int, float] = {}
    mover = state.to_move
    maximize = (mover & 1) == (state.bidder & 1)
    n = len(state.trick)
    leader = (mover - n) & 3
    for trump in trumps:
        search, bpts, jack = _setup(state, trump, value_fn, node_cap)
        hands = search.hands
        if state.trump < 0:
            legal = state.hands[mover] & SUIT_MASKS[trump]  # R10 (kitty 0): this lead names trump
        else:
            legal = _legal(state, trump)
        led = state.trick[0] >> 3 if n else -1
        wkey, wseat = -1, -1
        for i, c in enumerate(state.trick):
            k = search.card_key(c, led)  # type: ignore[attr-defined]
            if k > wkey:
                wkey, wseat = k, (leader + i) & 3
        alive = hands[0] | hands[1] | hands[2] | hands[3]
        for c in state.trick:
            alive |= 1 << c
        rest = game_points(alive)
        pm = search.gcls[bpts] != search.gcls[bpts + rest]
        # equivalent cards share a value (R12 trick-winning power and the same scoring class)
        rep_of: dict[int, int] = {}
        for s in range(4):
            mine = legal >> (8 * s) & 0xFF
            if not mine:
                continue
            mode = 1 if pm else (2 if s == trump and jack == JACK_OPEN else 0)
            _, rmap = rank_representatives(alive >> (8 * s) & 0xFF, mine, mode)
            for r in range(8):
                if mine >> r & 1:
                    rep_of[8 * s + r] = 8 * s + rmap[r]
        # null-window tests over the few distinct leaf values (MTD-style bisection; the TT keeps bounds)
        values = sorted({v for row in search.leaf for v in row})
        index = {v: i for i, v in enumerate(values)}
        root_lo = index[search.leaf[JACK_DEFENDERS if jack == JACK_OPEN else jack][bpts]]
        root_hi = index[search.leaf[JACK_BIDDER if jack == JACK_OPEN else jack][bpts + rest]]
        vals: dict[int, float] = {}
        best_i = -1 if maximize else len(values)
        for c in sorted(set(rep_of.values()), key=lambda c: -(c & 7)):
            lo_i, hi_i = root_lo, root_hi
            search.nodes = 0  # the node cap is per root move
            if not exact:  # only the best move needs an exact value
                if maximize:
                    lo_i = max(lo_i, best_i)
                else:
                    hi_i = min(hi_i, best_i)
            while lo_i < hi_i:
                mid = (lo_i + hi_i + 1) // 2
                r = search.play(mover, leader, state.trick, wkey, wseat, bpts, jack, pm,  # type: ignore[attr-defined]
                                values[mid - 1], values[mid], 1 << c, alive)
                if r >= values[mid]:
                    lo_i = index[r]
                else:
                    hi_i = index[r]
            vals[c] = values[lo_i]
            if (maximize and lo_i > best_i) or (not maximize and lo_i < best_i):
                best_i = lo_i
        for c, r in rep_of.items():
            out[c] = vals[r]
    return out


def _check_cap(node_cap: int | None) -> None:
    if node_cap is not None and (isinstance(node_cap, bool) or not isinstance(node_cap, int) or node_cap < 1):
        raise ValueError(f"node_cap must be an integer >= 1 or None (exact), not {node_cap!r}")


def solve_all_moves(state: SolverState, value_fn: ValueFn | None = None, node_cap: int | None = None
                    ) -> dict[int, float]:
    """Value of every legal card of the seat to move (card id -> value), from the point of view of that
    seat's team (positive = good for it). Exact with ``node_cap`` None; with a cap, a root card whose search
    passes ``node_cap`` nodes gets an estimate (see :func:`solve`)."""
    _check_cap(node_cap)
    sign = 1 if (state.to_move & 1) == (state.bidder & 1) else -1
    return {c: sign * v for c, v in _root_values(state, value_fn, exact=True, node_cap=node_cap).items()}


def solve(state: SolverState, value_fn: ValueFn | None = None, node_cap: int | None = None) -> float:
    """Value of the position for the team of the seat to move (both teams play perfectly).

    Exact with ``node_cap`` None (the default). With a cap, once the search of one root card has visited
    ``node_cap`` nodes, every further trick start it reaches is not searched but estimated -- each team takes
    the card points (R16) and the jack (R15) it holds, clamped to the exact bounds of the position -- and not
    stored in the transposition table. This bounds the rare pathological deals (a few per thousand take
    > 0.3 s exactly) at the price of exactness there; below the cap the result is exact.
    """
    _check_cap(node_cap)
    sign = 1 if (state.to_move & 1) == (state.bidder & 1) else -1
    vals = _root_values(state, value_fn, exact=False, node_cap=node_cap)
    return sign * (max(vals.values()) if sign > 0 else min(vals.values()))
