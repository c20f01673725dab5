"""The vector env of one learning seat or team per game against fixed opponents (:class:`SmearVectorEnv`,
the package docstring) and the ``make_vec`` entry point (:func:`make_vector_env`)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from gymnasium.vector.utils import batch_space

from ...agents.batched import BatchedRandomAgent
from ...agents.registry import make_batched_agent
from ...core.actions import NUM_ACTIONS
from ...core.config import RuleOptionError
from ...engine.observation import OBS_LOW, normalized_scale, observation_bounds
from ...tables.batched_table import LEARNER, BatchedStep, BatchedTable
from .base import (
    INFO_KEYS,
    VectorEnvBase,
    VectorRandomAgent,
    check_actions,
    check_autoreset_mode,
    check_num_envs,
    check_obs_format,
    reset_mask_of,
    single_obs_space,
    vector_options,
)


class _Accumulator:
    """What :meth:`BatchedTable.run_agents` accumulates into: ``add(step)`` per engine step."""

    def __init__(self, add: Any) -> None:
        self.add = add



class SmearVectorEnv(VectorEnvBase, VectorEnv):
    """One learning seat (or team) per game against fixed opponents, N games; see the module docstring."""

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 1, opponents: Any = None, partner: Any = None, *,
                 learning: str = "seat", seat: int | str = "random", obs_format: str = "dict",
                 autoreset_mode: AutoresetMode | str = AutoresetMode.NEXT_STEP, normalize: bool = False,
                 seed: int | None = None, **kwargs: Any) -> None:
        self.num_envs = check_num_envs(num_envs)
        self.autoreset_mode = check_autoreset_mode(autoreset_mode)
        self.metadata = {"autoreset_mode": self.autoreset_mode, "render_modes": []}
        self.rules, self.table_options = vector_options(kwargs, "SmearVectorEnv")
        if learning not in ("seat", "team"):
            raise RuleOptionError(f"option learning={learning!r} is not allowed; allowed values: "
                                  "'seat', 'team'")
        if not (seat == "random" or (type(seat) is int and 0 <= seat < 4)):
            raise RuleOptionError(f"option seat={seat!r} is not allowed; allowed values: "
                                  "'random', 0, 1, 2, 3")
        self.learning = learning
        self.seat_option = seat
        self.obs_format = check_obs_format(obs_format)
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
        return single_obs_space(self.obs_format, low, high)

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
        mask = reset_mask_of(options, self.num_envs)
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
        a = check_actions(actions, self.num_envs)
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
