"""The table layer: the one game loop between the engine (:mod:`smear_env.engine.game`) and every front end.

Every consumer plays its games through one of two tables that share the meanings below. On the reference
engine: :class:`Table` (one game) or :class:`Lockstep` (many tables stepped together, decisions of batched
players gathered into one array per player) -- the PettingZoo env, the single-seat Gymnasium env, the
``ppo`` collector, ``smear-eval --engine reference`` and agents that cannot be batched. On the batched
engine: :class:`smear_env.tables.batched_table.BatchedTable` -- the vector envs, the ``vector_ppo`` and
``dmc`` collectors, the batched imitation collector and the batched duplicate evaluation. Nothing else decides
when a hand or a game ends, what it earns, or what starts next.

Options (:class:`TableOptions`; front ends parse them with :func:`parse_options`)
    ``episode``
        ``"game"`` (default): an episode is a whole game to ``target_score``; hands are dealt
        automatically. ``"hand"``: an episode is one *scored* hand (a thrown-in hand, R8, is redealt within
        the episode), and **the game carries on across episodes**: the next episode
        (:meth:`Table.next_episode`, an env's ``reset()`` without a seed) deals the next hand of the same
        game, scores kept, until the game is over or truncated; only then does a new game start. So a
        learner with hand episodes sees every score situation. (A fresh game is forced by a seed or
        ``options={"new_game": True}`` in an env's ``reset``.)
    ``reward``
        ``"score"``: after each scored hand, own team's score change minus the other team's, in **raw
        points** (R17, R20; one hand moves it by at most 8). ``"win"``: at the end of an episode +1 to each
        player of the winning team and -1 to the other (R18, R19); a hand episode that does not end the
        game is won by the team with the larger score change in it (0 to both when equal); a truncated
        episode (R21) gives 0. Partners always get the same reward and the two teams' rewards sum to
        zero. A trainer that wants another scale multiplies in its own documented config field (e.g.
        ``env.score_scale`` of ``training``); the batched engine (``smear_env.engine.vector``) uses this
        scale.
    ``max_cycles``
        R21: a game is truncated after this many decisions (all seats, thrown-in hands included);
        ``None``: no limit.
    ``max_hands``
        R21 for evaluation: a game is truncated when it would deal its ``max_hands``-th hand (thrown-in
        hands count); ``None``: no limit.
    ``score_scale``, ``win_bonus``
        A trainer's shaping, applied here so that it is written once (:func:`shaped_team_rewards`):
        ``"score"`` rewards are multiplied by ``score_scale`` (default 1: raw points), and with
        ``episode="game"`` the end of a game adds ``+win_bonus`` / ``-win_bonus`` to the winners / losers
        (default 0). ``"win"`` rewards are never scaled.

The single table (:class:`Table`) and the batched table (:class:`smear_env.tables.batched_table.BatchedTable`,
N games on the batched engine) share these meanings through :func:`shaped_team_rewards` (what a hand
earns), :func:`hands_exhausted` and :func:`cycles_exhausted` (R21).

Flow of one :meth:`Table.apply`: the engine applies the action; at a hand's end :func:`end_of_hand`
turns the engine's result into a :class:`HandEnd` and the table's :class:`Step` (per-seat rewards,
``terminated`` / ``truncated``, and ``next``: what starts next -- another decision, the next hand in a
new episode, or a new game). Hands inside an episode are dealt at once, from the game's generator or
from a deal source (``deals.first_dealer`` and ``deals.deal(i)``, e.g. a duplicate pair's
:class:`~smear_env.evaluation.duplicate.DealSequence`).

Rule options for every front end come from :class:`~smear_env.core.config.SmearRules` alone:
:func:`parse_options` (env keyword arguments), :func:`add_rule_arguments` / :func:`rules_from_args`
(command lines), ``SmearRules.from_dict`` (configs).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from ..core.config import RuleOptionError, SmearRules
from ..engine.game import GAME_OVER, HAND_OVER, NUM_PLAYERS, Game, GameStateError, IllegalActionError
from ..engine.infoset import view_of
from ..engine.observation import action_mask, encode_game, observe
from .arguments import add_rule_arguments, check_run_arguments, rules_from_args  # noqa: F401 (re-exported)

EPISODE_VALUES = ("game", "hand")
REWARD_VALUES = ("win", "score")
DEFAULT_MAX_CYCLES = 10_000
NEXT_DECISION, NEXT_HAND, NEXT_GAME = "decision", "hand", "game"

Rewards = tuple[float, float, float, float]
_ZERO: Rewards = (0.0, 0.0, 0.0, 0.0)


# ---------------------------------------------------------------------------- options
@dataclass(frozen=True)
class TableOptions:
    """Episode and reward options of a table (see the module docstring)."""

    episode: str = "game"
    reward: str = "win"
    max_cycles: int | None = DEFAULT_MAX_CYCLES
    max_hands: int | None = None
    score_scale: float = 1.0
    win_bonus: float = 0.0

    def __post_init__(self) -> None:
        for name, low in (("score_scale", "a number > 0"), ("win_bonus", "a number >= 0")):
            v = getattr(self, name)
            if (isinstance(v, bool) or not isinstance(v, int | float | np.integer | np.floating)
                    or not np.isfinite(v) or (v <= 0 if name == "score_scale" else v < 0)):
                raise RuleOptionError(f"option {name}={v!r} is not allowed; allowed values: {low}")
        if self.episode not in EPISODE_VALUES or not isinstance(self.episode, str):
            raise RuleOptionError(
                f"option episode={self.episode!r} is not allowed; allowed values: 'game', 'hand'"
            )
        if self.reward not in REWARD_VALUES or not isinstance(self.reward, str):
            raise RuleOptionError(
                f"option reward={self.reward!r} is not allowed; allowed values: 'win', 'score'"
            )
        for name in ("max_cycles", "max_hands"):
            v = getattr(self, name)
            if v is not None and (isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 1):
                raise RuleOptionError(
                    f"option {name}={v!r} is not allowed; allowed values: an integer >= 1"
                    + (" or None" if name == "max_hands" else "")
                )


TABLE_OPTIONS = ("episode", "reward", "max_cycles", "score_scale", "win_bonus")


def parse_options(
    kwargs: Mapping[str, Any], extra: Mapping[str, Any] | None = None, name: str = "smear_v0"
) -> tuple[SmearRules, TableOptions, dict[str, Any]]:
    """Split front-end keyword arguments into ``(rules, table options, extra options)``.

    Accepted keys: every :class:`SmearRules` option or ``rules=SmearRules(...)`` (not both), the table
    options ``episode``, ``reward``, ``max_cycles``, ``score_scale``, ``win_bonus``, and the front
    end's own ``extra`` keys (given with
    their defaults). An unknown key is an error naming it and the valid ones."""
    extra = dict(extra or {})
    rule_names = SmearRules.option_names()
    valid = ("rules", *TABLE_OPTIONS, *extra, *rule_names)
    rule_opts: dict[str, Any] = {}
    table_opts: dict[str, Any] = {}
    rules = None
    for key, value in kwargs.items():
        if key in rule_names:
            rule_opts[key] = value
        elif key in TABLE_OPTIONS:
            table_opts[key] = value
        elif key in extra:
            extra[key] = value
        elif key == "rules":
            rules = value
        else:
            raise RuleOptionError(f"unknown {name} option {key!r}; valid options: {', '.join(valid)}")
    if rules is not None:
        if not isinstance(rules, SmearRules):
            raise RuleOptionError(f"option rules={rules!r} must be a SmearRules instance")
        if rule_opts:
            raise RuleOptionError(
                f"give either rules=SmearRules(...) or rule options ({', '.join(rule_opts)}), not both"
            )
    else:
        rules = SmearRules.from_dict(rule_opts)
    mc = table_opts.get("max_cycles", DEFAULT_MAX_CYCLES)
    if mc is None:
        raise RuleOptionError("option max_cycles=None is not allowed; allowed values: an integer >= 1")
    table_opts["max_cycles"] = mc
    return rules, TableOptions(**table_opts), extra


# ---------------------------------------------------------------------------- end of a hand
@dataclass(frozen=True)
class HandEnd:
    """A hand that just ended (scored, or thrown in under R8) and what it did to the game."""

    hand_number: int
    """0-based index of the hand in the game (thrown-in hands count)."""
    thrown_in: bool
    result: dict[str, Any] | None
    """The engine's ``hand_result`` (points, card points, made_contract, score_change, scores); None when
    thrown in."""
    bidder: int | None
    contract: int | None
    score_change: tuple[int, int]
    """Per engine team (team 0 = seats 0/2); (0, 0) when thrown in."""
    scores: tuple[int, int]
    game_over: bool
    winner: int | None

    @property
    def scored(self) -> bool:
        return not self.thrown_in

    def margin(self, team: int) -> int:
        """``team``'s score change minus the other team's: the raw ``score`` reward."""
        return self.score_change[team] - self.score_change[1 - team]


def end_of_hand(game: Game) -> HandEnd:
    """The :class:`HandEnd` of ``game`` in ``HAND_OVER`` or ``GAME_OVER`` (right after the hand ended)."""
    if game.phase < HAND_OVER:
        raise ValueError("end_of_hand() needs a game whose hand has ended (HAND_OVER or GAME_OVER)")
    res = None if game.hand_thrown_in else game.hand_result
    change = (0, 0) if res is None else (int(res["score_change"][0]), int(res["score_change"][1]))
    return HandEnd(
        hand_number=game.hand_number, thrown_in=game.hand_thrown_in, result=res, bidder=game.bidder,
        contract=game.contract, score_change=change, scores=(game.scores[0], game.scores[1]),
        game_over=game.phase == GAME_OVER, winner=game.winner,
    )


def shaped_team_rewards(margin: Any, thrown_in: Any, winner: Any, episode_over: Any,
                        options: TableOptions) -> Any:
    """Team 0's reward (team 1 gets its negative) for hands that just ended: THE place where a hand's
    score becomes a reward (the module docstring's scale and shaping), for one hand or arrays of them.

    ``margin``: team 0's score change minus team 1's in the hand; ``thrown_in``: the hand was thrown in
    (R8: reward 0); ``winner``: the team that won the game with this hand, -1 if none; ``episode_over``:
    the hand ends the episode (the game is over, or ``episode="hand"``). A truncated episode's rewards
    are not computed here (it gives 0 under ``"win"``). Returns a float for scalars, else a float array.
    """
    margin = np.asarray(margin, dtype=np.float64)
    winner = np.asarray(winner)
    if options.reward == "score":
        r = margin if options.score_scale == 1 else margin * options.score_scale
        if options.win_bonus and options.episode == "game":
            r = r + np.where(winner >= 0, np.where(winner == 0, options.win_bonus, -options.win_bonus), 0.0)
    else:  # "win": +-1 to the game's winner, or (a hand episode) the sign of the hand's margin
        r = np.where(episode_over, np.where(winner >= 0, np.where(winner == 0, 1.0, -1.0), np.sign(margin)),
                     0.0)
    r = np.where(thrown_in, 0.0, r)
    return float(r) if r.ndim == 0 else r


def team_rewards(hand: HandEnd, reward: str | TableOptions, episode_over: bool) -> tuple[float, float]:
    """(team 0, team 1) rewards for a hand that just ended: :func:`shaped_team_rewards` of one
    :class:`HandEnd` (``reward``: the table's options, or a reward mode name for the raw scale)."""
    options = reward if isinstance(reward, TableOptions) else TableOptions(reward=reward)
    d = shaped_team_rewards(hand.margin(0), hand.thrown_in, -1 if hand.winner is None else hand.winner,
                            episode_over, options)
    if hand.thrown_in or not (episode_over or options.reward == "score"):
        return (0.0, 0.0)  # no reward (+0.0 to both, as the trainers' digests have it)
    return (d, -d)


def hands_exhausted(hands_dealt: Any, max_hands: int | None) -> Any:
    """R21 ``max_hands``: whether a game that has dealt ``hands_dealt`` hands (thrown-in ones included)
    is cut off instead of dealing another (scalars or arrays)."""
    return (hands_dealt >= max_hands) if max_hands is not None else (np.asarray(hands_dealt) < 0)


def cycles_exhausted(steps: Any, max_cycles: int | None) -> Any:
    """R21 ``max_cycles``: whether a game of ``steps`` decisions (all seats) is cut off (scalars or
    arrays)."""
    return (steps >= max_cycles) if max_cycles is not None else (np.asarray(steps) < 0)


def seat_rewards(team: tuple[float, float]) -> Rewards:
    return (team[0], team[1], team[0], team[1])


@dataclass(frozen=True)
class Step:
    """What one :meth:`Table.apply` did."""

    rewards: Rewards
    """Per seat, in the table's reward mode (partners equal, teams opposite)."""
    hand: HandEnd | None
    """Set when the action ended a hand (scored or thrown in)."""
    terminated: bool
    """The episode ended naturally (the game is over, or a scored hand with ``episode="hand"``)."""
    truncated: bool
    """The game was cut off (R21: ``max_cycles`` decisions or ``max_hands`` deals)."""
    next: str
    """What starts next: ``"decision"`` (the episode goes on), ``"hand"`` (the next episode is the next
    hand of this game: :meth:`Table.next_episode`) or ``"game"`` (a new game is needed)."""

    @property
    def done(self) -> bool:
        return self.terminated or self.truncated


_DECISION = Step(_ZERO, None, False, False, NEXT_DECISION)


class DealSource(Protocol):
    """Fixed deals for a game (e.g. a duplicate pair's): hand ``i`` is ``deal(i) = (hands, stock)``."""

    first_dealer: int

    def deal(self, i: int) -> tuple[list[list[int]], list[int]]: ...


# ---------------------------------------------------------------------------- one table
class Table:
    """One game and the loop around it: apply decisions, end hands, hand out rewards, start what is next.

    ``Table(rules, TableOptions(...))``; :meth:`new_game` (from a generator or a :class:`DealSource`),
    then :meth:`apply` per decision (or :func:`play` / :class:`Lockstep` with agents)."""

    def __init__(self, rules: SmearRules | None = None, options: TableOptions | None = None) -> None:
        self.rules = rules if rules is not None else SmearRules()
        self.options = options if options is not None else TableOptions()
        self.game: Game | None = None
        self.deals: DealSource | None = None
        self.steps = 0
        """Decisions taken in the current game (R21 ``max_cycles``)."""
        self.episode_steps = 0
        """Decisions taken in the current episode."""
        self.terminated = False
        self.truncated = False
        self.next = NEXT_GAME

    # ------------------------------------------------------------------ starting
    def new_game(self, rng: int | np.random.Generator | None = None, *, deals: DealSource | None = None,
                 dealer: int | None = None) -> Game:
        """Start a new game (and episode): dealt from ``rng`` (the game owns it), or from ``deals``."""
        if deals is not None:
            hands, stock = deals.deal(0)
            self.game = Game.from_deal(hands, stock, deals.first_dealer, self.rules)
        else:
            self.game = Game(self.rules, seed=rng, dealer=dealer)
        self.deals = deals
        self.steps = 0
        self._start_episode()
        return self.game

    def next_episode(self) -> bool:
        """Start the next episode in the same game (after a hand episode: deal the next hand). Returns
        False when there is none (the game is over or truncated, or no game yet): call :meth:`new_game`."""
        if self.game is None or self.next != NEXT_HAND:
            return False
        self._deal_next()
        self._start_episode()
        return True

    def _start_episode(self) -> None:
        self.episode_steps = 0
        self.terminated = False
        self.truncated = False
        self.next = NEXT_DECISION

    def _deal_next(self) -> None:
        game = self.require_game()
        if self.deals is None:
            game.start_next_hand()
        else:  # hand i always uses deal i of the sequence
            game.start_next_hand(deal=self.deals.deal(game.hand_number + 1))

    # ------------------------------------------------------------------ queries
    def require_game(self) -> Game:
        if self.game is None:
            raise RuntimeError("no game at this table yet: call new_game() (an env: reset())")
        return self.game

    @property
    def done(self) -> bool:
        """The episode is over (terminated or truncated)."""
        return self.terminated or self.truncated

    @property
    def to_act(self) -> int:
        return self.require_game().to_act

    # ------------------------------------------------------------------ the loop
    def apply(self, action: Any) -> Step:
        """Apply the decision of the seat to act and everything it ends (see the module docstring).

        An illegal action raises :class:`~smear_env.engine.game.IllegalActionError` and changes nothing; so
        does a call after the episode is over (``GameStateError``)."""
        game = self.require_game()
        if self.done:
            raise GameStateError("the episode is over; start the next one (next_episode() or new_game())")
        game.apply(action)
        self.steps += 1
        self.episode_steps += 1
        opts = self.options
        rewards = _ZERO
        hand = None
        terminated = False
        if game.phase >= HAND_OVER:
            hand = end_of_hand(game)
            over = hand.game_over
            if not hand.thrown_in:
                terminated = over or opts.episode == "hand"
                rewards = seat_rewards(team_rewards(hand, opts, terminated))
            if not terminated and not self._hands_exhausted():
                self._deal_next()  # R8 redeal, or the next hand of a game episode
        truncated = not terminated and (
            cycles_exhausted(self.steps, opts.max_cycles)
            or (game.phase == HAND_OVER and self._hands_exhausted())
        )
        self.terminated = terminated
        self.truncated = truncated
        if truncated or (terminated and game.phase == GAME_OVER):
            nxt = NEXT_GAME
        elif terminated:
            nxt = NEXT_GAME if self._hands_exhausted() or self._cycles_exhausted() else NEXT_HAND
        else:
            nxt = NEXT_DECISION
        self.next = nxt
        if hand is None and nxt == NEXT_DECISION:
            return _DECISION  # the common step: nothing ended (one shared, immutable Step)
        return Step(rewards, hand, terminated, truncated, nxt)

    def abandon(self) -> None:
        """End the episode now as terminated (e.g. an illegal action under a "terminate" policy); the next
        episode is a new game."""
        self.terminated = True
        self.next = NEXT_GAME

    def _hands_exhausted(self) -> bool:
        return bool(hands_exhausted(self.require_game().hand_number + 1, self.options.max_hands))

    def _cycles_exhausted(self) -> bool:
        return bool(cycles_exhausted(self.steps, self.options.max_cycles))


class OnTable:
    """Mixin of a front end that plays on ``self.table``: its ``game`` and ``num_steps``."""

    table: Table

    @property
    def game(self) -> Game | None:
        """The game in progress (None before the first ``reset``)."""
        return self.table.game

    @property
    def num_steps(self) -> int:
        """Decisions (all seats) taken in the current episode."""
        return self.table.episode_steps


# ---------------------------------------------------------------------------- seats
def agent_action(player: Any, game: Game, seat: int) -> int:
    """The decision of ``player`` for ``seat``: an agent's ``act_view`` fast path when it offers one
    (:func:`~smear_env.agents.base.has_view_fast_path`), else ``act(observe(game, seat))``; a plain
    callable gets the observation dict."""
    act_view = getattr(player, "act_view", None)
    if callable(act_view):
        return act_view(view_of(game, seat).relative())
    act = getattr(player, "act", None)
    return (act if callable(act) else player)(observe(game, seat))


def _who(player: Any, seat: int) -> str:
    name = getattr(player, "name", None)
    return f"agent {name!r} in seat {seat}" if name is not None else f"agent of seat {seat}"


def play_agent(table: Table, player: Any) -> Step:
    """Let ``player`` take the decision of the seat to act; an illegal action is re-raised naming the
    agent and its seat."""
    game = table.require_game()
    seat = game.to_act
    action = agent_action(player, game, seat)
    try:
        return table.apply(action)
    except IllegalActionError as e:
        raise IllegalActionError(f"{_who(player, seat)}: {e}") from None


def start_agents(players: Mapping[int, Any] | Sequence[Any], rules: SmearRules,
                 rngs: Mapping[int, np.random.Generator] | Sequence[np.random.Generator]) -> None:
    """``start_game(seat, rules, rng)`` for every agent (plain callables have nothing to start)."""
    items = players.items() if isinstance(players, Mapping) else enumerate(players)
    for seat, p in items:
        start = getattr(p, "start_game", None)
        if callable(start) and callable(getattr(p, "act", None)):
            start(seat, rules, rngs[seat])


def play(table: Table, players: Mapping[int, Any] | Sequence[Any],
         on_step: Callable[[Step], None] | None = None) -> Rewards:
    """Play the seats in ``players`` (seat -> agent or callable) until a seat not in it is to act or the
    episode is over; returns the rewards summed per seat. With all four seats given: the whole episode."""
    if not isinstance(players, Mapping):
        players = dict(enumerate(players))
    total = [0.0, 0.0, 0.0, 0.0]
    game = table.require_game()
    while not table.done:
        p = players.get(game.to_act)
        if p is None:
            break
        st = play_agent(table, p)
        if st.rewards is not _ZERO:
            for s in range(NUM_PLAYERS):
                total[s] += st.rewards[s]
        if on_step is not None:
            on_step(st)
        game = table.require_game()
    return (total[0], total[1], total[2], total[3])


# ---------------------------------------------------------------------------- many tables in lock-step
class Lockstep:
    """Many tables stepped together. ``seats[i][s]`` says who plays seat ``s`` of table ``i``: an agent or
    callable (acts in-process, one decision at a time) or any other hashable *key* (e.g. ``"policy"``, a
    snapshot index): the decisions of each key are gathered so one batched forward pass takes them all.

    Loop: ``pending = lock.pending()`` plays every agent seat until each live table waits on a keyed
    seat, and returns ``{key: [table indices]}`` with :meth:`observations` for them; then
    :meth:`apply` the batch's actions. ``on_step(i, step)`` sees every step of every table (rewards,
    hand ends, episode ends; it may start new games and change ``seats[i]``). A table whose episode is
    over and that ``on_step`` does not restart leaves the loop (:attr:`live`)."""

    def __init__(self, tables: Sequence[Table], seats: list[list[Any]],
                 on_step: Callable[[int, Step], None] | None = None) -> None:
        if len(tables) != len(seats):
            raise ValueError(f"{len(tables)} tables but {len(seats)} seatings")
        self.tables = list(tables)
        self.seats = seats
        self.on_step = on_step

    @staticmethod
    def is_key(player: Any) -> bool:
        return isinstance(player, Hashable) and not callable(player) and not hasattr(player, "act")

    def live(self) -> list[int]:
        return [i for i, t in enumerate(self.tables) if t.game is not None and not t.done]

    def _after(self, i: int, st: Step) -> None:
        if self.on_step is not None:
            self.on_step(i, st)

    def advance(self, i: int) -> Hashable | None:
        """Play table ``i``'s agent seats; the key of the seat then to act (None when the episode is over)."""
        t = self.tables[i]
        while not t.done:
            p = self.seats[i][t.to_act]
            if self.is_key(p):
                return p
            self._after(i, play_agent(t, p))
        return None

    def pending(self, tables: Iterable[int] | None = None) -> dict[Hashable, list[int]]:
        out: dict[Hashable, list[int]] = {}
        for i in self.live() if tables is None else tables:
            key = self.advance(i)
            if key is not None:
                out.setdefault(key, []).append(i)
        return out

    def observations(self, idx: Sequence[int]) -> tuple[np.ndarray, np.ndarray]:
        """``(obs (B, 493) float32, mask (B, 72) int8)`` of the seats to act at tables ``idx``."""
        games = [self.tables[i].require_game() for i in idx]
        obs = np.stack([encode_game(g, g.to_act) for g in games])
        mask = np.stack([action_mask(g, g.to_act) for g in games])
        return obs, mask

    def apply(self, idx: Sequence[int], actions: Sequence[int] | np.ndarray) -> None:
        """Apply ``actions[k]`` at table ``idx[k]``. Values are checked by the engine like any action: a
        float or bool is an :class:`~smear_env.engine.game.IllegalActionError`, never rounded to an id."""
        values = actions.tolist() if isinstance(actions, np.ndarray) else list(actions)
        for i, a in zip(idx, values, strict=True):
            self._after(i, self.tables[i].apply(a))


__all__ = [
    "DEFAULT_MAX_CYCLES", "EPISODE_VALUES", "REWARD_VALUES", "HandEnd", "Lockstep", "OnTable", "Step",
    "Table", "TableOptions", "add_rule_arguments", "agent_action", "cycles_exhausted", "end_of_hand",
    "hands_exhausted", "check_run_arguments",
    "parse_options", "play", "play_agent", "rules_from_args", "seat_rewards", "shaped_team_rewards",
    "start_agents", "team_rewards",
]
