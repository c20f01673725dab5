"""Card-location inference: where the cards a player cannot see are, learned from its observation.

A search agent that samples the hidden cards uniformly (:func:`smear_env.infoset.sample_hidden`) ignores what
the other players' bids, trump choice, discards and plays say about their hands. This module holds a model
of it, in the manner of the Skat programs' card-location inference (Solinas, Rebstock & Buro, AAAI 2019):

* :class:`InferenceModel`: a numpy MLP from a player's observation (the 493-float vector) to, for each of the
  32 cards, a distribution over the five places a card the observer cannot see may be (:data:`LOCATIONS`,
  relative to the observer: the left, partner's and right hands, the bidder's hidden discards, the stock).
  It is trained by ``python -m training.inference`` on games of the policies it is meant to read, with the
  true places as labels (:func:`true_locations`); files are safetensors with a JSON metadata block, never
  pickle.
* :func:`sample_inferred`: deals consistent with the observation (every constraint
  :func:`~smear_env.infoset.sample_hidden` applies: hand sizes, shown voids, R11 discards) drawn from the
  uniform distribution reweighted by the product of the model's per-card probabilities raised to ``alpha``
  (``q(deal) ∝ Π_c p(c, place(c))^alpha``; ``alpha = 0`` is the uniform sampler). Each deal starts from a
  uniform one and takes ``steps`` Metropolis moves that swap the places of two hidden cards, so the sizes
  and the constraints hold throughout; the moves of all deals run as array operations.

The model sees only the observation, so the sampler cannot learn a card the observer does not know
(``tests/test_inference.py`` changes the hidden cards and checks the deals are unchanged).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..cards import FULL_DECK, NUM_CARDS
from ..game import BIDDING
from ..infoset import HiddenDeal, PlayerView, hidden_discard_count, sample_hidden
from ..observation import OBS_SCALE, OBS_SIZE

__all__ = ["KIND", "LOCATIONS", "NUM_LOCATIONS", "InferenceModel", "constraint_table", "deal_of_places",
           "load_inference", "places_of_deal", "sample_inferred", "true_locations"]

LOCATIONS = ("left", "partner", "right", "discards", "stock")
"""The places of a card the observer cannot see, relative to it: the hands of relative seats 1, 2 and 3,
the bidder's discards (when another seat is the bidder), the stock (cards nobody holds or has seen)."""
NUM_LOCATIONS = len(LOCATIONS)
KNOWN = -1
"""Label of a card the observer knows (own hand, played, own kitty and discards)."""
KIND = "inference"
"""The ``kind`` of an inference model file's metadata (a smear-rl checkpoint file holding ``inference.``
tensors, not a policy)."""
_SUIT = np.arange(NUM_CARDS) >> 3  # card id -> suit (8 cards a suit)


def true_locations(hands: np.ndarray, played: np.ndarray, discards: np.ndarray, bidder: np.ndarray,
                   phase: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """(n, 32) int8 labels: each card's place relative to observer ``seats[i]`` (an index into
    :data:`LOCATIONS`), :data:`KNOWN` for the cards the observer knows. Inputs per row, absolute seats:
    ``hands`` (n, 4) and ``played`` (n, 4) card bitmasks, ``discards`` the bidder's discards, ``bidder``
    (-1 none), ``phase`` the engine's phase codes (a :class:`~smear_env.vector.VectorGame`'s arrays)."""
    n = seats.size
    out = np.full((n, NUM_CARDS), KNOWN, dtype=np.int8)
    bit = np.left_shift(np.int64(1), np.arange(NUM_CARDS, dtype=np.int64))
    rows = np.arange(n)
    all_played = np.bitwise_or.reduce(played, axis=1)
    held = np.bitwise_or.reduce(hands, axis=1)
    other_bidder = (bidder >= 0) & (bidder != seats) & (phase != int(BIDDING))
    hidden_disc = np.where(other_bidder, discards, 0)
    stock = FULL_DECK & ~(held | all_played | discards)
    for place, mask in ((4, stock), (3, hidden_disc)):
        out[(mask[:, None] & bit) != 0] = place
    for r in (1, 2, 3):
        h = hands[rows, (seats + r) & 3]
        out[(h[:, None] & bit) != 0] = r - 1
    return out


class InferenceModel:
    """A card-location model (see the module docstring): ``probs(obs)`` is (n, 32, 5)."""

    def __init__(self, weights: dict[str, np.ndarray], network: dict[str, Any],
                 where: str = "inference model") -> None:
        """``weights``: ``inference.<i>.weight`` / ``.bias`` per layer; ``network``: ``hidden_sizes``."""
        from .checkpoint import mlp_layers

        self.network = network
        self.where = where
        self.layers = mlp_layers(weights, "inference", network, OBS_SIZE, NUM_CARDS * NUM_LOCATIONS, where)

    def logits(self, obs: np.ndarray) -> np.ndarray:
        """(n, 32, 5) float32 logits of each card's place."""
        x = np.asarray(obs, dtype=np.float32) * OBS_SCALE
        for w, b in self.layers[:-1]:
            x = np.maximum(x @ w.T + b, 0.0)
        w, b = self.layers[-1]
        return (x @ w.T + b).reshape(-1, NUM_CARDS, NUM_LOCATIONS)

    def log_probs(self, obs: np.ndarray) -> np.ndarray:
        """(n, 32, 5) log-probabilities (log-softmax over the places)."""
        z = self.logits(obs)
        z = z - z.max(axis=2, keepdims=True)
        return z - np.log(np.exp(z).sum(axis=2, keepdims=True))


def load_inference(path: str | Path, rules: Any = None) -> InferenceModel:
    """An :class:`InferenceModel` from a file written by ``python -m training.inference``, checked like a
    policy checkpoint (environment version, observation layout, rules when given); a policy checkpoint or
    a foreign file is a :class:`~smear_env.agents.checkpoint.CheckpointError` that says so."""
    from .checkpoint import CheckpointError, read_model_file

    weights, meta = read_model_file(path, KIND, "a card-location inference model", rules)
    try:
        return InferenceModel(weights, meta["network"], where=f"inference model {str(path)!r}")
    except ValueError as e:
        raise CheckpointError(str(e)) from None


def constraint_table(view: PlayerView) -> np.ndarray:
    """(5, 4) bool: whether place ``j`` may hold a card of suit ``s`` in relative ``view`` (observer 0):
    not a suit the seat has shown void in; no trump among another bidder's discards (R11)."""
    ok = np.ones((NUM_LOCATIONS, 4), dtype=bool)
    for j in range(3):
        v = view.voids[j + 1]
        ok[j] = [not v >> s & 1 for s in range(4)]
    if view.trump is not None and hidden_discard_count(view) and view.bidder != 0:
        ok[3, view.trump] = False
    return ok


def places_of_deal(view: PlayerView, deal: HiddenDeal) -> np.ndarray:
    """(32,) int8: each card's place in ``deal`` for relative ``view``, :data:`KNOWN` for the known cards."""
    out = np.full(NUM_CARDS, KNOWN, dtype=np.int8)
    for place, mask in enumerate((deal.hands[1], deal.hands[2], deal.hands[3],
                                  deal.discards if view.bidder != 0 else 0, deal.stock)):
        for c in range(NUM_CARDS):
            if mask >> c & 1:
                out[c] = place
    return out


def deal_of_places(view: PlayerView, places: np.ndarray) -> HiddenDeal:
    """The :class:`~smear_env.infoset.HiddenDeal` of ``places`` (as :func:`places_of_deal` gives them)."""
    masks = [0] * NUM_LOCATIONS
    for c in np.flatnonzero(places >= 0).tolist():
        masks[int(places[c])] |= 1 << c
    discards = view.discards if view.bidder == 0 else masks[3]
    return HiddenDeal(hands=(view.hand, masks[0], masks[1], masks[2]), discards=discards, stock=masks[4])


def sample_inferred(views: Sequence[PlayerView], log_probs: np.ndarray, rngs: Sequence[np.random.Generator],
                    samples: int, alpha: float = 1.0, steps: int = 200) -> list[list[HiddenDeal]]:
    """``samples`` deals for each relative view (observer 0), drawn as the module docstring says:
    ``log_probs`` (n, 32, 5) are the model's for the views' observations; ``rngs[i]`` draws view ``i``'s
    deals. ``alpha = 0`` or ``steps = 0`` gives :func:`~smear_env.infoset.sample_hidden`'s deals."""
    n = len(views)
    if log_probs.shape != (n, NUM_CARDS, NUM_LOCATIONS):
        raise ValueError(f"sample_inferred: log_probs must be ({n}, {NUM_CARDS}, {NUM_LOCATIONS}), "
                         f"not {log_probs.shape}")
    starts = [[sample_hidden(v, rngs[i]) for _ in range(samples)] for i, v in enumerate(views)]
    if alpha == 0 or steps == 0 or n == 0:
        return starts
    r = n * samples
    places = np.stack([places_of_deal(views[i], d) for i in range(n) for d in starts[i]])  # (r, 32)
    ok = np.repeat(np.stack([constraint_table(v) for v in views]), samples, axis=0)  # (r, 5, 4)
    lp = np.repeat((alpha * log_probs).astype(np.float64), samples, axis=0)  # (r, 32, 5)
    hidden = places >= 0
    counts = hidden.sum(axis=1)
    order = np.argsort(~hidden, axis=1, kind="stable")  # hidden cards first
    # one uniform (steps, samples, 3) block per view from its own generator
    u = np.concatenate([rngs[i].random((samples, steps, 3)) for i in range(n)], axis=0)  # (r, steps, 3)
    rows = np.arange(r)
    for t in range(steps):
        a = order[rows, (u[:, t, 0] * counts).astype(np.int64)]
        b = order[rows, (u[:, t, 1] * counts).astype(np.int64)]
        pa, pb = places[rows, a], places[rows, b]
        valid = (pa != pb) & ok[rows, pb, _SUIT[a]] & ok[rows, pa, _SUIT[b]]
        delta = lp[rows, a, pb] + lp[rows, b, pa] - lp[rows, a, pa] - lp[rows, b, pb]
        take = valid & (np.log(u[:, t, 2] + 1e-300) < delta)
        places[rows[take], a[take]] = pb[take]
        places[rows[take], b[take]] = pa[take]
    return [[deal_of_places(views[i], places[i * samples + k]) for k in range(samples)] for i in range(n)]
