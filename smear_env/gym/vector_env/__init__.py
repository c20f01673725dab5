"""Vector envs for other frameworks, over the batched table (:mod:`smear_env.tables.batched_table`).

:class:`SmearVectorEnv` is a :class:`gymnasium.vector.VectorEnv`: ``num_envs`` games on the batched engine,
in each of them one learning seat (or one learning team) against fixed opponents given as agent specs
(``"random"``, ``"heuristic"``, a checkpoint, ``"pimc"``, ... -- anything
:func:`~smear_env.agents.batched.make_batched_agent` accepts) or batched agents. It is what
``gymnasium.make_vec("smear_env/SmearSingleSeat-v0", num_envs=N, vectorization_mode="vector_entry_point")``
returns (:func:`make_vector_env`; the keyword arguments are this class's). The single-seat env
(:mod:`smear_env.gym.single_seat`) is its one-game form: the same options, seats, rewards and episodes.

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
    ``max_cycles``, ``score_scale``, ``win_bonus``: :mod:`smear_env.tables.table`). An illegal action raises
    :class:`~smear_env.engine.vector.VectorIllegalActionError` naming the game, the action and the legal ones;
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
    (:func:`~smear_env.engine.observation.observation_bounds`); ``normalize=True`` scales the integer terms
    (:func:`~smear_env.engine.observation.normalized_scale`).

Seats (``seat``, ``learning``, ``opponents``, ``partner``)
    As in the single-seat env: ``seat="random"`` draws the learner's seat per game from the env's seeded
    generator (``infos["learner_seat"]``); ``opponents`` is one spec/agent for both opponent seats or a
    sequence relative to the learner, ``(left, right)`` or ``(left, partner, right)``; ``partner`` (default:
    the opponents' agent) plays the learner's partner with ``learning="seat"``.

:class:`SmearSelfPlayVectorEnv` is the self-play form (pgx style): all four seats are learners, one
decision per game per call, the observation of the seat to act (``infos["seat"]``) and per-seat rewards
``(N, 4)``. :class:`smear_env.gym.vector_env.sb3.SmearSB3VecEnv` adapts :class:`SmearVectorEnv` to
Stable-Baselines3's ``VecEnv`` (``MaskablePPO`` trains on it unchanged).

The package's modules: :mod:`~smear_env.gym.vector_env.env` (:class:`SmearVectorEnv`,
:func:`make_vector_env`),
:mod:`~smear_env.gym.vector_env.self_play` (:class:`SmearSelfPlayVectorEnv`),
:mod:`~smear_env.gym.vector_env.base` (what they share), :mod:`~smear_env.gym.vector_env.sb3`
(Stable-Baselines3's VecEnv).
"""

from __future__ import annotations

from .base import AUTORESET_MODES, INFO_KEYS, OBS_FORMATS, VectorRandomAgent
from .env import SmearVectorEnv, make_vector_env
from .self_play import SmearSelfPlayVectorEnv

__all__ = ["AUTORESET_MODES", "INFO_KEYS", "OBS_FORMATS", "SmearSelfPlayVectorEnv", "SmearVectorEnv",
           "VectorRandomAgent", "make_vector_env"]
