"""A single-agent Gymnasium view of Smear: one learning seat (or one learning team), the other seats played
by given agents. For Stable-Baselines3 / sb3-contrib ``MaskablePPO`` (``action_masks()``).

Observations and rewards belong to the learning seat: a step takes the learner's action, then plays the
other seats until the learner is to act again (or the episode ends), and returns the learner's
observation and the rewards its team earned meanwhile -- not the next player's (the flaw of the
PettingZoo SB3 tutorial's wrapper). The game loop is :class:`smear_env.tables.table.Table` (rewards, hand and
episode ends), observations come from :mod:`smear_env.engine.observation`.

Options:

* ``opponents``: who plays the other seats: ``None`` (random agents), one agent, or a sequence. An
  agent is an agent spec string (``"random"``, ``"heuristic"``, a checkpoint path, ...:
  :func:`smear_env.agents.registry.make_agent`, as ``gymnasium.make(id, opponents="heuristic")`` takes), an
  :class:`~smear_env.agents.base.Agent` (``start_game`` + ``act``; a single instance is
  deep-copied for each seat it plays) or a plain callable ``obs_dict -> action``. A sequence names the
  seats relative to the learner: ``(left, right)``, or ``(left, partner, right)`` with ``learning="seat"``.
* ``partner``: the learner's partner with ``learning="seat"``; by default another copy of the
  opponents' agent (or the middle one of three).
* ``learning``: ``"seat"`` (default) or ``"team"`` (the learner plays both seats of its team, each
  observation being that of the seat to act).
* ``seat``: ``"random"`` (default; drawn for each new game from the env's seeded generator) or 0..3.
* ``episode`` (``"game"`` | ``"hand"``), ``reward`` (``"win"`` | ``"score"``), ``max_cycles``,
  ``score_scale``, ``win_bonus``: the table
  options of :mod:`smear_env.tables.table` (R18-R21; with ``"hand"`` a ``reset()`` without a seed deals the
  next hand of the same game, same seat and agents); rule options as keyword arguments or
  ``rules=SmearRules(...)``.
* ``render_mode``: ``None``, ``"human"`` or ``"ansi"``.
* ``obs_format``: ``"flat"`` (default: the ``Box(493)`` observation vector) or ``"dict"`` (the PettingZoo
  classic ``{"observation": (493,) float32, "action_mask": (72,) int8}``, as the vector env's
  ``obs_format="dict"``).
* ``normalize``: ``False`` (default: the layout's values, :mod:`smear_env.engine.observation`) or ``True``
  (the raw integer terms scaled, :func:`~smear_env.engine.observation.normalized_scale`: scores and target as
  fractions of the target score, hand sizes of 9). The ``Box`` bounds are tight either way
  (:func:`~smear_env.engine.observation.observation_bounds` of the rules and ``max_cycles``).

Agents get ``start_game(seat, rules, rng)`` at each new game with generators derived from the env's.
An illegal action raises :class:`~smear_env.engine.game.IllegalActionError` (``illegal_action="raise"``, the
default) or, with ``illegal_action="terminate"``, ends the episode with reward -1 (as PettingZoo's
``TerminateIllegalWrapper``; generic checkers that step random actions need it). Any integer-valued scalar
is an action (``int``, numpy integers, the 0-d array ``model.predict`` returns); a value that is no action
id (bools, floats, strings, ids outside 0..71) raises ``IllegalActionError`` in both modes. ``step``
before ``reset()`` or after the episode ended raises ``RuntimeError``. The state is unchanged after every
error. ``action_space.sample()`` draws a legal action (:class:`LegalDiscrete`).

Info (the same keys and types at every ``reset`` and ``step``, so readers that build a spec from the first
info, as TorchRL's ``auto_register_info_dict``, work): ``seat`` (int64: the seat whose observation it is),
``learner_seat`` (int64), ``scores`` ((2,) int64: team 0, team 1), ``hand_number`` (int64), ``winner``
(int64: the team that won the game, -1 while none), ``illegal_action`` (0-d bool array: the step was an
illegal action under ``illegal_action="terminate"``) and ``action_mask`` (bool (72,)).

Masks: ``action_masks()`` (reach it through Gymnasium's wrappers with ``env.get_wrapper_attr("action_masks")``
or ``env.unwrapped``, as sb3-contrib's ``get_action_masks`` does) and ``info["action_mask"]`` of every
``reset`` and ``step`` give the learner's legal actions (bool (72,)). ``reset()`` always returns a state
where the learner is to act. After the last step of an episode the mask is all ones (nothing is pending;
under ``gymnasium.make_vec``'s default next-step autoreset the following step is a reset step that
ignores its action and returns the new episode's observation and ``info["action_mask"]``).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Sequence
from typing import Any

import gymnasium
import numpy as np
from gymnasium import spaces

from ..agents.base import RandomAgent
from ..core.actions import NUM_ACTIONS
from ..core.config import RuleOptionError
from ..core.seeding import check_seed
from ..engine.game import HAND_OVER, Game, IllegalActionError
from ..engine.observation import action_mask, encode_game, normalized_scale, observation_bounds
from ..envs.aec import new_game_option, set_env_options
from ..tables.render import render_mode_output
from ..tables.table import OnTable, Table, play, start_agents

LEARNING_VALUES = ("seat", "team")
OWN_OPTIONS = ("opponents", "partner", "learning", "seat", "illegal_action", "obs_format", "normalize")
OBS_FORMATS = ("flat", "dict")
ILLEGAL_ACTION_VALUES = ("raise", "terminate")
ILLEGAL_REWARD = -1.0


class LegalDiscrete(spaces.Discrete):
    """``Discrete(72)`` whose ``sample()`` without a mask draws a legal action of the env's current state
    (so generic checkers and random rollouts never hit the illegal-action error)."""

    def __init__(self, n: int, mask_fn: Callable[[], np.ndarray]) -> None:
        super().__init__(n)
        self._mask_fn = mask_fn

    def sample(self, mask: Any = None, probability: Any = None) -> np.int64:
        if mask is None and probability is None:
            legal = np.asarray(self._mask_fn(), dtype=np.int8)
            if legal.any():
                return super().sample(mask=legal)
        return super().sample(mask=mask, probability=probability)


RESET_TRIES = 100
"""New games ``reset()`` tries when each is truncated (max_cycles) before the learner's first decision."""


def episode_over_mask() -> np.ndarray:
    """The mask after the episode ended: all ones (bool (72,)); no decision is pending and the action an
    autoreset takes is ignored (see :meth:`SmearSingleSeatEnv.action_masks`)."""
    return np.ones(NUM_ACTIONS, dtype=bool)


def _is_agent(x: Any) -> bool:
    return hasattr(x, "act") and hasattr(x, "start_game")


class SmearSingleSeatEnv(OnTable, gymnasium.Env):
    """One learning seat (or team) against given agents; see the module docstring."""

    metadata = {"render_modes": ["human", "ansi"], "name": "smear_single_seat_v0", "render_fps": 1}

    def __init__(
        self,
        opponents: Any = None,
        partner: Any = None,
        *,
        learning: str = "seat",
        seat: int | str = "random",
        illegal_action: str = "raise",
        obs_format: str = "flat",
        normalize: bool = False,
        **kwargs: Any,
    ) -> None:
        super().__init__()
        set_env_options(self, kwargs, OWN_OPTIONS)
        if learning not in LEARNING_VALUES:
            raise RuleOptionError(
                f"option learning={learning!r} is not allowed; allowed values: 'seat', 'team'"
            )
        self.learning = learning
        if not (seat == "random" or (type(seat) is int and 0 <= seat < 4)):
            raise RuleOptionError(
                f"option seat={seat!r} is not allowed; allowed values: 'random', 0, 1, 2, 3"
            )
        self.seat_option = seat
        if illegal_action not in ILLEGAL_ACTION_VALUES:
            raise RuleOptionError(
                f"option illegal_action={illegal_action!r} is not allowed; "
                "allowed values: 'raise', 'terminate'"
            )
        self.illegal_action = illegal_action
        if not isinstance(obs_format, str) or obs_format not in OBS_FORMATS:
            raise RuleOptionError(
                f"option obs_format={obs_format!r} is not allowed; allowed values: 'flat', 'dict'"
            )
        self.obs_format = obs_format
        if type(normalize) is not bool:
            raise RuleOptionError(f"option normalize={normalize!r} is not allowed; "
                                  "allowed values: False, True")
        self.normalize = normalize
        low, high = observation_bounds(self.rules, self.max_cycles)
        self._scale = normalized_scale(self.rules) if normalize else None
        if self._scale is not None:
            low, high = low * self._scale, high * self._scale
        # Players by seat relative to the learner: 1 left, 2 partner, 3 right.
        self._players = self._make_players(opponents, partner)
        box = spaces.Box(low, high, dtype=np.float32)
        self.observation_space: spaces.Space = box if obs_format == "flat" else spaces.Dict(
            {"observation": box, "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8)})
        self.action_space = LegalDiscrete(NUM_ACTIONS, self._current_mask)
        self.table = Table(self.rules, self.table_options)
        self.seat = 0
        self._controlled: tuple[int, ...] = (0,)
        self._others: dict[int, Any] = {}

    def _make_players(self, opponents: Any, partner: Any) -> dict[int, Any]:
        n_rel = (1, 3) if self.learning == "team" else (1, 2, 3)

        made: dict[str, Any] = {}

        def one(x: Any, what: str) -> Any:
            if isinstance(x, str):  # an agent spec: made once (a checkpoint is read once), copied per seat
                if x not in made:
                    from ..agents.registry import make_agent

                    made[x] = make_agent(x, self.rules)
                x = made[x]
            if _is_agent(x):
                return copy.deepcopy(x)
            if callable(x):
                return x
            raise RuleOptionError(
                f"{what} must be an agent spec string (e.g. 'random', 'heuristic'), an Agent (start_game + "
                f"act) or a callable obs_dict -> action, not {x!r}"
            )

        if opponents is None:
            opponents = RandomAgent()
        if isinstance(opponents, Sequence) and not isinstance(opponents, str):
            ops = list(opponents)
            if len(ops) == 2:
                players = {1: one(ops[0], "opponents[0]"), 3: one(ops[1], "opponents[1]")}
                default_partner = ops[0]
            elif len(ops) == 3 and self.learning == "seat":
                if partner is not None:
                    raise RuleOptionError(
                        "give the partner either as opponents[1] (of three) or partner=, not both"
                    )
                return {
                    1: one(ops[0], "opponents[0]"),
                    2: one(ops[1], "opponents[1]"),
                    3: one(ops[2], "opponents[2]"),
                }
            else:
                allowed = "2 (left, right)" + (
                    " or 3 (left, partner, right)" if self.learning == "seat" else ""
                )
                raise RuleOptionError(f"opponents has {len(ops)} entries; allowed: {allowed}")
        else:
            players = {1: one(opponents, "opponents"), 3: one(opponents, "opponents")}
            default_partner = opponents
        if 2 in n_rel:
            players[2] = one(partner if partner is not None else default_partner, "partner")
        elif partner is not None:
            raise RuleOptionError(
                "partner= is not allowed with learning='team' (the learner plays the partner)"
            )
        return players

    # ------------------------------------------------------------------ gymnasium API
    @property
    def _done(self) -> bool:
        return self.table.terminated

    @property
    def _truncated(self) -> bool:
        return self.table.truncated

    def reset(
        self, *, seed: int | None = None, options: dict[str, Any] | None = None
    ) -> tuple[np.ndarray, dict]:
        """A new episode: with ``episode="hand"`` and no ``seed`` the next hand of the game in progress
        (same seat and agents, scores kept) while it lasts, else a new game; ``options={"new_game": True}``
        forces a new game. The learner is always to act on return (a valid mask): when the game is truncated
        (``max_cycles``, R21) while the other seats move towards the learner's first decision, a new game
        starts instead. ``seed``: ``None`` or an integer ``0 <= seed < 2**64``
        (:func:`smear_env.core.seeding.check_seed`; else ``TypeError`` / ``ValueError``, the env
        unchanged)."""
        seed = check_seed(seed)  # TypeError / ValueError naming it, before anything changes
        forced = new_game_option(options)
        super().reset(seed=seed)
        new_game = seed is not None or forced
        if new_game or not self.table.next_episode():
            self._new_game()
        # The other seats move until the learner is to act. No hand can be scored before the learner's
        # first action, but R21 (max_cycles) can cut the game off on the way: then this episode would
        # start over (an all-zero mask), so a new game starts instead (a bounded number of times).
        play(self.table, self._others)
        tries = 1
        while self.table.done:
            if tries >= RESET_TRIES:
                raise RuntimeError(
                    f"reset(): {RESET_TRIES} new games in a row were truncated "
                    f"(max_cycles={self.max_cycles}) before the learning seat could act; "
                    "use a larger max_cycles"
                )
            self._new_game()
            play(self.table, self._others)
            tries += 1
        if self.render_mode == "human":
            self.render()
        return self._observe()

    def _new_game(self) -> None:
        rng = self.np_random
        self.seat = int(rng.integers(4)) if self.seat_option == "random" else int(self.seat_option)
        self._controlled = (self.seat, (self.seat + 2) % 4) if self.learning == "team" else (self.seat,)
        game_seed = int(rng.integers(2**63))
        self.table.new_game(np.random.default_rng(game_seed))
        self._others = {(self.seat + rel) % 4: player for rel, player in self._players.items()}
        rngs = {s: np.random.default_rng(int(rng.integers(2**63)))
                for s, p in self._others.items() if _is_agent(p)}
        start_agents({s: self._others[s] for s in rngs}, self.rules, rngs)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool, bool, dict]:
        table = self.table
        if table.done:
            raise RuntimeError("the episode is over; call reset()")
        seat = self._require_game().to_act
        try:
            action = self._require_game().check_action_id(action)  # no action id at all: raised in both modes
        except IllegalActionError as e:
            raise IllegalActionError(f"learning seat {seat}: {e}") from None
        try:
            st = table.apply(action)
        except IllegalActionError as e:
            if self.illegal_action == "terminate":
                table.abandon()  # the state is unchanged; the episode ends with ILLEGAL_REWARD
                obs, info = self._observe()
                info["illegal_action"] = np.array(True)
                return obs, ILLEGAL_REWARD, True, False, info
            raise IllegalActionError(f"learning seat {seat}: {e}") from None
        reward = st.rewards[self.seat]
        if not table.done:
            reward += play(table, self._others)[self.seat]
        if self.render_mode == "human":
            self.render()
        obs, info = self._observe()
        return obs, float(reward), table.terminated, table.truncated, info

    def action_masks(self) -> np.ndarray:
        """Legal actions of the learner now (bool (72,)), for sb3-contrib MaskablePPO (through Gymnasium's
        wrappers: ``env.get_wrapper_attr("action_masks")()`` or ``env.unwrapped.action_masks()``; the same
        mask is ``info["action_mask"]`` of every ``reset`` and ``step``).

        Once the episode is over (terminated or truncated) no decision is pending: the mask is all ones
        (:func:`episode_over_mask`), so a masked policy can still pick the action that Gymnasium's
        next-step autoreset ignores (``make_vec``: the step after the last one is a reset step whose
        ``info["action_mask"]`` is the new episode's); ``step()`` itself raises until ``reset()``."""
        game = self._require_game()
        if self.table.done:
            return episode_over_mask()
        return action_mask(game, self._obs_seat()).astype(bool)

    def _current_mask(self) -> np.ndarray:
        if self.game is None or self._done or self._truncated:
            return np.zeros(NUM_ACTIONS, dtype=np.int8)
        return action_mask(self.game, self._obs_seat())

    def render(self) -> str | None:
        return render_mode_output(self._require_game(), self.render_mode)

    def record(self) -> dict[str, Any]:
        """The episode's game so far as a smear-record/1 object."""
        return self._require_game().to_record(truncated=self.table.truncated)

    # ------------------------------------------------------------------ internals
    def _require_game(self) -> Game:
        if self.game is None:
            raise RuntimeError("call reset() before using SmearSingleSeatEnv")
        return self.game

    def _obs_seat(self) -> int:
        game = self._require_game()
        if game.phase < HAND_OVER and game.to_act in self._controlled:
            return game.to_act
        return self.seat

    def _observe(self) -> tuple[Any, dict[str, Any]]:
        """The observation and the info of the current state, the observed seat and the mask (as
        :meth:`action_masks`) found once for both."""
        game = self._require_game()
        seat = self._obs_seat()
        mask = episode_over_mask() if self.table.done else action_mask(game, seat).astype(bool)
        vec = encode_game(game, seat)
        if self._scale is not None:
            vec *= self._scale
        obs = vec if self.obs_format == "flat" else {"observation": vec, "action_mask": mask.astype(np.int8)}
        info = {"seat": np.int64(seat), "learner_seat": np.int64(self.seat),
                "scores": np.array(game.scores, dtype=np.int64), "hand_number": np.int64(game.hand_number),
                "winner": np.int64(-1 if game.winner is None else game.winner),
                "illegal_action": np.array(False), "action_mask": mask}
        return obs, info

    def _obs(self) -> Any:
        return self._observe()[0]

    def _info(self) -> dict[str, Any]:
        return self._observe()[1]


def make_env(
    opponents: Any = None,
    partner: Any = None,
    *,
    learning: str = "seat",
    seat: int | str = "random",
    illegal_action: str = "terminate",
    **kwargs: Any,
) -> SmearSingleSeatEnv:
    """The factory behind ``gymnasium.make("smear_env/SmearSingleSeat-v0", ...)``.

    The same arguments as :class:`SmearSingleSeatEnv` (agent spec strings included:
    ``opponents="heuristic"``, ``partner="checkpoints/x.safetensors"``, a list of specs), except that
    an illegal action ends the episode with reward -1 by default (``illegal_action="terminate"``, as
    PettingZoo's ``env()`` against ``raw_env``). Gymnasium's ``check_env`` needs that: its determinism check
    samples an action from the *previous* episode's state before ``reset(seed=...)``, which is usually illegal
    in the new deal."""
    return SmearSingleSeatEnv(opponents, partner, learning=learning, seat=seat,
                              illegal_action=illegal_action, **kwargs)
