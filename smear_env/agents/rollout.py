"""Rollout search: a policy improved at chosen decisions by Monte-Carlo rollouts of the rest of the hand.

At a decision of one of its ``phases`` (by default the bids) with more than one legal action, the agent
samples ``samples`` full deals consistent with what it has seen
(:func:`smear_env.engine.infoset.sample_hidden`: uniform over the consistent deals, no inference from the
bids), and in each deal plays every legal action followed by the rest of the hand on the batched engine: its
own team's seats by the ``base`` policy, the other team's by ``opponent`` (the base policy when not given). An
action's value is its mean hand score difference (R17: own team's change minus the other team's) -- or, with a
``winprob`` model, the team's mean chance of winning the game after the hand
(:mod:`smear_env.agents.winprob`); the agent takes the best one, or the
base policy's own action when that is within ``margin`` of the best. Every action is played in the same
sampled deals, kitty included (common random numbers), so the comparison sees the action, not the deal.
Decisions of the other phases are the base policy's.

This is one step of policy improvement (Tesauro & Galperin's rollouts; the improvement operator of expert
iteration): it estimates the value of each action under the base policies, so it is at least as good as
the base policy against the modelled opponents up to sampling noise, and it plays many rollouts per
decision: it is a search agent for evaluation and for making training targets, not a fast player.

Spec: ``rollout:base=default,opponent=heuristic,samples=32,phases=bid,margin=0`` (``phases``: ``+``-joined
of ``bid``, ``trump``, ``discard``, ``play``; also ``winprob=FILE``), an agent spec of
:func:`smear_env.agents.registry.make_agent`.
All randomness comes from the generator of each slot's ``start_game``, so the same seed gives the same
games.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np

from ..core.actions import NUM_ACTIONS
from ..core.config import SmearRules
from ..engine.decoding import decode_batch
from ..engine.game import BIDDING, DISCARD, PLAY, TRUMP
from ..engine.infoset import HiddenDeal, sample_hidden_many
from ..engine.observation import PHASE
from ..engine.vector import VectorGame
from .slots import SlotTable, check_batch, check_start

__all__ = ["PHASES", "ROLLOUT_OPTIONS", "ROLLOUT_PREFIX", "RolloutAgent", "play_out", "rollout_values",
           "team_actions", "true_deal", "values_in_deals"]

PHASES = {"bid": int(BIDDING), "trump": int(TRUMP), "discard": int(DISCARD), "play": int(PLAY)}
"""Phase names of the ``phases`` option and their engine codes."""
MAX_LANES = 8192
"""Rollout lanes played at once (memory: ~2 KB of observation a lane and step)."""
_MAX_STEPS = 64  # a hand has at most 4 bids + trump + 3 discards + 24 plays
_COMPACT_MIN = 256  # play_out moves the hands still going to a smaller engine only above this many lanes


def team_actions(team: Any, opponent: Any, obs: np.ndarray, mask: np.ndarray, seats: np.ndarray
                 ) -> np.ndarray:
    """The action of each row of a table where ``team`` holds seats 0 and 2 and ``opponent`` seats 1 and 3:
    row ``i`` is seat ``seats[i]``'s observation and legal mask, and is asked of its team's batched agent
    with the seat as its slot (each agent is asked once, for its rows in order; not at all without any).

    A row with one legal action (a forced card: following suit, the last trick) is not asked of an agent
    that does not draw (``draws`` False: a greedy checkpoint, the heuristic): such an agent can only answer
    that action, so skipping it changes nothing but the time (about 40% of a rollout's decisions are
    forced). An agent that draws, or does not say, is asked every row, so its generator's draws are as if
    nothing were skipped."""
    seats = np.asarray(seats)
    own = (seats & 1) == 0
    actions = np.argmax(mask, axis=1).astype(np.int64)  # a forced row's only legal action
    forced = None
    for agent, rows in ((team, own), (opponent, ~own)):
        if not getattr(agent, "draws", True):
            if forced is None:
                forced = np.count_nonzero(mask, axis=1) == 1
            rows = rows & ~forced
        if rows.any():
            actions[rows] = agent.act_batch(obs[rows], mask[rows], seats[rows])
    return actions


def rollout_values(vg_rules: SmearRules, views: Sequence[Any], masks: np.ndarray, team: Any, opponent: Any,
                   samples: int, rngs: Sequence[np.random.Generator],
                   stats: dict[str, int] | None = None,
                   deals: Sequence[Sequence[Any]] | None = None, value: Any = None) -> np.ndarray:
    """(n, 72) mean hand score difference (observer's team minus the other) of each legal action of the
    ``n`` relative ``views`` (legal actions: the rows of ``masks``), over ``samples`` deals per view drawn
    from ``rngs[i]``; the rest of each hand played by ``team`` (seats 0 and 2) and ``opponent`` (1, 3),
    batched agents whose slots 0-3 have started. Illegal actions are ``-inf``. ``stats``: a dict whose
    ``"rollout_decisions"`` entry is increased by the decisions played in the rollouts (all seats).
    ``deals``: per view its ``samples`` hidden deals; by default
    :func:`~smear_env.engine.infoset.sample_hidden_many` draws them uniformly."""
    n = len(views)
    objective = value
    out = np.full((n, NUM_ACTIONS), -np.inf)
    legal = [np.flatnonzero(masks[i]) for i in range(n)]
    # worlds: one lane per (view, sample); rollout lanes: one per (world, legal action)
    w_view = np.repeat(np.arange(n), samples)
    if deals is None:
        flat = [d for i in range(n) for d in sample_hidden_many(views[i], rngs[i], samples)]
    else:
        if len(deals) != n or any(len(d) != samples for d in deals):
            raise ValueError(f"rollout_values: deals must hold {samples} deals for each of the {n} views")
        flat = [d for per_view in deals for d in per_view]
    worlds = VectorGame(int(w_view.size), vg_rules)
    for i in range(n):  # the stock order (which cards are the kitty) from each view's own generator
        lanes = np.arange(i * samples, (i + 1) * samples)
        worlds.load_worlds(lanes, [views[i]] * samples, flat[i * samples:(i + 1) * samples], rngs[i])
    r_world = np.concatenate([np.repeat(np.arange(i * samples, (i + 1) * samples), legal[i].size)
                              for i in range(n)])
    r_action = np.concatenate([np.tile(legal[i], samples) for i in range(n)])
    value = np.zeros(r_world.size)
    for start in range(0, r_world.size, MAX_LANES):
        sl = slice(start, start + MAX_LANES)
        value[sl], steps = play_out(worlds, r_world[sl], r_action[sl], team, opponent, value=objective)
        if stats is not None:
            stats["rollout_decisions"] = stats.get("rollout_decisions", 0) + steps
    r_view = w_view[r_world]
    sums = np.zeros((n, NUM_ACTIONS))
    np.add.at(sums, (r_view, r_action), value)
    for i in range(n):
        out[i, legal[i]] = sums[i, legal[i]] / samples
    return out


def play_out(worlds: VectorGame, world_lanes: np.ndarray, first: np.ndarray, team: Any,
             opponent: Any, value: Any = None) -> tuple[np.ndarray, int]:
    """Hand score difference for seat 0's team of each lane: world ``world_lanes[j]`` of ``worlds``, action
    ``first[j]`` by seat 0, then ``team`` (seats 0 and 2) and ``opponent`` (1 and 3) to the end of the hand
    (a thrown-in hand is worth 0); and the number of decisions played. The players are batched agents
    whose slots 0-3 have started (:func:`rollout_players`). ``value``: another objective, a function of
    the engine after the step that ended the hands, that step's result and the lanes that ended, giving
    each of those lanes' value (e.g. :class:`~smear_env.agents.winprob.WinProbability`)."""
    objective = value
    m = world_lanes.size
    vg = VectorGame(m, worlds.rules)
    vg.copy_lanes(np.arange(m), worlds, world_lanes)
    value = np.zeros(m)
    ids = np.arange(m)  # the lane of the result each of vg's lanes plays
    live = np.arange(m)
    actions = first
    steps = 0
    for _ in range(_MAX_STEPS):
        steps += live.size
        res = vg.step(actions, lanes=live)
        ended = (res.hand_over | res.thrown_in)[live]
        fin = live[ended]
        value[ids[fin]] = res.reward_score[fin, 0] if objective is None else objective(vg, res, fin)
        live = live[~ended]
        if not live.size:
            return value, steps
        if live.size <= vg.num_games // 2 and vg.num_games > _COMPACT_MIN:
            # most hands are over (the searched positions are at different points of their hands): the
            # hands still going move to a smaller engine, so the steps below observe only them
            small = VectorGame(int(live.size), vg.rules)
            small.copy_lanes(np.arange(live.size), vg, live)
            vg, ids, live = small, ids[live], np.arange(live.size)
        obs, mask = vg.observe(), vg.legal_mask()
        seats = vg.to_act.copy()  # the players get their own array, as a row subset would be
        if live.size < vg.num_games:
            obs, mask, seats = obs[live], mask[live], seats[live]
        actions = team_actions(team, opponent, obs, mask, seats)
    raise RuntimeError(f"rollout: a hand did not end within {_MAX_STEPS} decisions")


def values_in_deals(rules: SmearRules, views: Sequence[Any], masks: np.ndarray, deals: Sequence[Any],
                    team: Any, opponent: Any, rng: np.random.Generator, value: Any = None) -> np.ndarray:
    """(n, 72): each legal action of each relative view played once in ``deals[i]`` (e.g. the true deal)
    and the hand played out by ``team`` and ``opponent`` as in :func:`play_out`; ``nan`` where illegal.
    With players that do not draw this is the action's exact value in that deal (``rng`` draws only what
    :meth:`~smear_env.engine.vector.VectorGame.load_worlds` draws: which of another bidder's cards were the
    kitty). The benchmarks check the search against it."""
    n = len(views)
    world = VectorGame(n, rules)
    world.load_worlds(np.arange(n), views, deals, rng)
    legal = [np.flatnonzero(masks[i]) for i in range(n)]
    lanes = np.concatenate([np.full(a.size, i) for i, a in enumerate(legal)])
    acts = np.concatenate(legal)
    got, _ = play_out(world, lanes, acts, team, opponent, value=value)
    out = np.full(masks.shape, np.nan)
    out[lanes, acts] = got
    return out


def true_deal(vg: VectorGame, lane: int, seat: int | None = None) -> HiddenDeal:
    """The real hidden cards of ``lane`` of ``vg`` as a :class:`~smear_env.engine.infoset.HiddenDeal` relative
    to ``seat`` (default the seat to act): every seat's hand, the discards and the stock (while bidding the 8
    stock cards, afterwards the ones the bidder did not take). What a sampled deal would be if it guessed
    right: :func:`values_in_deals` on it gives each action's exact value in the game being played."""
    s = int(vg.to_act[lane]) if seat is None else int(seat)
    ids = vg.stock[lane].tolist()
    stock = ids if int(vg.phase[lane]) == BIDDING else ids[vg.rules.kitty_size:]
    return HiddenDeal(hands=tuple(int(vg.hands[lane, (s + r) & 3]) for r in range(4)),
                      discards=int(vg.discards[lane]), stock=sum(1 << c for c in stock))


class RolloutAgent:
    """``base`` improved by rollouts at the decisions of ``phases`` (see the module docstring)."""

    vectorised = True
    draws = True

    def __init__(self, base: Any, rules: SmearRules | None = None, team: Any = None, opponent: Any = None,
                 samples: int = 32, phases: Sequence[str] = ("bid",), margin: float = 0.0,
                 name: str = "rollout", objective: Any = None) -> None:
        """``objective``: what an action is worth at the end of the hand, as :func:`play_out`'s ``value``
        (e.g. a :class:`~smear_env.agents.winprob.WinProbability`: the chance of winning the game); by
        default the hand's score difference. ``margin`` is in its units.

        ``team`` and ``opponent``: the rollouts' players (batched agents whose slots 0-3 have started, as
        :func:`rollout_players` makes them; own instances, since their slots are the rollout seats, not the
        table's); ``team`` defaults to ``base`` and ``opponent`` to ``team``."""
        if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
            raise ValueError(f"rollout: samples must be an integer >= 1, not {samples!r}")
        bad = [p for p in phases if p not in PHASES]
        if bad or not phases:
            raise ValueError(f"rollout: phases {list(phases)!r}: each must be one of {sorted(PHASES)}")
        if not margin >= 0:
            raise ValueError(f"rollout: margin must be >= 0, not {margin!r}")
        self.objective = objective
        self.name = name
        self.rules = rules if rules is not None else SmearRules()
        self.base = base
        self.samples = samples
        self.phases = tuple(phases)
        self.margin = float(margin)
        self._codes = np.array([PHASES[p] for p in self.phases])
        self.team = team if team is not None else base
        self.opponent = opponent if opponent is not None else self.team
        self._rngs = SlotTable(name)
        self.searched = 0
        """Decisions decided by rollouts so far."""
        self.changed = 0
        """Of those, decisions where the search chose another action than the base policy."""
        self.recorded: list[dict[str, np.ndarray]] | None = None
        """Set to a list to record every call (targets for distillation, expert iteration): a dict of the
        rows' ``obs``, ``mask``, the ``action`` taken, whether it was ``searched`` and the search's
        ``q`` values (``-inf`` where illegal or not searched)."""

    def start_game(self, slot: int, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        check_start(self.name, seat, rules, rng)
        if rules != self.rules:
            raise ValueError(f"agent {self.name!r} was built for other rules than this game's")
        self.base.start_game(slot, seat, rules, rng)
        self._rngs.set(slot, rng)

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, slots: np.ndarray) -> np.ndarray:
        obs, mask, slots = check_batch(self.name, obs, mask, slots)
        if slots.size == 0:
            return np.zeros(0, dtype=np.int64)
        actions = np.asarray(self.base.act_batch(obs, mask, slots), dtype=np.int64)
        phase = np.argmax(obs[:, PHASE:PHASE + 5], axis=1)
        rows = np.flatnonzero(np.isin(phase, self._codes) & (mask.sum(axis=1) > 1))
        q = np.full((0, NUM_ACTIONS), -np.inf)
        if rows.size:
            views = decode_batch(obs[rows], mask[rows])
            rngs = [self._rngs.get(int(s)) for s in slots[rows]]
            q = rollout_values(self.rules, views, mask[rows], self.team, self.opponent, self.samples, rngs,
                               value=self.objective)
            best = np.argmax(q, axis=1)
            base_q = q[np.arange(rows.size), actions[rows]]
            take = q[np.arange(rows.size), best] > base_q + self.margin
            actions[rows[take]] = best[take]
            self.searched += int(rows.size)
            self.changed += int(take.sum())
        if self.recorded is not None:
            searched = np.zeros(slots.size, dtype=bool)
            searched[rows] = True
            q_all = np.full((slots.size, NUM_ACTIONS), -np.inf, dtype=np.float32)
            q_all[rows] = q
            self.recorded.append({"obs": obs.copy(), "mask": mask.copy(), "action": actions.copy(),
                                  "searched": searched, "q": q_all})
        return actions

    def close(self) -> None:
        for a in {id(a): a for a in (self.base, self.team, self.opponent)}.values():
            a.close()


ROLLOUT_PREFIX = "rollout:"
ROLLOUT_OPTIONS = {"base": "an agent spec", "opponent": "an agent spec", "samples": "an integer >= 1",
                   "phases": "'+'-joined phases", "margin": "a number >= 0",
                   "winprob": "a win-probability model file (the winprob stage): the search's objective"}
"""The options of a ``rollout:`` spec (:func:`smear_env.agents.registry.rollout_from_spec`)."""
