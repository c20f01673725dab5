"""PIMC search baseline: Perfect-Information Monte Carlo (sampled deals + the exact play solver).

At each decision the agent decodes its observation into its (relative) :class:`PlayerView`, samples full
deals consistent with it (:func:`smear_env.engine.infoset.sample_hidden`), solves every sample with
:mod:`smear_env.agents.solver` and takes the action with the best mean value. Values are the R17 score
difference (own team's score change minus the other team's).

* Card play (R12): every legal card is solved in each of ``samples`` sampled deals (a fixed count by
  default; an optional wall-clock ``budget_ms`` stops earlier, after ``min_samples``); best mean wins.
  No search when the legal cards are all equivalent in every consistent
  deal (:func:`_one_class`). Each solve is capped at ``node_cap`` nodes per root card (see
  :func:`smear_env.agents.solver.solve`: exact below the cap, estimated beyond it).
* Bidding (R6-R8): ``bid_samples`` samples (a fixed count, no time budget: bidding decides most of the
  hand's value), each solved as if it were the bidder: a kitty drawn from the sampled stock (R9), the
  trump and discards the baseline heuristic would choose (R10, R11;
  :func:`~smear_env.agents.heuristic.heuristic_plan`), then one
  solve (cap ``bid_node_cap``) of the whole hand with objective "bidder team's points" -> pB, and pD taken
  as the other points in play. A bid b is worth ``(pB if pB >= b else -b) - pD`` (R17) on average; it bids
  the *highest* legal bid worth more than ``bid_threshold`` (a higher bid also shuts the opponents out of
  the auction), else passes (a stuck dealer, R8 dealer_must_bid, bids its best).
* Trump (R10) and discards (R11) are chosen together when trump is named: candidate (trump, discard
  set) pairs -- the baseline heuristic's plan, and for the strongest suits a "bank card points" and a
  "throw the lowest cards" discard rule -- are scored by ``trump_samples`` sampled solves with the
  contract rule as value (ties: the heuristic's plan); the discard decisions then play the chosen set.

Search as a correction of a default policy. Plain PIMC lost to the baseline heuristic (1,000 duplicate
games: win rate 0.414): double-dummy solves are optimistic (every player is assumed to see all cards:
overbidding, strategy fusion) and know nothing of partnership conventions. So the baseline
:class:`~smear_env.agents.heuristic.HeuristicAgent` (same view, only the agent's own information, R22,
R23) is the *default* and the sampled solves *correct* it when they clearly disagree:

* ``switch_margin`` (card play): the heuristic's card is played unless the searched best card's mean
  solver value beats it by at least this much (and, with ``switch_frac``, strictly beats it in at least that
  fraction of the samples). ``None``: pure PIMC (the best mean); ``inf``: always the heuristic's card.
* ``bid_mode``: ``"pimc"`` the sampled bid below alone; ``"max"`` the higher of it and the heuristic's bid
  (the search may raise the heuristic's bid, or bid where it passes, when the bid is made in at least
  ``bid_conf`` of the samples); ``"min"`` the lower; ``"heuristic"`` the heuristic's bid (no search).
* ``trump_margin``: the heuristic's (trump, discards) plan is kept unless another candidate's mean value
  beats it by this much (``None``: best mean; ``inf``: always the heuristic's plan, no search).

Defaults (tuned on short duplicate runs against the heuristic, not kept in the repository):
``switch_margin=0.5``, ``bid_mode="max"`` with ``bid_conf=0.75``, ``trump_margin=inf`` (a sampled choice of
the plan lost ~0.1 point a hand against the heuristic's own plan, which its bid estimate assumes). Pure PIMC
is ``switch_margin=none,bid_mode=pimc,bid_conf=0,trump_margin=none``.

Speed (``benchmarks/pimc_speed.py``): at the defaults below a decision averages ~20-35 ms on one core
(bids ~50-70 ms, trump ~150-200 ms but at most one per hand, card play ~15-25 ms).

Determinism: all randomness comes from the generator given to :meth:`PimcAgent.start_game`, and by default
(``budget_ms=None``) every search uses exactly its sample count, so the same seed gives the same games on
any machine. ``budget_ms`` (e.g. ``pimc:budget_ms=40``) is an explicit, **non-deterministic** option: card
play then stops sampling once the decision has used that much wall time (after at least ``min_samples``),
so its results depend on machine speed and load. ``budget_ms=40`` averages 5.3 of the 6 card-play samples on
a loaded 2-core machine and nearly all 6 on an idle one: the default, 6 samples always, is that agent
without the timer.
"""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from ..core.actions import (
    DISCARD_ACTION_BASE,
    MAX_BID,
    PASS_ACTION,
    PLAY_ACTION_BASE,
    TRUMP_ACTION_BASE,
    action_bid,
    bid_action,
)
from ..core.cards import RANK_ACE, RANK_JACK, SUIT_MASKS, cards_of
from ..core.config import SmearRules
from ..core.rules import RANK_GAME_VALUE, contract_change, contract_made, points_out_of_play
from ..engine.decoding import decode
from ..engine.game import BIDDING, DISCARD, PLAY, TRUMP
from ..engine.infoset import PlayerView, sample_hidden
from .heuristic import HeuristicAgent, heuristic_plan
from .solver import SolverState, rank_representatives, solve, solve_all_moves

# Defaults (see benchmarks/pimc_speed.py for the per-decision times they give): samples per card-play /
# trump decision, samples per bid decision, node cap per root card of each solve; no wall-time budget
# (budget_ms=None: deterministic; a budget makes results machine-dependent, see the module docstring).
SAMPLES = 6
BID_SAMPLES = 16
NODE_CAP = 1500
BUDGET_MS: float | None = None
MIN_SAMPLES = 3
BID_MARGIN = 0.0
TRUMP_SAMPLES = 8
BID_CONF = 0.75
BID_NODE_CAP = 600
# Search as a correction of the baseline heuristic (its move / bid / plan is the default, see the docstring)
SWITCH_MARGIN: float | None = 0.5
SWITCH_FRAC = 0.0
BID_MODE = "max"
TRUMP_MARGIN: float | None = float("inf")
BID_MODES = ("pimc", "heuristic", "min", "max")
# Upper bounds of the options (a larger value is a ValueError naming the bound, not a search that never
# ends): sample counts, node caps per solve, the wall-time budget, trump candidates (there are four suits).
MAX_SAMPLES = 10_000
MAX_NODE_CAP = 100_000_000
MAX_BUDGET_MS = 3_600_000.0
MAX_TRUMP_CANDIDATES = 4


def _short(value: object) -> str:
    """``repr(value)`` cut short (an option value typed by a user may be thousands of digits)."""
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _one_class(view: PlayerView, cards: list[int]) -> int | None:
    """The single representative when every card in ``cards`` (the legal plays) is equivalent in every deal
    consistent with ``view``, else None. Cards of one suit are equivalent (R12 trick-winning power) when no
    card between them can still be played or is in the current trick, and have the same scoring class
    (card points, R16; the jack R15 apart) -- the solver's own equivalence with every unseen card alive."""
    if len(cards) == 1:
        return cards[0]
    suit = cards[0] >> 3
    if any(c >> 3 != suit for c in cards):
        return None
    gone = view.played_by[0] | view.played_by[1] | view.played_by[2] | view.played_by[3]
    for c in view.trick:
        gone &= ~(1 << c)
    alive = ~gone & 0xFFFFFFFF
    mine = 0
    for c in cards:
        mine |= 1 << (c & 7)
    reps, _ = rank_representatives(alive >> (8 * suit) & 0xFF, mine, 1)
    if reps & (reps - 1):
        return None
    return suit * 8 + reps.bit_length() - 1


def bidder_points(pb: int, pd: int) -> float:
    """Objective for bid estimates: the bidder team's points (its opponents minimise them)."""
    return pb


def first_lead_state(hands: tuple[int, ...], trump: int, contract: int, discards: int, rules: SmearRules
                     ) -> SolverState:
    """The solver state of a hand at its first lead, the bidder (seat 0) to lead with ``hands`` by seat,
    ``trump`` (-1: the first lead names it, R10 with kitty 0), the bidder's ``discards`` (R11, R16)."""
    return SolverState(hands=hands, trump=trump, to_move=0, bidder=0, contract=contract,  # type: ignore[arg-type]
                       discards=discards, rules=rules, first_lead=True)


def bid_sample(view: PlayerView, rules: SmearRules, rng: np.random.Generator, node_cap: int | None,
               heuristic_trump: bool = True) -> tuple[int, int]:
    """One sample of what the seat of ``view`` (bidding) would make as the bidder: ``(pB, pD)``.

    A deal consistent with the view is drawn (:func:`~smear_env.engine.infoset.sample_hidden`), then a kitty
    of ``kitty_size`` cards from its stock (R9); the seat names trump and discards as the baseline heuristic
    would (:func:`~smear_env.agents.heuristic.heuristic_plan`; ``heuristic_trump=False``: the suit of
    greatest :func:`trump_strength` and :func:`greedy_discards`), kitty 0: the first lead names trump (R10).
    One solve of the whole hand (cap ``node_cap``) with objective "bidder team's points" gives pB; pD is
    the other points in play (an approximation), less those no card in play can win. A bid b is then worth
    about ``contract_change(pB, b) - pD`` (R17)."""
    k = view.kitty_size
    deal = sample_hidden(view, rng)
    stock = cards_of(deal.stock)
    kitty = 0
    if k:
        for i in rng.permutation(len(stock))[:k]:
            kitty |= 1 << stock[int(i)]
    hand = view.hand | kitty
    suits = [s for s in range(4) if hand & SUIT_MASKS[s]]
    if k and heuristic_trump:
        trump, disc = heuristic_plan(hand, rules, suits)
    elif k:
        trump = max(suits, key=lambda s: (trump_strength(hand, s), -s))
        disc = greedy_discards(hand, trump, k)
    else:
        trump, disc = -1, 0  # R10, kitty 0: the solver picks the lead that names trump
    hand &= ~disc
    hands = (hand, deal.hands[1], deal.hands[2], deal.hands[3])
    pb = int(solve(first_lead_state(hands, trump, MAX_BID, disc, rules), bidder_points, node_cap=node_cap))
    in_play = hands[0] | hands[1] | hands[2] | hands[3]
    return pb, 4 - pb - points_out_of_play(in_play, trump, rules)


def trump_strength(hand: int, suit: int) -> float:
    """Heuristic strength of ``hand`` with ``suit`` as trump (count and high cards)."""
    t = hand & SUIT_MASKS[suit]
    score = 2.0 * t.bit_count()
    for c in cards_of(t):
        r = c & 7
        score += (3.0, 0.0, 0.0, 0.5, 1.5, 1.0, 1.5, 3.0)[r]  # 7 (Low), T, J (Jack), Q, K, A (High)
    return score


def greedy_discards(hand: int, trump: int, n: int) -> int:
    """``n`` cards to discard from ``hand`` (R11: non-trumps while there are any). Bank card points
    (tens first, then K/Q/J) rather than lose them in play; keep side aces; then the lowest cards."""
    out = 0
    side = cards_of(hand & ~SUIT_MASKS[trump])

    def order(c: int) -> tuple[int, int]:
        r = c & 7
        if r == RANK_ACE:
            return (1, 0)
        return (0, -RANK_GAME_VALUE[r] * 8 + r)

    side.sort(key=order)
    trumps = sorted(cards_of(hand & SUIT_MASKS[trump]), key=lambda c: (c & 7 in (0, RANK_JACK), c & 7))
    for c in (side + trumps)[:n]:
        out |= 1 << c
    return out


def lowest_discards(hand: int, trump: int, n: int) -> int:
    """``n`` cards to discard: the lowest non-trumps (R11), keeping every card that might win a trick."""
    side = sorted(cards_of(hand & ~SUIT_MASKS[trump]), key=lambda c: (c & 7, c))
    trumps = sorted(cards_of(hand & SUIT_MASKS[trump]), key=lambda c: (c & 7 in (0, RANK_JACK), c & 7))
    out = 0
    for c in (side + trumps)[:n]:
        out |= 1 << c
    return out


class PimcAgent:
    """Perfect-Information Monte Carlo agent (see the module docstring)."""

    name = "pimc"

    def __init__(
        self,
        rules: SmearRules | None = None,
        samples: int = SAMPLES,
        budget_ms: float | None = BUDGET_MS,
        min_samples: int = MIN_SAMPLES,
        bid_threshold: float = 0.0,
        trump_candidates: int = 2,
        node_cap: int | None = NODE_CAP,
        bid_samples: int = BID_SAMPLES,
        bid_margin: float = BID_MARGIN,
        trump_samples: int = TRUMP_SAMPLES,
        heuristic_candidate: bool = True,
        bid_high: bool = True,
        bid_conf: float = BID_CONF,
        bid_node_cap: int | None = BID_NODE_CAP,
        switch_margin: float | None = SWITCH_MARGIN,
        switch_frac: float = SWITCH_FRAC,
        bid_mode: str = BID_MODE,
        trump_margin: float | None = TRUMP_MARGIN,
    ) -> None:
        if isinstance(switch_margin, str) and switch_margin.lower() == "none":
            switch_margin = None
        if isinstance(trump_margin, str) and trump_margin.lower() == "none":
            trump_margin = None
        for name, m in (("switch_margin", switch_margin), ("trump_margin", trump_margin)):
            if m is not None and (isinstance(m, (str, bool)) or not m >= 0):
                raise ValueError(f"{name} must be a number >= 0 (inf: never leave the heuristic's choice) or "
                                 f"None (pure PIMC), not {m!r}")
        if isinstance(switch_frac, (str, bool)) or not 0.0 <= switch_frac <= 1.0:
            raise ValueError(f"switch_frac must be a number in [0, 1], not {switch_frac!r}")
        if bid_mode not in BID_MODES:
            raise ValueError(f"bid_mode must be one of {BID_MODES}, not {bid_mode!r}")
        if isinstance(budget_ms, str) and budget_ms.lower() == "none":  # registry spec "budget_ms=none"
            budget_ms = None
        if isinstance(node_cap, str) and node_cap.lower() == "none":
            node_cap = None
        if isinstance(bid_node_cap, str) and bid_node_cap.lower() == "none":
            bid_node_cap = None
        for name, cap in (("node_cap", node_cap), ("bid_node_cap", bid_node_cap)):
            if cap is not None and (isinstance(cap, (str, bool, float)) or not 1 <= cap <= MAX_NODE_CAP):
                raise ValueError(f"{name} must be an integer from 1 to {MAX_NODE_CAP:,} or None (exact "
                                 f"solves), not {_short(cap)}")
        for name, n, least, most in (("samples", samples, 1, MAX_SAMPLES),
                                     ("bid_samples", bid_samples, 1, MAX_SAMPLES),
                                     ("trump_samples", trump_samples, 1, MAX_SAMPLES),
                                     ("min_samples", min_samples, 1, MAX_SAMPLES),
                                     ("trump_candidates", trump_candidates, 0, MAX_TRUMP_CANDIDATES)):
            if isinstance(n, bool) or not isinstance(n, int | np.integer) or not least <= n <= most:
                raise ValueError(f"{name} must be an integer from {least} to {most:,}, not {_short(n)}")
        if budget_ms is not None and (isinstance(budget_ms, str | bool)
                                      or not isinstance(budget_ms, int | float)
                                      or not 0 < budget_ms <= MAX_BUDGET_MS):
            raise ValueError(f"budget_ms must be a number > 0 and <= {MAX_BUDGET_MS:,.0f} (milliseconds; "
                             f"non-deterministic) or None (the default: a fixed sample count), not "
                             f"{_short(budget_ms)}")
        for name, x in (("bid_threshold", bid_threshold), ("bid_margin", bid_margin), ("bid_conf", bid_conf)):
            if isinstance(x, str | bool) or not isinstance(x, int | float) or not np.isfinite(x):
                raise ValueError(f"{name} must be a finite number, not {x!r}")
        if not 0.0 <= bid_conf <= 1.0:
            raise ValueError(f"bid_conf must be a number in [0, 1], not {bid_conf!r}")
        self.rules = rules if rules is not None else SmearRules()
        self.samples = int(samples)
        self.budget_ms = budget_ms
        self.min_samples = min(int(min_samples), self.samples)
        self.bid_threshold = float(bid_threshold)
        self.trump_candidates = int(trump_candidates)
        self.node_cap = node_cap
        self.bid_samples = int(bid_samples)
        self.bid_margin = float(bid_margin)
        self.trump_samples = int(trump_samples)
        self.heuristic_candidate = bool(heuristic_candidate)
        self.bid_high = bool(bid_high)
        self.bid_conf = float(bid_conf)
        self.bid_node_cap = bid_node_cap
        self.switch_margin = None if switch_margin is None else float(switch_margin)
        self.switch_frac = float(switch_frac)
        self.bid_mode = bid_mode
        self.trump_margin = None if trump_margin is None else float(trump_margin)
        self._heur = HeuristicAgent(self.rules)  # the default policy the search corrects
        self._plan = 0
        self.seat = 0
        self._rng = np.random.default_rng(0)
        self.stats: dict[str, list[float]] = {}  # per phase: seconds per decision

    def start_game(self, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        self.seat = seat
        self.rules = rules
        self._rng = rng
        self._heur.start_game(seat, rules, rng)  # the heuristic draws no random numbers

    # ------------------------------------------------------------------ the protocol
    def act(self, observation: dict[str, Any]) -> int:
        mask = np.asarray(observation["action_mask"])
        legal = [int(a) for a in np.flatnonzero(mask)]
        if not legal:
            raise ValueError("PimcAgent.act: the action mask has no legal action (is this agent to act?)")
        if len(legal) == 1:
            return legal[0]
        view = decode(observation["observation"], mask)
        t0 = time.perf_counter()
        phase = view.phase
        if phase == PLAY:
            a = self._play(view, legal)
        elif phase == BIDDING:
            a = self._bid(view, legal)
        elif phase == TRUMP:
            a = self._trump(view, legal)
        elif phase == DISCARD:
            a = self._discard(view, legal)
        else:  # pragma: no cover - nobody acts in HAND_OVER / GAME_OVER
            raise ValueError(f"PimcAgent.act: no decision in phase {phase.name}")
        self.stats.setdefault(phase.name, []).append(time.perf_counter() - t0)
        return a

    def act_view(self, view: PlayerView) -> int:
        """The action for a relative view (``view.relative()`` or a decoded observation)."""
        legal = list(view.legal_actions)
        if len(legal) == 1:
            return legal[0]
        phase = view.phase
        if phase == PLAY:
            return self._play(view, legal)
        if phase == BIDDING:
            return self._bid(view, legal)
        if phase == TRUMP:
            return self._trump(view, legal)
        return self._discard(view, legal)

    # ------------------------------------------------------------------ helpers
    def _sample_loop(self, min_samples: int | None = None, samples: int | None = None):
        """Yield sample indices until the sample count or the time budget is used up."""
        t0 = time.perf_counter()
        budget = None if self.budget_ms is None else self.budget_ms / 1000.0
        least = self.min_samples if min_samples is None else min_samples
        for i in range(self.samples if samples is None else samples):
            if budget is not None and i >= least and time.perf_counter() - t0 > budget:
                return
            yield i

    # ------------------------------------------------------------------ card play (R12)
    def _play(self, view: PlayerView, legal: list[int]) -> int:
        assert view.bidder is not None and view.contract is not None
        cards = [a - PLAY_ACTION_BASE for a in legal]
        default = None
        if self.switch_margin is not None:
            default = self._heur.act_view(view) - PLAY_ACTION_BASE
        only = _one_class(view, cards)
        if only is not None:  # every legal card is equivalent in every deal: no search
            return PLAY_ACTION_BASE + (only if default is None else default)
        totals = dict.fromkeys(cards, 0.0)
        better = dict.fromkeys(cards, 0)  # samples in which a card beats the default strictly
        n = 0
        first = not any(view.played_by)
        for _ in self._sample_loop():
            deal = sample_hidden(view, self._rng)
            state = SolverState(
                hands=deal.hands,
                trump=view.trump if view.trump is not None else -1,
                to_move=0,
                bidder=view.bidder,
                contract=view.contract,
                trick=view.trick,
                played_by=view.played_by,
                won=view.won_by_team,
                discards=deal.discards,
                rules=self.rules,
                first_lead=first,
            )
            vals = solve_all_moves(state, node_cap=self.node_cap)
            for c, v in vals.items():
                totals[c] += v
            if default is not None:
                for c, v in vals.items():
                    better[c] += v > vals[default]
            n += 1
        best = max(sorted(totals), key=lambda c: totals[c])  # ties: lowest card id
        if default is not None:
            # search as a correction: leave the heuristic's card only for a clearly better one
            adv = (totals[best] - totals[default]) / max(n, 1)
            if not (adv >= self.switch_margin and better[best] >= self.switch_frac * n):
                return PLAY_ACTION_BASE + default
        return PLAY_ACTION_BASE + best

    # ------------------------------------------------------------------ bidding (R6-R8)
    def _bid(self, view: PlayerView, legal: list[int]) -> int:
        if self.bid_mode == "heuristic":
            return self._heur.act_view(view)
        a = self._pimc_bid(view, legal)
        if self.bid_mode == "pimc":
            return a
        h = self._heur.act_view(view)
        # action ids: 0 pass < bid 2 < bid 3 < bid 4, so min/max order the bids (R6: any of them is legal)
        return max(a, h) if self.bid_mode == "max" else min(a, h)

    def _pimc_bid(self, view: PlayerView, legal: list[int]) -> int:
        bids = [action_bid(a) for a in legal if a != PASS_ACTION]
        worth = dict.fromkeys(bids, 0.0)
        made = dict.fromkeys(bids, 0)
        n = 0
        for _ in self._sample_loop(min_samples=self.bid_samples, samples=self.bid_samples):
            pb, pd = bid_sample(view, self.rules, self._rng, self.bid_node_cap, self.heuristic_candidate)
            for b in bids:
                # R17, made only with a safety margin
                worth[b] += contract_change(pb, b, self.rules, made=pb >= b + self.bid_margin) - pd
                made[b] += contract_made(pb, b, self.rules)
            n += 1
        if self.bid_high:
            # the highest bid still worth more than the threshold: a higher bid also shuts opponents out of
            # the auction (R6, R7), which the per-sample value of one contract does not see
            ok = [b for b in bids if worth[b] / max(n, 1) > self.bid_threshold
                  and made[b] >= self.bid_conf * max(n, 1)]
            best = max(ok) if ok else max(sorted(bids, reverse=True), key=lambda b: worth[b]) if bids else 0
        else:
            best = max(sorted(bids, reverse=True), key=lambda b: worth[b]) if bids else 0
        if PASS_ACTION in legal and (not bids or worth[best] / max(n, 1) <= self.bid_threshold):
            return PASS_ACTION
        return bid_action(best)

    # ------------------------------------------------------------------ trump and discards (R10, R11)
    def _trump(self, view: PlayerView, legal: list[int]) -> int:
        """Trump and the discard plan are chosen together: candidates are (trump, discard set) pairs for
        the ``trump_candidates`` strongest suits, each with two discard rules (bank card points / throw
        the lowest cards); the discards that follow play the chosen plan (R11)."""
        assert view.contract is not None
        k = view.kitty_size
        hand = view.hand
        suits = sorted((a - TRUMP_ACTION_BASE for a in legal), key=lambda s: (-trump_strength(hand, s), s))
        cands: list[tuple[int, int]] = []
        if self.heuristic_candidate:
            cands.append(heuristic_plan(hand, self.rules, suits))
        for s in suits[: max(1, self.trump_candidates)]:
            for disc in (greedy_discards(hand, s, k), lowest_discards(hand, s, k)):
                if (s, disc) not in cands:
                    cands.append((s, disc))
        totals = dict.fromkeys(cands, 0.0)
        keep = self.trump_margin == float("inf") and self.heuristic_candidate  # nothing can replace it
        if len(cands) > 1 and not keep:
            for _ in self._sample_loop(min_samples=self.trump_samples, samples=self.trump_samples):
                deal = sample_hidden(view, self._rng)
                for s, disc in cands:
                    hands = (hand & ~disc, deal.hands[1], deal.hands[2], deal.hands[3])
                    totals[(s, disc)] += solve(first_lead_state(hands, s, view.contract, disc, self.rules),
                                               node_cap=self.bid_node_cap)
        best = max(cands, key=lambda sd: totals[sd])  # ties: the first (strongest suit, banking rule)
        if self.trump_margin is not None and self.heuristic_candidate and len(cands) > 1:
            if totals[best] - totals[cands[0]] < self.trump_margin * self.trump_samples:
                best = cands[0]  # keep the heuristic's plan unless another is clearly better
        self._plan = best[1]
        return TRUMP_ACTION_BASE + best[0]

    def _discard(self, view: PlayerView, legal: list[int]) -> int:
        assert view.trump is not None
        left = view.kitty_size - view.discards.bit_count()
        plan = self._plan & view.hand
        if not plan:
            plan = greedy_discards(view.hand, view.trump, left)
        for c in cards_of(plan):
            if DISCARD_ACTION_BASE + c in legal:
                return DISCARD_ACTION_BASE + c
        return legal[0]  # pragma: no cover - the plan always holds a legal discard
