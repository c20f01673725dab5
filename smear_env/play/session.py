"""One game at a table where some seats are people (or any outside caller) and the others are agents.

:class:`Session` is what ``smear-play`` and ``smear-serve`` drive: the game loop is the table layer's
(:class:`smear_env.tables.table.Table` with hand episodes: a scored hand ends an episode, so the session stops
there for the front end to show the result, and :meth:`Session.next_hand` starts the next episode of the
same game; a thrown-in hand, R8, is redealt at once). The session asks agents for their decisions
(:func:`smear_env.tables.table.agent_action`), waits at a person's decision, and gives every seat only its own
view (:func:`smear_env.engine.seat_view.seat_view_of`) and the public form of each action
(:func:`smear_env.engine.seat_view.public_action`).

Randomness: with ``seed=None`` the deals and every agent's generator come from fresh OS entropy,
independently. With a seed, the deals come from ``SeedSequence([seed, 1])`` and agent ``s``'s generator
from a BLAKE2 hash of ``(seed, s)``: an agent's generator carries no state from which the deals follow.
"""

from __future__ import annotations

import hashlib
import secrets
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..agents.base import Agent
from ..agents.protocol import close_agents
from ..core.config import SmearRules
from ..engine.game import GAME_OVER, NUM_PLAYERS, Game, IllegalActionError
from ..engine.seat_view import public_action, seat_view_of
from ..tables.table import NEXT_GAME, NEXT_HAND, Table, TableOptions, agent_action

DEFAULT_MAX_HANDS = 200
_TAG_DEAL = 1
Event = tuple[int, int, int | None, bool]
"""(actor seat, action id, winner of the trick this action completed or None, the action threw the hand
in: all passed, R8)."""


def agent_seed(seed: int, seat: int) -> int:
    """The seed of seat ``seat``'s agent generator in a game seeded ``seed`` (a hash: not invertible into
    the deal seed short of guessing it)."""
    digest = hashlib.blake2b(f"smear-play agent {seed} {seat}".encode(), digest_size=16).digest()
    return int.from_bytes(digest, "little")


class Session:
    """A game with people at the seats whose agent is ``None`` and agents at the others.

    Drive it with :meth:`advance` (agents play until a person must act or the hand is over),
    :meth:`act` (a person's action, then :meth:`advance`) and :meth:`next_hand`. Each of them returns the
    *events* since the call (:data:`Event` tuples); :meth:`events_for` turns them into what one seat may
    see.
    """

    def __init__(
        self,
        agents: Sequence[Agent | None],
        rules: SmearRules | None = None,
        seed: int | None = None,
        max_hands: int = DEFAULT_MAX_HANDS,
        names: Sequence[str] | None = None,
    ) -> None:
        if len(agents) != NUM_PLAYERS:
            raise ValueError(f"a table has {NUM_PLAYERS} seats, got {len(agents)} agents")
        if isinstance(max_hands, bool) or not isinstance(max_hands, int) or max_hands < 1:
            raise ValueError(f"max_hands must be an integer >= 1, not {max_hands!r}")
        if seed is not None and (isinstance(seed, bool) or not isinstance(seed, int) or seed < 0):
            raise ValueError(f"seed must be a non-negative integer or None, not {seed!r}")
        self.rules = rules if rules is not None else SmearRules()
        self.agents = list(agents)
        self.humans = [s for s in range(NUM_PLAYERS) if agents[s] is None]
        self.names = list(names) if names is not None else [
            "human" if a is None else a.name for a in agents
        ]
        self.seed = seed
        self.max_hands = max_hands
        if seed is None:
            deal_rng = np.random.default_rng(secrets.randbits(128))
            agent_seeds = [secrets.randbits(128) for _ in range(NUM_PLAYERS)]
        else:
            deal_rng = np.random.default_rng(np.random.SeedSequence([seed, _TAG_DEAL]))
            agent_seeds = [agent_seed(seed, s) for s in range(NUM_PLAYERS)]
        self.table = Table(self.rules, TableOptions(episode="hand", reward="score", max_cycles=None,
                                                    max_hands=max_hands))
        self.table.new_game(deal_rng)
        self.error: str | None = None
        """Set when an agent failed (a bot crashed, hung, answered garbage): the game is stopped."""
        self.ended: str | None = None
        """Set by :meth:`end` (the people at the table stopped the game): who ended it, in words."""
        for s, a in enumerate(self.agents):
            if a is not None and self.error is None:
                try:
                    a.start_game(s, self.rules, np.random.default_rng(agent_seeds[s]))
                except Exception as e:  # e.g. a bot that cannot start: the game is stopped, by name
                    self.error = str(e) if a.name in str(e) else f"agent {a.name!r} in seat {s}: {e}"

    # ------------------------------------------------------------------ state
    @property
    def game(self) -> Game:
        return self.table.require_game()

    @property
    def truncated(self) -> bool:
        """The game was cut off after ``max_hands`` hands (R21)."""
        t = self.table
        return t.truncated or (t.done and t.next == NEXT_GAME and self.game.phase != GAME_OVER)

    @property
    def over(self) -> bool:
        """The game is over: won, truncated after ``max_hands`` hands (R21), ended by the people at the table
        (:meth:`end`), or stopped by a failed agent."""
        stopped = self.error is not None or self.ended is not None
        return self.game.phase == GAME_OVER or self.truncated or stopped

    @property
    def hand_over(self) -> bool:
        """A scored hand has ended and the game goes on: :meth:`next_hand` deals the next one."""
        return self.table.done and self.table.next == NEXT_HAND and not self.over

    def to_act(self) -> int | None:
        """The person's seat that must act now, else None."""
        s = self.game.current_player
        return s if s is not None and s in self.humans and not self.over else None

    def view(self, seat: int) -> dict[str, Any]:
        """``seat``'s view (smear-seat-view/1)."""
        return seat_view_of(self.game, seat)

    def record(self) -> dict[str, Any]:
        """The game as smear-record/1 (every card: give it to a person only once the game is over)."""
        stopped = self.error is not None or self.ended is not None
        rec = self.game.to_record(players=self.names, truncated=self.truncated or stopped)
        rec["seed"] = self.seed
        return rec

    def events_for(self, seat: int, events: Sequence[Event]) -> list[dict[str, Any]]:
        """The public form of ``events`` for ``seat`` (:func:`public_action`); a card play that completes a
        trick also names the trick winner (``"trick_winner"``, public, R12)."""
        out = []
        for actor, action, winner, thrown_in in events:
            e = public_action(seat, actor, action)
            if winner is not None:
                e["trick_winner"] = winner
            if thrown_in:
                e["thrown_in"] = True
            out.append(e)
        return out

    # ------------------------------------------------------------------ transitions
    def _apply(self, seat: int, action: int, events: list[Event]) -> None:
        game = self.game
        n_tricks = len(game.tricks)
        step = self.table.apply(action)  # checks legality: an illegal action changes nothing
        winner = game.tricks[-1][3] if len(game.tricks) > n_tricks else None
        events.append((seat, action, winner, step.hand is not None and step.hand.thrown_in))

    def advance(self) -> list[Event]:
        """Let the agents act until a person must act, the hand is over, or the game is over. A failing agent
        stops the game (``error`` says why) instead of raising."""
        events: list[Event] = []
        while not self.over and not self.table.done:
            seat = self.game.to_act
            agent = self.agents[seat]
            if agent is None:
                break
            try:
                self._apply(seat, agent_action(agent, self.game, seat), events)
            except Exception as e:  # a bot or agent failure (or an illegal move) ends this game, by name
                self.error = str(e) if agent.name in str(e) else f"agent {agent.name!r} in seat {seat}: {e}"
                break
        return events

    def act(self, seat: int, action: int) -> list[Event]:
        """A person's action at ``seat``: checked (an illegal or out-of-turn action raises
        :class:`IllegalActionError` naming the legal ones and changes nothing), applied, then the agents
        play on (:meth:`advance`)."""
        if self.over:
            raise IllegalActionError("the game is over")
        if self.table.done:
            raise IllegalActionError("the hand is over: start the next hand first")
        if seat not in self.humans:
            raise IllegalActionError(f"seat {seat} is played by an agent")
        if self.game.to_act != seat:
            raise IllegalActionError(f"it is seat {self.game.to_act}'s turn, not seat {seat}'s")
        events: list[Event] = []
        self._apply(seat, action, events)  # Game.apply checks legality, names the legal actions
        return events + self.advance()

    def next_hand(self) -> list[Event]:
        """Deal the next hand (after a hand is over) and let the agents play to the next person's decision.
        After ``max_hands`` hands the game is truncated (R21) instead."""
        if self.over:
            raise IllegalActionError("the game is over")
        if not self.hand_over:
            raise IllegalActionError("the hand is still being played")
        self.table.next_episode()
        return self.advance()

    def end(self, by: str) -> None:
        """End the game now (the people at the table agreed to stop); ``by`` says who, in words. No effect
        on a game that is already over."""
        if not self.over:
            self.ended = by

    def take_over(self, seat: int, agent: Agent, rng: np.random.Generator) -> list[Event]:
        """An agent takes the person's seat ``seat`` (the person left): it starts the game at that seat
        with ``rng`` and, when it is to act, plays on (:meth:`advance`). ``IllegalActionError`` when the seat
        is not a person's."""
        if seat not in self.humans:
            raise IllegalActionError(f"seat {seat} is not played by a person")
        agent.start_game(seat, self.rules, rng)
        self.agents[seat] = agent
        self.humans.remove(seat)
        if self.over or self.table.done:
            return []
        return self.advance()

    def close(self) -> None:
        """Close agents that hold resources (bot processes): the bots all at once, in one grace period."""

        close_agents([a for a in self.agents if a is not None])


__all__ = ["DEFAULT_MAX_HANDS", "Event", "Session", "agent_seed"]
