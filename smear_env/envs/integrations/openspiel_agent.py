"""OpenSpiel's ISMCTS as a project agent: the spec ``openspiel:ismcts,simulations=100,uct_c=2``.

The bot is OpenSpiel's own Python ``ISMCTSBot`` (``open_spiel.python.algorithms.ismcts``), unchanged, playing
``python_smear`` (:mod:`smear_env.envs.integrations.openspiel`). It answers from the seat's view alone: each
decision decodes the seat's observation (:func:`smear_env.engine.decoding.decode`), and every simulation
starts in a world drawn from that view by the project's deal sampler
(:func:`smear_env.engine.infoset.sample_hidden`, through the bot's resampler hook,
:func:`~smear_env.envs.integrations.openspiel.world_from_view`). Search nodes are keyed by the players'
observation strings (the bot's ``use_observation_string``): a view does not hold the order of the finished
tricks, so the information-state strings of a world built from it are not the game's.

Leaves are valued by :class:`HandRolloutEvaluator`: the rest of the hand played at random on the engine
(``rollouts`` times), worth the change of the team's score margin over 8 (a hand moves it by at most 8),
clipped to [-1, 1]; a won or lost game is worth +1 / -1 (``python_smear``'s returns).

Options: ``simulations`` (default 100), ``uct_c`` (2.0), ``rollouts`` (1), ``world_samples`` (-1: a fresh
world each simulation; n: n worlds reused), ``final`` (``max_visit`` or ``max_value``). All randomness comes
from the generator of ``start_game``. Needs ``pip install "smear-rl[openspiel]"``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyspiel
from open_spiel.python.algorithms import ismcts

from ...core.config import SmearRules
from ...engine.decoding import decode
from ...engine.game import HAND_OVER, Game
from ...engine.infoset import PlayerView, sample_hidden
from .openspiel import GAME_NAME, SmearState, state_at, world_from_view

__all__ = ["BOTS", "HandRolloutEvaluator", "OpenSpielISMCTSAgent", "agent_from_spec"]

BOTS = ("ismcts",)
FINAL_POLICIES = {"max_visit": ismcts.ISMCTSFinalPolicyType.MAX_VISIT_COUNT,
                  "max_value": ismcts.ISMCTSFinalPolicyType.MAX_VALUE}
HAND_SWING = 8.0
"""The most a hand moves the score margin (R17: 4 points each way); leaf values are margin changes over it."""


class HandRolloutEvaluator:
    """OpenSpiel evaluator (``evaluate`` / ``prior``) of ``python_smear`` states for one search: the rest of
    the current hand played uniformly at random on the engine, ``rollouts`` times; the value of team 0 is the
    change of its score margin from ``margin`` (the root's) over :data:`HAND_SWING`, clipped to [-1, 1], or
    +1 / -1 once the game is won / lost."""

    def __init__(self, rollouts: int, margin: int, rng: np.random.Generator) -> None:
        self.rollouts = rollouts
        self.margin = margin
        self.rng = rng

    def _value(self, game: Game) -> float:
        if game.winner is not None:
            return 1.0 if game.winner == 0 else -1.0
        return float(np.clip((game.scores[0] - game.scores[1] - self.margin) / HAND_SWING, -1.0, 1.0))

    def evaluate(self, state: SmearState) -> np.ndarray:
        if state.is_terminal():
            return np.array(state.returns())
        base = state.smear_game
        total = 0.0
        for _ in range(self.rollouts):
            g = base.copy()
            while g.phase < HAND_OVER:
                legal = g.legal_actions()
                g.apply(legal[int(self.rng.integers(len(legal)))])
            total += self._value(g)
        v = total / self.rollouts
        return np.array([v, -v, v, -v])

    def prior(self, state: SmearState) -> list[tuple[int, float]]:
        legal = state.legal_actions()
        return [(a, 1.0 / len(legal)) for a in legal]


class OpenSpielISMCTSAgent:
    """OpenSpiel's ``ISMCTSBot`` searching worlds sampled from the seat's view (module docstring)."""

    draws = True

    def __init__(self, rules: SmearRules | None = None, simulations: int = 100, uct_c: float = 2.0,
                 rollouts: int = 1, world_samples: int = -1, final: str = "max_visit") -> None:
        self.rules = rules if rules is not None else SmearRules()
        for name, v, low in (("simulations", simulations, 1), ("rollouts", rollouts, 1),
                             ("world_samples", world_samples, -1)):
            bad = isinstance(v, bool) or not isinstance(v, int) or v < low
            if bad or (name == "world_samples" and v == 0):
                allowed = ("-1 (a fresh world each simulation) or an integer >= 1" if low < 0
                           else f"an integer >= {low}")
                raise ValueError(f"openspiel:ismcts option {name}={v!r} is not allowed; "
                                 f"allowed values: {allowed}")
        if isinstance(uct_c, bool) or not isinstance(uct_c, int | float) or not uct_c >= 0:
            raise ValueError(f"openspiel:ismcts option uct_c={uct_c!r} is not allowed; "
                             "allowed values: a number >= 0")
        if final not in FINAL_POLICIES:
            raise ValueError(f"openspiel:ismcts option final={final!r} is not allowed; allowed values: "
                             f"{', '.join(map(repr, FINAL_POLICIES))}")
        self.simulations, self.uct_c, self.rollouts = simulations, float(uct_c), rollouts
        self.world_samples, self.final = world_samples, final
        self.name = f"openspiel:ismcts,simulations={simulations}"
        self._rng = np.random.default_rng(0)
        self._game = pyspiel.load_game(GAME_NAME, self.rules.to_dict())

    def start_game(self, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        if rules != self.rules:
            self.rules = rules
            self._game = pyspiel.load_game(GAME_NAME, rules.to_dict())
        self._rng = rng

    def act(self, observation: dict[str, Any]) -> int:
        return self.act_view(decode(observation["observation"], observation["action_mask"]))

    def act_view(self, view: PlayerView) -> int:
        """The bot's move in ``view`` (the seat's relative view: the seat is seat 0 of every world)."""
        legal = view.legal_actions
        if not legal:
            raise ValueError("OpenSpielISMCTSAgent.act_view: the view has no legal action "
                             "(is this seat to act?)")
        if len(legal) == 1:
            return int(legal[0])
        rng = self._rng
        rules = self.rules

        def world(_state: Any = None, _player: Any = None) -> SmearState:
            return state_at(self._game, world_from_view(view, sample_hidden(view, rng), rules, rng))

        evaluator = HandRolloutEvaluator(self.rollouts, view.scores[0] - view.scores[1], rng)
        bot = ismcts.ISMCTSBot(
            self._game, evaluator, self.uct_c, self.simulations,
            max_world_samples=self.world_samples,
            random_state=np.random.RandomState(int(rng.integers(2**31))),
            final_policy_type=FINAL_POLICIES[self.final], use_observation_string=True,
        )
        bot.set_resampler(world)
        action = int(bot.step(world()))
        if action not in legal:  # pragma: no cover - the worlds' legal actions are the view's
            raise RuntimeError(f"ISMCTS answered {action}, not one of the legal actions {list(legal)}")
        return action


def agent_from_spec(spec: str, rules: SmearRules, text: str, parse: Any) -> OpenSpielISMCTSAgent:
    """The agent of ``openspiel:<bot>[,key=value,...]`` (``text``: what follows ``openspiel:``; ``parse``: the
    registry's option parser)."""
    bot, _, opts = text.partition(",")
    if bot.strip() not in BOTS:
        raise ValueError(f"bad agent spec {spec!r}: unknown OpenSpiel bot {bot.strip()!r}; allowed values: "
                         f"{', '.join(BOTS)} (e.g. 'openspiel:ismcts,simulations=100')")
    options = parse(spec, opts) if opts.strip() else {}
    allowed = ("simulations", "uct_c", "rollouts", "world_samples", "final")
    for key in options:
        if key not in allowed:
            raise ValueError(f"bad agent spec {spec!r}: unknown option {key!r}; allowed options: "
                             f"{', '.join(allowed)}")
    return OpenSpielISMCTSAgent(rules, **options)
