"""A perfect-information critic for PPO on the batched engine (``algorithm.oracle_critic``, ``vector_ppo``).

In a card game most of a hand's score is decided by the deal, which a player does not see: a value function
of the player's own observation can only predict the average over the deals it cannot tell apart, so the
advantage of a card carries the luck of the unseen cards as noise. PerfectDou ("perfect-training-imperfect-
execution", NeurIPS 2022) and asymmetric actor-critic methods train the critic on the full state instead;
the policy still sees only its observation. The critic is used only while training: it is never saved in a
checkpoint's policy and never plays.

Its input is the observation followed by the privileged features of :func:`privileged_features`, seats
relative to the deciding seat:

===========  =====  ====================================================================
index range  size   meaning
===========  =====  ====================================================================
0-31         32     the hand of the next seat to the left (seat + 1) now, one bit per card id
32-63        32     the partner's hand (seat + 2) now
64-95        32     the hand of the seat to the right (seat + 3) now
96-127       32     the kitty (R9: the first ``kitty_size`` stock cards), whoever holds it
128-159      32     the rest of the stock (never dealt to a player)
===========  =====  ====================================================================
"""

from __future__ import annotations

import numpy as np
import torch
from torch import nn

from smear_env.cards import NUM_CARDS
from smear_env.observation import HAND, OBS_SIZE, SUIT_OBS_SOURCE, suit_orders
from smear_env.vector import VectorGame

from .policy import SmearPolicy, _init, _mlp, obs_scale

PRIV_HANDS = 3 * NUM_CARDS
PRIV_KITTY = NUM_CARDS
PRIV_STOCK = NUM_CARDS
PRIV_SIZE = PRIV_HANDS + PRIV_KITTY + PRIV_STOCK
assert PRIV_SIZE == 160

_BITS = np.arange(NUM_CARDS, dtype=np.int64)


_CARD_SUIT_SOURCE = SUIT_OBS_SOURCE[:, HAND:HAND + NUM_CARDS] - HAND  # (24, 32): one card block renamed
PRIV_SUIT_SOURCE = np.concatenate([_CARD_SUIT_SOURCE + b for b in range(0, PRIV_SIZE, NUM_CARDS)], axis=1)
"""(24, PRIV_SIZE): per suit order p (:data:`~smear_env.observation.SUIT_PERMUTATIONS`), canonical
privileged column j is original column ``[p, j]``: every block is one bit per card id, renamed as the
observation's hand is."""


def _mask_bits(masks: np.ndarray) -> np.ndarray:
    """(k,) card bitmasks -> (k, 32) 0/1 float32."""
    return ((masks[:, None] >> _BITS) & 1).astype(np.float32)


def privileged_features(vg: VectorGame, lanes: np.ndarray, seats: np.ndarray) -> np.ndarray:
    """(k, PRIV_SIZE) float32: for each lane and its deciding seat, the other seats' current hands (relative
    to the seat), the kitty and the rest of the stock (the table in the module docstring)."""
    lanes = np.asarray(lanes, dtype=np.int64)
    seats = np.asarray(seats, dtype=np.int64)
    k = len(lanes)
    out = np.empty((k, PRIV_SIZE), dtype=np.float32)
    for r in range(1, 4):
        lo = (r - 1) * NUM_CARDS
        out[:, lo:lo + NUM_CARDS] = _mask_bits(vg.hands[lanes, (seats + r) % 4])
    kitty_size = vg.rules.kitty_size
    stock = np.left_shift(np.int64(1), vg.stock[lanes].astype(np.int64))
    kitty, rest = stock[:, :kitty_size], stock[:, kitty_size:]  # an empty part (no kitty) reduces to 0
    out[:, PRIV_HANDS:PRIV_HANDS + NUM_CARDS] = _mask_bits(np.bitwise_or.reduce(kitty, axis=1))
    out[:, PRIV_HANDS + NUM_CARDS:] = _mask_bits(np.bitwise_or.reduce(rest, axis=1))
    return out


class OracleCritic(nn.Module):
    """V(observation, privileged features): an MLP of ``hidden_sizes`` over the scaled observation and the
    privileged features; ``forward`` -> (B,) values. With ``suit_canonical`` both are first put in the
    observer's canonical suit order (as :class:`~training.policy.SmearPolicy` does with the observation)."""

    def __init__(self, hidden_sizes: list[int] | tuple[int, ...] = (256, 256), activation: str = "relu",
                 suit_canonical: bool = False) -> None:
        super().__init__()
        self.suit_canonical = bool(suit_canonical)
        self.register_buffer("obs_scale", torch.from_numpy(obs_scale()))
        self._obs_src = torch.from_numpy(SUIT_OBS_SOURCE)
        self._priv_src = torch.from_numpy(PRIV_SUIT_SOURCE)
        sizes = [OBS_SIZE + PRIV_SIZE, *[int(h) for h in hidden_sizes]]
        self.body = _mlp(sizes, activation)
        for m in self.body:
            if isinstance(m, nn.Linear):
                _init(m, float(np.sqrt(2)))
        self.head = nn.Linear(sizes[-1], 1)
        _init(self.head, 1.0)

    def forward(self, obs: torch.Tensor, priv: torch.Tensor) -> torch.Tensor:
        if self.suit_canonical:
            p = torch.from_numpy(suit_orders(obs.detach().numpy()))
            obs, priv = obs.gather(1, self._obs_src[p]), priv.gather(1, self._priv_src[p])
        return self.head(self.body(torch.cat([obs * self.obs_scale, priv], dim=1))).squeeze(-1)

    @torch.no_grad()
    def init_from_policy(self, policy: SmearPolicy) -> None:
        """Start as ``policy``'s value function (its value trunk and head; the same hidden sizes and
        activation), with zero weights on the privileged inputs: the critic then predicts exactly what the
        policy's value head does and learns from there what the hidden cards add."""
        body = policy.pi_body if policy.shared_trunk else policy.vf_body
        src = [m for m in body if isinstance(m, nn.Linear)]
        dst = [m for m in self.body if isinstance(m, nn.Linear)]
        if len(src) != len(dst) or policy.suit_canonical != self.suit_canonical:
            raise ValueError("the oracle critic and the policy differ in layers or suit_canonical")
        first_s, first_d = src[0], dst[0]
        first_d.weight.zero_()
        first_d.weight[:, :OBS_SIZE] = first_s.weight
        first_d.bias.copy_(first_s.bias)
        for s_, d_ in zip(src[1:], dst[1:], strict=True):
            d_.weight.copy_(s_.weight)
            d_.bias.copy_(s_.bias)
        self.head.weight.copy_(policy.vf_head.weight)
        self.head.bias.copy_(policy.vf_head.bias)

    @torch.no_grad()
    def values(self, obs: np.ndarray, priv: np.ndarray) -> np.ndarray:
        """Numpy (B,) values, no gradient."""
        return self.forward(torch.from_numpy(obs), torch.from_numpy(priv)).numpy()
