"""Vector envs for other frameworks, over the batched table (:mod:`smear_env.batched_table`).

:class:`SmearVectorEnv` is a :class:`gymnasium.vector.VectorEnv`: ``num_envs`` games on the batched engine,
in each of them one learning seat (or one learning team) against fixed opponents given as agent specs
(``"random"``, ``"heuristic"``, a checkpoint, ``"pimc"``, ... -- anything
:func:`~smear_env.agents.batched.make_batched_agent` accepts) or batched agents. It is what
``gymnasium.make_vec("smear_env/SmearSingleSeat-v0", num_envs=N, vectorization_mode="vector_entry_point")``
returns (:func:`make_vector_env`; the keyword arguments are this class's). The single-seat env
(:mod:`smear_env.single_seat`) is its one-game form: the same options, seats, rewards and episodes.

Observations and the action mask
    ``obs_format="dict"`` (the class's default; the ``make_vec`` entry point's is ``"flat"``):
    ``{"observation": (N, 493) float32, "action_mask": (N, 72) int8}``,
    the PettingZoo classic layout (``single_observation_space`` is that ``Dict``); ``"flat"``: the
    ``(N, 493)`` array alone. Either way ``infos["action_mask"]`` is the ``(N, 72)`` bool mask and
    :meth:`SmearVectorEnv.action_masks` returns it (sb3-contrib's name). The observation is that of the
    learning seat to act (with ``learning="team"`` either seat of the team; ``infos["seat"]``).

Actions, rewards, episodes
    ``step(actions)``: ``(N,)`` integer action ids, one per game. Each game applies its learner's action,
    then plays the fixed seats until the learner is to act again; ``rewards`` ``(N,)`` float32 are what the
    learner's team earned meanwhile, in the table layer's options (``episode``, ``reward``,
    ``max_cycles``, ``score_scale``, ``win_bonus``: :mod:`smear_env.table`). An illegal action raises
    :class:`~smear_env.vector.VectorIllegalActionError` naming the game, the action and the legal ones;
    no game moves.

Info
    Every ``reset`` and ``step``: the single-seat env's keys, batched, with fixed dtypes (:data:`INFO_KEYS`:
    ``seat``, ``learner_seat``, ``scores`` ``(N, 2)``, ``hand_number``, ``winner``, ``illegal_action``,
    ``action_mask``), each with Gymnasium's ``_key`` lane mask.

Autoreset: ``autoreset_mode`` (attribute and ``metadata["autoreset_mode"]``), Gymnasium's three modes
    ``AutoresetMode.NEXT_STEP`` (default, as Gymnasium's own vector envs): a game whose episode ended in a
    step (``terminated | truncated``) returns that episode's end: the learner's final view (see
    ``final_obs`` below) with an all-ones mask, and infos of the ended episode (``winner``, ``scores``,
    ``learner_seat``); its next step is a reset step (action ignored, reward 0, not done) returning the next
    episode's first observation (the next hand of the same game with ``episode="hand"``, else a new game).

    ``AutoresetMode.SAME_STEP``: the ended game has already begun its next episode and the returned
    observation is the next episode's first. ``infos["final_obs"]`` (same structure as the observations,
    valid where ``infos["_final_obs"]``) holds the learner's observation at the end of the episode: exact
    for a game cut off by ``max_cycles`` (the value to bootstrap from); for an episode that ended naturally
    (the engine deals the next hand at once, so the final state never exists) it is the learner's last
    observation before the end (a terminated episode needs no bootstrap). Its ``action_mask`` is all zeros.
    ``infos["final_info"]`` (valid where ``infos["_final_info"]``) holds ``game_over``, ``winner`` (team,
    -1 none), ``final_scores`` ``(N, 2)`` and ``episode_steps`` (decisions of all seats in the episode).

    ``AutoresetMode.DISABLED``: as NEXT_STEP, except that an ended game waits for
    ``reset(options={"reset_mask": mask})`` (``step`` raises until then).

    ``reset()`` starts new games in every lane; ``reset(seed=s)`` makes the whole run reproducible.

Observations
    ``Box`` bounds per feature from the rules and ``max_cycles``
    (:func:`~smear_env.observation.observation_bounds`); ``normalize=True`` scales the integer terms
    (:func:`~smear_env.observation.normalized_scale`).

Seats (``seat``, ``learning``, ``opponents``, ``partner``)
    As in the single-seat env: ``seat="random"`` draws the learner's seat per game from the env's seeded
    generator (``infos["learner_seat"]``); ``opponents`` is one spec/agent for both opponent seats or a
    sequence relative to the learner, ``(left, right)`` or ``(left, partner, right)``; ``partner`` (default:
    the opponents' agent) plays the learner's partner with ``learning="seat"``.

:class:`SmearSelfPlayVectorEnv` is the self-play form (pgx style): all four seats are learners, one
decision per game per call, the observation of the seat to act (``infos["seat"]``) and per-seat rewards
``(N, 4)``. :class:`smear_env.vector_env.sb3.SmearSB3VecEnv` adapts :class:`SmearVectorEnv` to
Stable-Baselines3's ``VecEnv`` (``MaskablePPO`` trains on it unchanged).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ..actions import NUM_ACTIONS
from ..agents.batched import BatchedRandomAgent
from ..agents.registry import make_batched_agent
from ..batched_table import LEARNER, BatchedStep, BatchedTable
from ..config import RuleOptionError, SmearRules
from ..observation import OBS_LOW, normalized_scale, observation_bounds
from ..table import parse_options
from ..vector import random_actions

__all__ = ["OBS_FORMATS", "SmearSelfPlayVectorEnv", "SmearVectorEnv", "VectorRandomAgent", "make_vector_env"]

OBS_FORMATS = ("dict", "flat")
INFO_KEYS = ("seat", "learner_seat", "scores", "hand_number", "winner", "illegal_action", "action_mask")
"""The info keys of every ``reset`` and ``step`` (the single-seat env's, batched)."""
_EXTRA = {"score_scale": 1.0, "win_bonus": 0.0, "max_hands": None}


def _options(kwargs: dict[str, Any], name: str) -> tuple[SmearRules, Any]:
    rules, opts, extra = parse_options(kwargs, dict(_EXTRA), name=name)
    return rules, dataclasses.replace(opts, **extra)


def _check_num_envs(num_envs: Any) -> int:
    if isinstance(num_envs, bool) or not isinstance(num_envs, int | np.integer) or num_envs < 1:
        raise RuleOptionError(f"option num_envs={num_envs!r} is not allowed; allowed values: an integer >= 1")
    return int(num_envs)


def _check_format(obs_format: Any) -> str:
    if obs_format not in OBS_FORMATS or not isinstance(obs_format, str):
        raise RuleOptionError(f"option obs_format={obs_format!r} is not allowed; allowed values: "
                              "'dict', 'flat'")
    return obs_format


def _single_obs_space(obs_format: str, low: np.ndarray, high: np.ndarray) -> spaces.Space:
    box = spaces.Box(low, high, dtype=np.float32)
    if obs_format == "flat":
        return box
    return spaces.Dict({"observation": box, "action_mask": spaces.Box(0, 1, (NUM_ACTIONS,), dtype=np.int8)})


def _check_actions(actions: Any, n: int) -> np.ndarray:
    a = np.asarray(actions)
    if a.shape != (n,) or a.dtype.kind not in "iu":
        raise ValueError(f"actions must have shape ({n},): one integer action id (0..{NUM_ACTIONS - 1}) per "
                         f"game; got shape {a.shape} dtype {a.dtype}")
    return a.astype(np.int64, copy=False)


def _reset_mask(options: Any, n: int) -> np.ndarray | None:
    """The ``reset_mask`` of ``reset(options=...)`` (None without one); any other option is refused."""
    if not options:
        return None
    if not isinstance(options, dict) or set(options) != {"reset_mask"}:
        raise ValueError(f"SmearVectorEnv.reset takes only options={{'reset_mask': (N,) bool array}}, got "
                         f"{options!r}")
    m = options["reset_mask"]
    if not isinstance(m, np.ndarray) or m.dtype != np.bool_ or m.shape != (n,) or not m.any():
        raise ValueError(f"options['reset_mask'] must be a ({n},) bool numpy array with a True, got "
                         f"{type(m).__name__} {getattr(m, 'shape', '')} {getattr(m, 'dtype', '')}".rstrip())
    return m


AUTORESET_MODES = (AutoresetMode.NEXT_STEP, AutoresetMode.SAME_STEP, AutoresetMode.DISABLED)


def _check_autoreset(mode: Any) -> AutoresetMode:
    found = next((m for m in AUTORESET_MODES if mode is m or (isinstance(mode, str) and mode == m.value)),
                 None)
    if found is None:
        raise RuleOptionError(f"option autoreset_mode={mode!r} is not allowed; allowed values: "
                              "gymnasium.vector.AutoresetMode.NEXT_STEP ('NextStep'), "
                              "AutoresetMode.SAME_STEP ('SameStep'), AutoresetMode.DISABLED ('Disabled')")
    return found


class _Accumulator:
    """What :meth:`BatchedTable.run_agents` accumulates into: ``add(step)`` per engine step."""

    def __init__(self, add: Any) -> None:
        self.add = add


class VectorRandomAgent:
    """Uniformly random legal actions for every row from one generator
    (:func:`smear_env.vector.random_actions`, one uniform draw per row): the vectorised random
    opponent of ``opponents=None``. Unlike
    ``make_batched_agent("random")`` (a generator per game and seat, exactly
    :class:`~smear_env.agents.base.RandomAgent`'s draws, ~1-2 us a row in Python) its draws depend on the
    rows batched together; the distribution is the same."""

    vectorised = True

    def __init__(self, rng: np.random.Generator, name: str = "random") -> None:
        self.name = name
        self.rng = rng

    def start_game(self, slot: int, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        pass

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, slots: np.ndarray) -> np.ndarray:
        return random_actions(mask, self.rng)

    def close(self) -> None:
        pass


class _Base:
    """What both vector envs share: options, the table, the observation layout."""

    table: BatchedTable
    num_envs: int
    obs_format: str

    _scale: np.ndarray | None = None

    def _obs(self, obs: np.ndarray, mask: np.ndarray) -> Any:
        if self._scale is not None:
            obs = obs * self._scale
        if self.obs_format == "flat":
            return obs
        return {"observation": obs, "action_mask": mask.astype(np.int8)}

    def _seed_rng(self, seed: int | None) -> None:
        bad = isinstance(seed, bool) or not isinstance(seed, int | np.integer) or seed < 0
        if seed is not None and bad:
            raise ValueError(f"seed must be an integer >= 0 or None, not {seed!r}")
        self._rng = np.random.default_rng(seed)

    def _table_seed(self) -> int:
        return int(self._rng.integers(2**63))

    def _require_reset(self) -> None:
        if not self._ready:
            raise RuntimeError(f"call reset() before step() on {type(self).__name__}")


class SmearVectorEnv(_Base, VectorEnv):
    """One learning seat (or team) per game against fixed opponents, N games; see the module docstring."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, opponents: Any = None, partner: Any = None, *,
                 learning: str = "seat", seat: int | str = "random", obs_format: str = "dict",
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP, normalize: bool = False,
                 seed: int | None = None, **kwargs: Any) -> None:
        self.num_envs = _check_num_envs(num_envs)
        self.autoreset_mode = _check_autoreset(autoreset_mode)
        self.metadata = {"autoreset_mode": self.autoreset_mode, "render_modes": []}
        self.rules, self.table_options = _options(kwargs, "SmearVectorEnv")
        if learning not in ("seat", "team"):
            raise RuleOptionError(f"option learning={learning!r} is not allowed; allowed values: "
                                  "'seat', 'team'")
        if not (seat == "random" or (type(seat) is int and 0 <= seat < 4)):
            raise RuleOptionError(f"option seat={seat!r} is not allowed; allowed values: "
                                  "'random', 0, 1, 2, 3")
        self.learning = learning
        self.seat_option = seat
        self.obs_format = _check_format(obs_format)
        self._seed_rng(seed)
        self._fast_random = VectorRandomAgent(np.random.default_rng(self._rng.integers(2**63)))
        self.players, self._rel = self._make_players(opponents, partner)
        self.single_observation_space = self._bounded_space(normalize)
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.render_mode = None
        n = self.num_envs
        self._ar = np.arange(n)
        self.learner_seat = np.zeros(n, dtype=np.int64)
        """(N,) the learner's seat in each game (the first seat of its team with ``learning="team"``)."""
        self._cut_obs = np.zeros((n, OBS_LOW.size), dtype=np.float32)
        self._cut = np.zeros(n, dtype=bool)
        self._last_obs = np.zeros((n, OBS_LOW.size), dtype=np.float32)
        self._mask = np.zeros((n, NUM_ACTIONS), dtype=bool)
        self._autoreset = np.zeros(n, dtype=bool)
        """NEXT_STEP / DISABLED: the games whose episode ended in the last step (NEXT_STEP: their next step is
        a reset step; DISABLED: they wait for ``reset(options={"reset_mask": ...})``)."""
        self._obs_of_ended = np.zeros((n, OBS_LOW.size), dtype=np.float32)
        self._seat = np.zeros(n, dtype=np.int64)
        self._all = np.ones(n, dtype=bool)
        self._ready = False
        self._zero_obs = np.zeros(OBS_LOW.size, dtype=np.float32)
        self._mask_only = [isinstance(p, BatchedRandomAgent | VectorRandomAgent) for p in self.players]
        """Players whose act_batch reads only the mask (no observation is computed for them)."""
        self.table = BatchedTable(n, self.players, np.zeros(4, dtype=np.int64), self.rules,
                                  self.table_options, seed=self._table_seed(),
                                  on_new_games=self._seat_games, on_step=self._on_step)

    # ------------------------------------------------------------------ set-up
    def _bounded_space(self, normalize: Any) -> spaces.Space:
        if type(normalize) is not bool:
            raise RuleOptionError(f"option normalize={normalize!r} is not allowed; "
                                  "allowed values: False, True")
        self.normalize = normalize
        low, high = observation_bounds(self.rules, self.table_options.max_cycles)
        if normalize:
            self._scale = normalized_scale(self.rules)
            low, high = low * self._scale, high * self._scale
        return _single_obs_space(self.obs_format, low, high)

    def _make_players(self, opponents: Any, partner: Any) -> tuple[list[Any], dict[int, int]]:
        made: dict[Any, int] = {}
        players: list[Any] = [LEARNER]

        def index(x: Any, what: str) -> int:
            key = x if isinstance(x, str) else id(x)
            if key in made:
                return made[key]
            if isinstance(x, str):
                agent = make_batched_agent(x, self.rules)
            elif callable(getattr(x, "act_batch", None)) and callable(getattr(x, "start_game", None)):
                agent = x
            else:
                raise RuleOptionError(f"{what} must be an agent spec string (e.g. 'random', 'heuristic', "
                                      "a checkpoint path) or a batched agent (start_game + act_batch), "
                                      f"not {x!r}")
            players.append(agent)
            made[key] = len(players) - 1
            return made[key]

        if opponents is None:
            opponents = self._fast_random
        if isinstance(opponents, Sequence) and not isinstance(opponents, str):
            ops = list(opponents)
            if len(ops) == 3 and self.learning == "seat":
                if partner is not None:
                    raise RuleOptionError("give the partner either as opponents[1] (of three) or "
                                          "partner=, not both")
                rel = {1: index(ops[0], "opponents[0]"), 2: index(ops[1], "opponents[1]"),
                       3: index(ops[2], "opponents[2]")}
                return players, rel
            if len(ops) != 2:
                three = " or 3 (left, partner, right)" if self.learning == "seat" else ""
                allowed = "2 (left, right)" + three
                raise RuleOptionError(f"opponents has {len(ops)} entries; allowed: {allowed}")
            rel = {1: index(ops[0], "opponents[0]"), 3: index(ops[1], "opponents[1]")}
            default_partner = ops[0]
        else:
            rel = {1: index(opponents, "opponents"), 3: index(opponents, "opponents")}
            default_partner = opponents
        if self.learning == "seat":
            rel[2] = index(partner if partner is not None else default_partner, "partner")
        elif partner is not None:
            raise RuleOptionError("partner= is not allowed with learning='team' (the learner plays the "
                                  "partner)")
        else:
            rel[2] = 0
        return players, rel

    def _seat_games(self, table: BatchedTable, lanes: np.ndarray) -> None:
        """New games in ``lanes``: draw the learner's seat and seat everybody relative to it."""
        k = len(lanes)
        if self.seat_option == "random":
            seat = self._rng.integers(4, size=k)
        else:
            seat = np.full(k, int(self.seat_option), dtype=np.int64)
        rows = np.empty((k, 4), dtype=np.int64)
        ar = np.arange(k)
        rows[ar, seat] = 0
        for rel, p in self._rel.items():
            rows[ar, (seat + rel) % 4] = p
        table.set_seating(lanes, rows)
        self.learner_seat[lanes] = seat

    def _on_step(self, table: BatchedTable, st: BatchedStep) -> None:
        """A game cut off by ``max_cycles`` is still on the table here: keep the learner's final view."""
        res = st.result
        cut = st.truncated & ~res.truncated & ~res.game_over
        if cut.any():
            lanes = np.flatnonzero(cut)
            self._cut_obs[lanes] = table.vg.observe(self.learner_seat)[lanes]
            self._cut[lanes] = True

    # ------------------------------------------------------------------ gymnasium API
    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        """New games in every lane, played to each learner's first decision (``seed``: reproducible).

        ``options={"reset_mask": m}`` (Gymnasium's partial reset, what ``AutoresetMode.DISABLED`` needs):
        ``m`` a ``(N,)`` bool array; all True is a whole reset, else every lane in ``m`` must have ended its
        episode in the last step (its next episode, already dealt, starts; the other lanes are unchanged)."""
        mask = _reset_mask(options, self.num_envs)
        if mask is not None and not mask.all():
            if seed is not None:
                raise ValueError("reset(seed=...) with a partial reset_mask is not supported; seed a whole "
                                 "reset")
            self._require_reset()
            bad = np.flatnonzero(mask & ~self._autoreset)
            if bad.size:
                raise ValueError(f"reset_mask names games {bad.tolist()[:8]} whose episode has not ended; "
                                 "only games that ended in the last step can be reset alone")
            self._autoreset[mask] = False
            vg = self.table.vg
            obs, live = vg.observe(), vg.legal_mask()
            shown = np.where(self._autoreset[:, None], self._obs_of_ended, obs)
            m = live.copy()
            m[self._autoreset] = True
            self._mask = m
            self._seat = np.where(mask, vg.to_act, self._seat)
            infos = self._infos(self._seat.copy(), self.learner_seat.copy(), vg.scores.copy(),
                                vg.hand_number.copy(), np.full(self.num_envs, -1, np.int64), m)
            for k in INFO_KEYS:
                infos["_" + k] = mask
            return self._obs(shown, m), infos
        if seed is not None:
            self._seed_rng(seed)
            self._fast_random.rng = np.random.default_rng(self._rng.integers(2**63))
            obs, mask, info = self.table.reset(seed=self._table_seed())
        else:
            obs, mask, info = self.table.reset()
        self._ready = True
        self._autoreset[:] = False
        self._last_obs, self._mask, self._seat = obs, mask, info["seat"]
        vg = self.table.vg
        infos = self._infos(info["seat"], self.learner_seat.copy(), vg.scores.copy(), vg.hand_number.copy(),
                            np.full(self.num_envs, -1, dtype=np.int64), mask)
        return self._obs(obs, mask), infos

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        """One decision of every game's learner (see the module docstring's Autoreset)."""
        self._require_reset()
        a = _check_actions(actions, self.num_envs)
        vg = self.table.vg
        seat_before = self.learner_seat.copy()
        hand_before = vg.hand_number.copy()
        self._cut[:] = False
        next_step = self.autoreset_mode is not AutoresetMode.SAME_STEP  # NEXT_STEP or DISABLED
        resetting = None
        if next_step and self._autoreset.any():
            if self.autoreset_mode is AutoresetMode.DISABLED:
                ended = np.flatnonzero(self._autoreset).tolist()[:8]
                raise RuntimeError(f"games {ended} ended their episode: reset them first "
                                   "(reset(options={'reset_mask': mask}); autoreset_mode is DISABLED)")
            resetting = self._autoreset
        obs, mask, rewards, terminated, truncated, info = self._advance(a, resetting)
        reward = rewards[self._ar, seat_before]
        ended = terminated | truncated
        final = np.where(self._cut[:, None], self._cut_obs, self._last_obs) if ended.any() else None
        self._last_obs = obs
        if not next_step:
            infos = self._infos(info["seat"], self.learner_seat.copy(), vg.scores.copy(),
                                vg.hand_number.copy(), np.full(self.num_envs, -1, dtype=np.int64), mask)
            infos["final_obs"] = self._obs(final if final is not None else obs, np.zeros_like(mask))
            infos["_final_obs"] = ended
            infos["final_info"] = {"game_over": info["game_over"], "winner": info["winner"],
                                   "final_scores": info["final_scores"],
                                   "episode_steps": info["episode_steps"], "learner_seat": seat_before}
            infos["_final_info"] = ended
            self._mask = mask
            self._seat = info["seat"]
            return self._obs(obs, mask), reward, terminated, truncated, infos
        seat, scores, hands = info["seat"], vg.scores.copy(), vg.hand_number.copy()
        learner = self.learner_seat.copy()
        if final is not None:  # the ended episodes' last state: the learner's final view, the mask all ones
            obs = np.where(ended[:, None], final, obs)
            self._obs_of_ended = obs
            mask = mask.copy()
            mask[ended] = True
            seat = np.where(ended, np.where(self._cut, seat_before, self._seat), seat)
            learner = np.where(ended, seat_before, learner)
            scores = np.where((ended & info["new_game"])[:, None], info["final_scores"], scores)
            hands = np.where(ended, hand_before, hands)
        self._autoreset = ended
        self._mask = mask
        self._seat = seat
        infos = self._infos(seat, learner, scores, hands, info["winner"], mask)
        return self._obs(obs, mask), reward, terminated, truncated, infos

    def _advance(self, actions: np.ndarray, resetting: np.ndarray | None = None) -> tuple[np.ndarray, ...]:
        """:meth:`BatchedTable.step`, played through the table's low-level API so that agents that read only
        the mask (batched random) get no observation computed for them. ``resetting``: games whose action
        is ignored (NEXT_STEP's reset step: their new episode already waits on the learner)."""
        table = self.table
        vg = table.vg
        n = self.num_envs
        who = table.player_to_act()
        if not table.is_learner[who].all():
            raise RuntimeError("a game is not waiting on the learner: call reset() first")
        rewards = np.zeros((n, 4), dtype=np.float32)
        terminated = np.zeros(n, dtype=bool)
        truncated = np.zeros(n, dtype=bool)
        game_over = np.zeros(n, dtype=bool)
        new_game = np.zeros(n, dtype=bool)
        winner = np.full(n, -1, dtype=np.int64)
        final_scores = np.zeros((n, 2), dtype=np.int64)
        episode_steps = np.zeros(n, dtype=np.int64)

        def add(st: BatchedStep) -> None:
            rewards.__iadd__(st.rewards)
            terminated.__ior__(st.terminated)
            truncated.__ior__(st.truncated)
            ended = st.terminated | st.truncated
            episode_steps[ended] = st.episode_steps[ended]
            over = np.flatnonzero(st.new_game)
            if over.size:
                new_game[over] = True
                game_over[over] |= st.result.game_over[over]
                winner[over] = st.result.winner[over]
                final_scores[over] = st.result.scores[over]

        if resetting is None:
            add(table.apply(None, actions))
        else:
            go = np.flatnonzero(~resetting)
            if go.size:
                add(table.apply(go, actions[go]))
        players, learner = table.players, table.is_learner
        if not any(self._mask_only):  # the table's own loop: packed observations for agents that take them
            table.run_agents(_Accumulator(add))
        while True:
            who = table.player_to_act()
            lanes = np.flatnonzero(~learner[who])
            if not lanes.size:
                break
            all_lanes = lanes.size == n
            mask = vg.legal_mask()
            wl = who[lanes]
            groups = [(p, np.flatnonzero(wl == p)) for p in np.unique(wl).tolist()]
            obs = None
            if any(not self._mask_only[p] for p, _ in groups):
                obs = vg.observe()
                if not all_lanes:
                    obs = obs[lanes]
            if not all_lanes:
                mask = mask[lanes]
            slots = (lanes << 2) + vg.to_act[lanes]
            acts = np.empty(lanes.size, dtype=np.int64)
            for p, rows in groups:
                o = np.broadcast_to(self._zero_obs, (rows.size, OBS_LOW.size)) if obs is None else obs[rows]
                acts[rows] = players[p].act_batch(o, mask[rows], slots[rows])
            add(table.apply(None if all_lanes else lanes, acts))
        info = {"seat": vg.to_act.copy(), "game_over": game_over, "winner": winner,
                "final_scores": final_scores, "new_game": new_game,
                "episode_steps": np.where(terminated | truncated, episode_steps, table.episode_steps)}
        return vg.observe(), vg.legal_mask(), rewards, terminated, truncated, info

    def _infos(self, seat: np.ndarray, learner: np.ndarray, scores: np.ndarray, hands: np.ndarray,
               winner: np.ndarray, mask: np.ndarray) -> dict[str, Any]:
        """The single-seat env's info keys, batched (each with Gymnasium's ``_key`` lane mask, all True)."""
        info = {"seat": seat, "learner_seat": learner, "scores": scores, "hand_number": hands,
                "winner": winner, "illegal_action": np.zeros(self.num_envs, dtype=bool), "action_mask": mask}
        for k in INFO_KEYS:
            info["_" + k] = self._all
        return info

    def action_masks(self) -> np.ndarray:
        """(N, 72) bool: the legal actions of each game's learner now (sb3-contrib's name)."""
        self._require_reset()
        return self._mask

    def close_extras(self, **kwargs: Any) -> None:
        for p in self.players:
            close = getattr(p, "close", None)
            if callable(close):
                close()


class SmearSelfPlayVectorEnv(_Base):
    """Self-play, pgx style: all four seats of every game are learners (see the module docstring).

    ``reset(seed=None) -> (obs, infos)``; ``step(actions (N,)) -> (obs, rewards (N, 4), terminated (N,),
    truncated (N,), infos)``: one decision in every game (by ``infos["seat"]`` of the previous call),
    ``rewards[:, s]`` what seat ``s`` earned in it (partners equal, teams opposite), autoreset as
    :class:`SmearVectorEnv` (SAME_STEP; ``infos["final_info"]``). ``obs``/``infos["action_mask"]`` are those
    of the seat to act. Not a :class:`gymnasium.vector.VectorEnv` (its rewards are per seat); the spaces and
    ``metadata["autoreset_mode"]`` are there as on one."""

    metadata = {"autoreset_mode": AutoresetMode.SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, *, obs_format: str = "dict", seed: int | None = None,
                 **kwargs: Any) -> None:
        self.num_envs = _check_num_envs(num_envs)
        self.autoreset_mode = AutoresetMode.SAME_STEP
        self.rules, self.table_options = _options(kwargs, "SmearSelfPlayVectorEnv")
        self.obs_format = _check_format(obs_format)
        self.single_observation_space = _single_obs_space(
            self.obs_format, *observation_bounds(self.rules, self.table_options.max_cycles))
        self.single_action_space = spaces.Discrete(NUM_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, self.num_envs)
        self.action_space = batch_space(self.single_action_space, self.num_envs)
        self.num_players = 4
        self._seed_rng(seed)
        self._ready = False
        self._mask = np.zeros((self.num_envs, NUM_ACTIONS), dtype=bool)
        self.table = BatchedTable(self.num_envs, [LEARNER], np.zeros(4, dtype=np.int64), self.rules,
                                  self.table_options, seed=self._table_seed())

    def reset(self, *, seed: int | None = None, options: dict[str, Any] | None = None) -> tuple[Any, dict]:
        if options:
            raise ValueError(f"SmearSelfPlayVectorEnv.reset takes no options, got {options!r}")
        if seed is not None:
            self._seed_rng(seed)
            obs, mask, info = self.table.reset(seed=self._table_seed())
        else:
            obs, mask, info = self.table.reset()
        self._ready = True
        self._mask = mask
        return self._obs(obs, mask), {"action_mask": mask, "seat": info["seat"]}

    def step(self, actions: Any) -> tuple[Any, np.ndarray, np.ndarray, np.ndarray, dict]:
        self._require_reset()
        a = _check_actions(actions, self.num_envs)
        obs, mask, rewards, terminated, truncated, info = self.table.step(a)
        ended = terminated | truncated
        infos = {"action_mask": mask, "seat": info["seat"],
                 "final_info": {"game_over": info["game_over"], "winner": info["winner"],
                                "final_scores": info["final_scores"], "episode_steps": info["episode_steps"]},
                 "_final_info": ended}
        self._mask = mask
        return self._obs(obs, mask), rewards, terminated, truncated, infos

    def action_masks(self) -> np.ndarray:
        """(N, 72) bool: the legal actions of the seat to act in each game."""
        self._require_reset()
        return self._mask

    def close(self) -> None:
        pass


def make_vector_env(num_envs: int = 1, *, obs_format: str = "flat", **kwargs: Any) -> SmearVectorEnv:
    """The vector entry point of ``smear_env/SmearSingleSeat-v0``: ``gymnasium.make_vec(id, num_envs=N,
    vectorization_mode="vector_entry_point", **kwargs)`` calls this; ``kwargs`` are
    :class:`SmearVectorEnv`'s (the single-seat env's options plus ``autoreset_mode`` and ``seed``;
    ``illegal_action`` is accepted only as ``"raise"``: an illegal action always raises here).

    ``obs_format`` defaults to ``"flat"`` here, as the registered single-seat env: every ``make_vec`` mode
    (``"sync"``, ``"async"``, ``"vector_entry_point"``) then gives ``Box(493)`` observations, NEXT_STEP
    autoreset and the same info keys; ``obs_format="dict"`` gives the Dict in every mode too."""
    illegal = kwargs.pop("illegal_action", "raise")
    if illegal != "raise":
        raise RuleOptionError(f"option illegal_action={illegal!r} is not allowed for the vector env; "
                              "allowed values: 'raise' (an illegal action raises VectorIllegalActionError, "
                              "no game moves)")
    if "render_mode" in kwargs and kwargs["render_mode"] is not None:
        raise RuleOptionError(f"option render_mode={kwargs['render_mode']!r} is not allowed for the "
                              "vector env; allowed values: None")
    kwargs.pop("render_mode", None)
    return SmearVectorEnv(num_envs, obs_format=obs_format, **kwargs)
