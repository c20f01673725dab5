"""Smear as an OpenSpiel game: importing this module registers ``python_smear`` (``pip install
"smear-rl[openspiel]"``, tested with open_spiel 2.0.2).

    import pyspiel
    import smear_env.envs.integrations.openspiel  # noqa: F401  (registers python_smear)

    game = pyspiel.load_game("python_smear(target_score=11,kitty_size=1)")
    state = game.new_initial_state()

The game runs on the project's engine (:class:`smear_env.engine.game.Game`, :mod:`smear_env.core.rules`): this
module only maps OpenSpiel's game contract onto it. docs/openspiel.md is the user's page; in short:

Parameters
    Every rule option of :class:`~smear_env.core.config.SmearRules` (RULES.md) under its own name and default,
    validated by it (a bad value is a one-line ``RuleOptionError`` naming the allowed values), and R21's
    bounds of :class:`~smear_env.tables.table.TableOptions`: ``max_cycles`` (decisions, all seats; default
    10,000 as ``smear_v0``) and ``max_hands`` (deals, thrown-in hands included; 0 = no limit). A game cut off
    by either ends as the environment ends it: terminal, returns 0 to everyone (a truncated episode).
Chance
    The first dealer (R4: 4 outcomes, 1/4 each), then every deal card by card: 31 chance nodes, each
    outcome a card id with probability 1 / (cards left); the 32nd card is the one left. The 32 cards in
    chance order are the shuffled deck of :func:`smear_env.core.rules.deal_from` (6 to each seat in turn, then
    the stock in order, the kitty first) -- so ``Game(rules, seed)``'s ``rng.integers(4)`` and
    ``rng.permutation(32)`` as chance outcomes give ``smear_v0``'s game of that seed.
Actions
    The project's 72 action ids (:mod:`smear_env.core.actions`); ``action_to_string`` is ``action_name``
    (``bid 3``, ``trump H``, ``play TS``); chance outcomes read ``Dealer:2`` and ``Deal:TS``.
Returns
    The team result (R18, R19): +1 to both players of the winning team, -1 to the others; 0 to all in a
    game cut off by ``max_cycles`` / ``max_hands``. Terminal rewards only (zero-sum).
Observations
    :class:`SmearObserver` through OpenSpiel's observer API (``make_observation(game, IIGObservationType)``).
    The default observation tensor is the project's observation vector (:mod:`smear_env.engine.observation`,
    493 floats, observer-relative seats), its terms as the observer's named pieces. The information-state
    tensor (``perfect_recall=True``) adds ``play_order`` (24 x 32: the k-th card played in the hand), so that
    with the vector it holds everything the player has seen in the hand in order. Public-only observers leave
    out the private terms (``hand``, ``kitty``, ``discards``) and show ``trump`` only once it is public (R22);
    private-only ones hold just those three terms. Strings read the same information in absolute seats.
    Information states cover the current hand and the public state it started from (scores, dealer, the
    hand's number and the decisions before it): the rest of a game depends on earlier hands only through
    these.
Resampling
    :meth:`SmearState.resample_from_infostate` (what OpenSpiel's Python ``ISMCTSBot`` asks) draws the
    hidden cards with the project's deal sampler (:func:`smear_env.engine.infoset.sample_hidden`: uniform over
    the deals consistent with what the player has seen) and keeps everything public; the state it returns
    starts at the current position (its ``history()`` is empty), with the same information state for the
    player.
Clone and serialization
    ``clone`` copies the engine's state (:meth:`smear_env.engine.game.Game.copy`); ``serialize`` /
    ``pyspiel.deserialize_game_and_state`` work through OpenSpiel's own mechanism for Python games (a pickle
    of the state: deserialize only strings you made).
"""

from __future__ import annotations

import copy
from typing import Any

import numpy as np
import pyspiel

from ...core.actions import NUM_ACTIONS, action_name
from ...core.cards import CARD_NAMES, HAND_SIZE, NUM_CARDS, NUM_TRICKS, cards_of
from ...core.config import RuleOptionError, SmearRules
from ...core.rules import deal_from, suits_held
from ...engine.game import BIDDING, GAME_OVER, HAND_OVER, NUM_PLAYERS, STATE_FIELDS, Game, Phase
from ...engine.infoset import HiddenDeal, PlayerView, sample_hidden, view_of
from ...engine.observation import LAYOUT, OBS_SIZE, SLICES, encode_game
from ...tables.table import DEFAULT_MAX_CYCLES, TableOptions, cycles_exhausted, hands_exhausted

__all__ = [
    "GAME_NAME", "PLAY_ORDER_SHAPE", "PRIVATE_TERMS", "SmearGame", "SmearObserver", "SmearState",
    "game_parameters", "load", "state_at", "world_from_view",
]

GAME_NAME = "python_smear"
NUM_DEAL_CARDS = NUM_CARDS - 1
"""Chance nodes of one deal: the 32nd card is the one left."""
PRIVATE_TERMS = ("hand", "kitty", "discards")
"""Observation terms that are one player's private information (R23); ``trump`` is private to the bidder
until the first lead and public after it (R22)."""
NUM_PLAYS = NUM_PLAYERS * NUM_TRICKS
PLAY_ORDER_SHAPE = (NUM_PLAYS, NUM_CARDS)
"""The information-state tensor's ``play_order`` piece: row k one-hot the k-th card played in the hand."""
_TABLE_PARAMS = {"max_cycles": DEFAULT_MAX_CYCLES, "max_hands": 0}


def game_parameters() -> dict[str, Any]:
    """The game's parameters and their defaults: every rule option of ``SmearRules``, then ``max_cycles`` and
    ``max_hands`` (0: no limit)."""
    return {**SmearRules().to_dict(), **_TABLE_PARAMS}


_GAME_TYPE = pyspiel.GameType(
    short_name=GAME_NAME,
    long_name="Python Four Point Northeastern Wisconsin Smear (smear-rl)",
    dynamics=pyspiel.GameType.Dynamics.SEQUENTIAL,
    chance_mode=pyspiel.GameType.ChanceMode.EXPLICIT_STOCHASTIC,
    information=pyspiel.GameType.Information.IMPERFECT_INFORMATION,
    utility=pyspiel.GameType.Utility.ZERO_SUM,
    reward_model=pyspiel.GameType.RewardModel.TERMINAL,
    max_num_players=NUM_PLAYERS,
    min_num_players=NUM_PLAYERS,
    provides_information_state_string=True,
    provides_information_state_tensor=True,
    provides_observation_string=True,
    provides_observation_tensor=True,
    parameter_specification=game_parameters(),
)


def _split_params(params: dict[str, Any]) -> tuple[SmearRules, TableOptions]:
    """The rules and R21 bounds of OpenSpiel's parameter dict, validated by the project's own classes."""
    rule_names = SmearRules.option_names()
    rules = SmearRules.from_dict({k: v for k, v in params.items() if k in rule_names})
    max_hands = params.get("max_hands", 0)
    if isinstance(max_hands, bool) or not isinstance(max_hands, int) or max_hands < 0:
        raise RuleOptionError(f"option max_hands={max_hands!r} is not allowed; allowed values: 0 (no limit) "
                              "or an integer >= 1")
    opts = TableOptions(
        max_cycles=params.get("max_cycles", DEFAULT_MAX_CYCLES),
        max_hands=None if max_hands == 0 and type(max_hands) is int else max_hands,
    )
    return rules, opts


class SmearGame(pyspiel.Game):
    """``python_smear``: a game of Smear to ``target_score`` on the project's engine."""

    def __init__(self, params: dict[str, Any] | None = None) -> None:
        params = {**game_parameters(), **(params or {})}
        self.rules, self.options = _split_params(params)
        max_cycles = self.options.max_cycles
        # a hand takes at least 4 decisions (an all-pass redeal, R8)
        hands = -(-max_cycles // NUM_PLAYERS)
        if self.options.max_hands is not None:
            hands = min(hands, self.options.max_hands)
        self._max_chance = 1 + NUM_DEAL_CARDS * hands
        info = pyspiel.GameInfo(
            num_distinct_actions=NUM_ACTIONS,
            max_chance_outcomes=NUM_CARDS,
            num_players=NUM_PLAYERS,
            min_utility=-1.0,
            max_utility=1.0,
            utility_sum=0.0,
            max_game_length=max_cycles,
        )
        super().__init__(_GAME_TYPE, info, params)

    def new_initial_state(self) -> SmearState:
        return SmearState(self)

    def max_chance_nodes_in_history(self) -> int:
        """The first dealer and 31 cards of each deal; at most one deal per 4 decisions (``max_hands``)."""
        return self._max_chance

    def make_py_observer(self, iig_obs_type: Any = None, params: dict[str, Any] | None = None
                         ) -> SmearObserver:
        return SmearObserver(iig_obs_type or pyspiel.IIGObservationType(perfect_recall=False), params)


class _Core:
    """The Python side of a state, in one attribute: OpenSpiel's clone deep-copies a Python state's
    attributes, and this copies the engine's state with :meth:`Game.copy` instead."""

    __slots__ = ("cycles", "dealer", "dealt", "game", "hand_cycles", "options", "rules", "truncated")

    def __init__(self, rules: SmearRules, options: TableOptions) -> None:
        self.rules = rules
        self.options = options
        self.game: Game | None = None
        """The engine's game; None until the first deal is complete."""
        self.dealer: int | None = None
        """The dealer of the deal in progress (None: the first dealer is still to be drawn)."""
        self.dealt: list[int] | None = []
        """The cards dealt so far while a deal is in progress (chance nodes), else None."""
        self.cycles = 0
        """Decisions taken in the game (R21 ``max_cycles``)."""
        self.hand_cycles = 0
        """Decisions taken in the game before the current hand."""
        self.truncated = False

    def __deepcopy__(self, memo: dict[int, Any]) -> _Core:
        c = _Core.__new__(_Core)
        c.rules = self.rules
        c.options = self.options
        c.game = self.game.copy() if self.game is not None else None
        c.dealer = self.dealer
        c.dealt = self.dealt[:] if self.dealt is not None else None
        c.cycles = self.cycles
        c.hand_cycles = self.hand_cycles
        c.truncated = self.truncated
        return c

    # pickling (OpenSpiel's serialization of Python states): the engine's state by its field names
    def __getstate__(self) -> dict[str, Any]:
        g = self.game
        game = None if g is None else (
            {k: copy.deepcopy(getattr(g, k)) for k in STATE_FIELDS}, g.next_dealer
        )
        return {"rules": self.rules.to_dict(), "options": (self.options.max_cycles, self.options.max_hands),
                "game": game, "dealer": self.dealer, "dealt": self.dealt, "cycles": self.cycles,
                "hand_cycles": self.hand_cycles, "truncated": self.truncated}

    def __setstate__(self, s: dict[str, Any]) -> None:
        self.rules = SmearRules.from_dict(s["rules"])
        self.options = TableOptions(max_cycles=s["options"][0], max_hands=s["options"][1])
        self.game = None if s["game"] is None else Game.from_state(
            self.rules, s["game"][0], seed=0, next_dealer=s["game"][1])
        self.dealer, self.dealt = s["dealer"], s["dealt"]
        self.cycles, self.hand_cycles, self.truncated = s["cycles"], s["hand_cycles"], s["truncated"]

    @property
    def dealing(self) -> bool:
        return self.dealt is not None

    @property
    def over(self) -> bool:
        return self.truncated or (self.game is not None and self.game.phase == GAME_OVER)


class SmearState(pyspiel.State):
    """A state of ``python_smear``: the engine's game, the deal in progress and the R21 counters."""

    def __init__(self, game: SmearGame) -> None:
        super().__init__(game)
        self.core = _Core(game.rules, game.options)

    # ------------------------------------------------------------------ the contract
    def current_player(self) -> int:
        c = self.core
        if c.over:
            return pyspiel.PlayerId.TERMINAL
        if c.dealing:
            return pyspiel.PlayerId.CHANCE
        return c.game.to_act

    def _legal_actions(self, player: int) -> list[int]:
        return list(self.core.game.legal_actions())

    def chance_outcomes(self) -> list[tuple[int, float]]:
        c = self.core
        if c.dealer is None:
            return [(s, 1.0 / NUM_PLAYERS) for s in range(NUM_PLAYERS)]
        dealt = set(c.dealt)
        left = [card for card in range(NUM_CARDS) if card not in dealt]
        p = 1.0 / len(left)
        return [(card, p) for card in left]

    def _apply_action(self, action: int) -> None:
        c = self.core
        if c.dealing:
            self._deal(c, int(action))
            return
        game = c.game
        game.apply(action)  # IllegalActionError names the legal actions; the state is left unchanged
        c.cycles += 1
        if game.phase == GAME_OVER:
            return
        o = c.options
        if cycles_exhausted(c.cycles, o.max_cycles) or (
            game.phase == HAND_OVER and hands_exhausted(game.hand_number + 1, o.max_hands)
        ):
            c.truncated = True  # R21, as the table cuts a game off
        elif game.phase == HAND_OVER:
            c.dealer = game.next_dealer
            c.dealt = []

    def _deal(self, c: _Core, action: int) -> None:
        if c.dealer is None:
            if not 0 <= action < NUM_PLAYERS:
                raise ValueError(f"chance outcome {action} is not a dealer; allowed values: 0, 1, 2, 3")
            c.dealer = action
            return
        if not 0 <= action < NUM_CARDS or action in c.dealt:
            raise ValueError(f"chance outcome {action} is not a card left to deal; allowed values: "
                             f"{[a for a, _ in self.chance_outcomes()]}")
        c.dealt.append(action)
        if len(c.dealt) < NUM_DEAL_CARDS:
            return
        perm = c.dealt + [next(x for x in range(NUM_CARDS) if x not in set(c.dealt))]
        deal = deal_from(perm)
        if c.game is None:
            c.game = Game.from_deal(*deal, c.dealer, c.rules, seed=0)
            c.game.seed = None  # the deals come from chance nodes, never from the engine's generator
        else:
            c.game.start_next_hand(deal=deal)
        c.hand_cycles = c.cycles
        c.dealt = None

    def _action_to_string(self, player: int, action: int) -> str:
        if player == pyspiel.PlayerId.CHANCE:
            if self.core.dealer is None:
                return f"Dealer:{action}"
            return f"Deal:{CARD_NAMES[action]}" if 0 <= action < NUM_CARDS else f"Deal:{action}"
        return action_name(action)

    def is_terminal(self) -> bool:
        return self.core.over

    def returns(self) -> list[float]:
        c = self.core
        if c.truncated or c.game is None or c.game.winner is None:
            return [0.0] * NUM_PLAYERS
        w = c.game.winner
        return [1.0 if s & 1 == w else -1.0 for s in range(NUM_PLAYERS)]

    def __str__(self) -> str:
        c = self.core
        g = c.game
        head = f"cycles {c.cycles}"
        if c.truncated:
            head += " truncated (R21)"
        if c.dealing:
            return f"{head} | dealing: dealer {c.dealer} cards {' '.join(CARD_NAMES[x] for x in c.dealt)}" + (
                f" | scores {g.scores[0]}-{g.scores[1]}" if g is not None else "")
        hands = " ".join(f"{s}:{''.join(CARD_NAMES[x] for x in cards_of(g.hands[s]))}" for s in range(4))
        return f"{head} | {_public_text(g)} | hands {hands}"

    # ------------------------------------------------------------------ the engine, read-only
    @property
    def smear_game(self) -> Game | None:
        """The engine's game (None before the first deal is complete): read it, do not change it."""
        return self.core.game

    @property
    def truncated(self) -> bool:
        """The game was cut off by ``max_cycles`` or ``max_hands`` (R21)."""
        return self.core.truncated

    def to_record(self) -> dict[str, Any]:
        """The game so far as a ``smear-record/1`` object (:meth:`Game.to_record`)."""
        if self.core.game is None:
            raise ValueError("no record before the first deal is complete")
        return self.core.game.to_record(players=[f"player_{s}" for s in range(NUM_PLAYERS)],
                                        truncated=self.core.truncated)

    # ------------------------------------------------------------------ ISMCTS
    def resample_from_infostate(self, player_id: int, probability_sampler: Any) -> SmearState:
        """A state with the same information state for ``player_id``, its hidden cards drawn by the project's
        deal sampler (uniform over the deals consistent with what the player has seen); everything public
        is kept. ``probability_sampler()`` (OpenSpiel's: a float in [0, 1)) seeds the draw. The new state
        starts at this position (empty ``history()``)."""
        c = self.core
        if c.over or c.dealing:
            raise ValueError("resample_from_infostate: only at a decision (not at a chance node or the end)")
        rng = np.random.default_rng(int(float(probability_sampler()) * 2**53))
        game = c.game
        view = view_of(game, int(player_id))
        world = world_from_view(view, sample_hidden(view, rng), c.rules, rng, public=game)
        state = state_at(self.get_game(), world)
        state.core.cycles, state.core.hand_cycles = c.cycles, c.hand_cycles
        return state


def state_at(game: SmearGame, world: Game) -> SmearState:
    """A ``game`` state at the position of the engine's game ``world`` (taken, not copied), e.g. a world of
    :func:`world_from_view`; it starts there (empty ``history()``, no decisions counted)."""
    if world.phase >= HAND_OVER:
        raise ValueError(f"state_at: a position with a player to act, not phase {Phase(world.phase).name}")
    state = game.new_initial_state()
    c = state.core
    c.game = world
    c.dealer = world.dealer
    c.dealt = None
    return state


def _public_text(g: Game) -> str:
    bids = " ".join(f"{s}:{b if b else 'pass'}" for s, b in g.bids)
    over = g.phase != BIDDING and g.bidder is not None
    out = [f"hand {g.hand_number + 1} dealer {g.dealer} scores {g.scores[0]}-{g.scores[1]}",
           f"phase {Phase(g.phase).name}", f"bids {bids or '-'}"]
    if over:
        out.append(f"bidder {g.bidder} contract {g.contract}")
    if g.trump_public:
        out.append(f"trump {'CDHS'[g.trump]}")
    return " | ".join(out)


# ---------------------------------------------------------------------------- worlds
def world_from_view(view: PlayerView, deal: HiddenDeal, rules: SmearRules, rng: np.random.Generator,
                    public: Game | None = None) -> Game:
    """The engine's game at ``view``'s position with the hidden cards of ``deal`` (e.g.
    :func:`~smear_env.engine.infoset.sample_hidden` of the view): what a search plays a sampled world on.

    ``view`` may be absolute (:func:`~smear_env.engine.infoset.view_of`) or relative (the observer is seat 0
    of the world). Everything public comes from the view, and from ``public`` when given (the real game: the
    order of the bids and of the finished tricks, which a view does not hold); what nobody can tell comes
    from ``rng``: the order of the stock, which of another bidder's cards were the kitty, and a trump the
    observer has not seen yet. Without ``public`` the finished tricks are kept by count, not content (the
    engine needs only their number); such a world's record is not the game's. Its history of earlier hands
    is empty."""
    seat = view.seat
    bidding = view.phase == BIDDING
    if public is not None:
        bids = list(public.bids)
    else:
        order = [(view.dealer + 1 + i) % NUM_PLAYERS for i in range(NUM_PLAYERS)]
        bids = [(s, view.bids[s]) for s in order if view.bids[s] is not None]
    high = max((b for _, b in bids), default=0)
    bidder = view.bidder if not bidding else next((s for s, b in bids if b == high and b), None)
    k = rules.kitty_size
    hands = list(deal.hands)
    if bidding or bidder is None:
        pool = cards_of(deal.stock)
        rng.shuffle(pool)
        stock, kitty, discards = pool, [], []
    else:
        if bidder == seat:
            kitty = list(public.kitty) if public is not None else cards_of(view.kitty)
            discards = list(public.discards) if public is not None else cards_of(view.discards)
        else:
            discards = cards_of(deal.discards)
            had = cards_of(deal.hands[bidder] | deal.discards | view.played_by[bidder])
            kitty = sorted(int(x) for x in rng.choice(had, size=k, replace=False)) if k else []
        rest = cards_of(deal.stock)
        rng.shuffle(rest)
        stock = kitty + rest
    kitty_mask = sum(1 << x for x in kitty)
    disc_mask = sum(1 << x for x in discards)
    original = []
    for s in range(NUM_PLAYERS):
        m = hands[s] | view.played_by[s]
        if s == bidder and not bidding:
            m = (m | disc_mask) & ~kitty_mask
        original.append(cards_of(m))
    trump = view.trump if view.trump is not None else -1
    if trump < 0 and not bidding and bidder is not None and view.phase != Phase.TRUMP and (
        k or public is not None and public.trump >= 0
    ):
        # the bidder has named a trump the observer has not seen yet (R23): one of the suits it held
        held = suits_held(hands[bidder] | disc_mask | view.played_by[bidder])
        trump = int(rng.choice([s for s in range(4) if held >> s & 1]))
    trick = list(view.trick)
    leader = view.trick_leader if trick else (
        -1 if bidding else (public.trick_leader if public is not None else view.to_act))
    if public is not None:
        tricks = list(public.tricks)
    else:
        played = view.played_by[0] | view.played_by[1] | view.played_by[2] | view.played_by[3]
        done = (played.bit_count() - len(trick)) // NUM_PLAYERS
        tricks = [(-1, (), (), -1)] * done
    state = {
        "phase": int(view.phase), "scores": list(view.scores), "winner": None, "dealer": view.dealer,
        "hand_number": public.hand_number if public is not None else 0, "hands": hands,
        "deal": original, "stock": stock, "bids": bids, "high_bid": high, "bidder": bidder,
        "contract": view.contract if not bidding else None, "kitty": kitty if not bidding else [],
        "trump": trump, "discards": discards, "trick": trick,
        "trick_seats": [(leader + i) % NUM_PLAYERS for i in range(len(trick))], "trick_leader": leader,
        "tricks": tricks, "won": list(view.won_by_team), "played_by": list(view.played_by),
        "voids": list(view.voids), "to_act": view.to_act, "hand_thrown_in": False, "hand_result": None,
        "history": [],
    }
    world = Game.from_state(rules, state, seed=rng)
    world.seed = None
    return world


# ---------------------------------------------------------------------------- observer
def _view_text(g: Game, player: int, public: bool, private: bool) -> str:
    """The player's information as text (absolute seats): the public state, then its private cards."""
    out = [f"p{player}"]
    if public:
        played = " ".join(f"{s}:{''.join(CARD_NAMES[x] for x in cards_of(g.played_by[s]))}"
                          for s in range(4) if g.played_by[s])
        trick = " ".join(f"{s}:{CARD_NAMES[x]}" for s, x in zip(g.trick_seats, g.trick, strict=True))
        voids = " ".join(f"{s}:{''.join('CDHS'[u] for u in range(4) if g.voids[s] >> u & 1)}"
                         for s in range(4) if g.voids[s])
        out += [_public_text(g), f"to act {g.current_player}", f"played {played or '-'}",
                f"trick {trick or '-'}", f"voids {voids or '-'}",
                f"won {''.join(CARD_NAMES[x] for x in cards_of(g.won[0])) or '-'}/"
                f"{''.join(CARD_NAMES[x] for x in cards_of(g.won[1])) or '-'}",
                "sizes " + " ".join(str(h.bit_count()) for h in g.hands)]
    if private:
        out.append(f"hand {''.join(CARD_NAMES[x] for x in cards_of(g.hands[player])) or '-'}")
        if g.bidder == player and g.phase != BIDDING and g.kitty:
            out.append(f"kitty {''.join(CARD_NAMES[x] for x in g.kitty)} "
                       f"discards {''.join(CARD_NAMES[x] for x in g.discards) or '-'}")
        if g.trump_known_to(player) and not g.trump_public:
            out.append(f"trump {'CDHS'[g.trump]} (mine)")
    return " | ".join(out)


def _play_order(g: Game) -> list[tuple[int, int]]:
    """(seat, card) of every card played in the hand, in order."""
    out = [(s, x) for _, seats, cards, _ in g.tricks for s, x in zip(seats, cards, strict=True)]
    return out + list(zip(g.trick_seats, g.trick, strict=True))


class SmearObserver:
    """OpenSpiel's observer of ``python_smear`` (``make_observation`` / ``make_py_observer``).

    ``tensor``: the project's observation vector (:mod:`smear_env.engine.observation`) for the default type;
    ``dict``: its terms by name, shaped ``(blocks, width)`` (``(width,)`` for one block). See the module
    docstring for the other types. ``params`` must be empty."""

    def __init__(self, iig_obs_type: Any, params: dict[str, Any] | None) -> None:
        if params:
            raise ValueError(f"python_smear observers take no parameters; passed {sorted(params)}")
        private = iig_obs_type.private_info
        if private == pyspiel.PrivateInfoType.ALL_PLAYERS:
            raise ValueError("python_smear observers: private_info=ALL_PLAYERS is not supported; allowed "
                             "values: SINGLE_PLAYER, NONE")
        self.private = private == pyspiel.PrivateInfoType.SINGLE_PLAYER
        self.public = bool(iig_obs_type.public_info)
        self.perfect_recall = bool(iig_obs_type.perfect_recall)
        terms = [t for t in LAYOUT if (t.name in PRIVATE_TERMS and self.private)
                 or (t.name not in PRIVATE_TERMS and self.public)]
        pieces = [(t.name, SLICES[t.name], (t.blocks, t.width) if t.blocks > 1 else (t.width,))
                  for t in terms]
        if self.perfect_recall and self.public:
            pieces.append(("play_order", None, PLAY_ORDER_SHAPE))
        size = sum(int(np.prod(shape)) for _, _, shape in pieces)
        self.tensor = np.zeros(size, np.float32)
        self.dict: dict[str, np.ndarray] = {}
        self._copy: list[tuple[np.ndarray, slice]] = []
        i = 0
        for name, sl, shape in pieces:
            n = int(np.prod(shape))
            self.dict[name] = self.tensor[i:i + n].reshape(shape)
            if sl is not None:
                self._copy.append((self.tensor[i:i + n], sl))
            i += n
        self._full = [t.name for t in terms] == [t.name for t in LAYOUT] and size == OBS_SIZE

    def set_from(self, state: SmearState, player: int) -> None:
        """Write ``state`` as ``player`` sees it into ``tensor`` (and so ``dict``)."""
        c = state.core
        vec = _dealing_vector(c, player) if c.dealing else encode_game(c.game, player)
        if not c.dealing and self.public and not self.private and not c.game.trump_public:
            vec[SLICES["trump"]] = 0.0  # the bidder's own knowledge of trump is private until the lead
        if self._full:
            self.tensor[:] = vec
        else:
            for dst, sl in self._copy:
                dst[:] = vec[sl]
        if "play_order" in self.dict:
            po = self.dict["play_order"]
            po.fill(0.0)
            if not c.dealing:
                for k, (_, x) in enumerate(_play_order(c.game)):
                    po[k, x] = 1.0

    def string_from(self, state: SmearState, player: int) -> str:
        """``player``'s information as text; with perfect recall also the hand's plays in order and the
        public state the hand started from."""
        c = state.core
        g = c.game
        if c.dealing:
            mine = [x for i, x in enumerate(c.dealt) if i < NUM_PLAYERS * HAND_SIZE
                    and i // HAND_SIZE == player] if self.private else []
            out = f"p{player} dealing dealer {c.dealer} cards {len(c.dealt)}"
            if g is not None and self.public:
                out += f" scores {g.scores[0]}-{g.scores[1]}"
            return out + (f" | hand {''.join(CARD_NAMES[x] for x in mine) or '-'}" if self.private else "")
        text = _view_text(g, player, self.public, self.private)
        if self.perfect_recall and self.public:
            plays = " ".join(f"{s}:{CARD_NAMES[x]}" for s, x in _play_order(g))
            text += f" | plays {plays or '-'} | started at decision {c.hand_cycles}"
            if c.over:
                text += " | over" + (" (truncated)" if c.truncated else "")
        return text


def _dealing_vector(c: _Core, player: int) -> np.ndarray:
    """The observation layout while a deal is in progress: no phase bit; dealer, scores, target, kitty size,
    the player's cards so far and every seat's count so far."""
    vec = np.zeros(OBS_SIZE, np.float32)
    rules = c.rules
    if c.dealer is not None:
        vec[SLICES["dealer"].start + (c.dealer - player) % NUM_PLAYERS] = 1.0
    if c.game is not None:
        own = player & 1
        vec[SLICES["scores"]] = (c.game.scores[own], c.game.scores[1 - own])
    vec[SLICES["target_score"]] = rules.target_score
    vec[SLICES["kitty_size"].start + rules.kitty_size] = 1.0
    sizes = [0] * NUM_PLAYERS
    for i, x in enumerate(c.dealt[:NUM_PLAYERS * HAND_SIZE]):
        s = i // HAND_SIZE
        sizes[(s - player) % NUM_PLAYERS] += 1
        if s == player:
            vec[SLICES["hand"].start + x] = 1.0
    vec[SLICES["hand_sizes"]] = sizes
    return vec


def load(**params: Any) -> pyspiel.Game:
    """``pyspiel.load_game("python_smear", params)``, e.g. ``load(target_score=11, kitty_size=1)``."""
    return pyspiel.load_game(GAME_NAME, params)


pyspiel.register_game(_GAME_TYPE, SmearGame)
