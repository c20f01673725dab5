"""The masked policy network: one MLP for every decision (bids, trump, discards, card play) plus a value MLP.

Layer layout mirrors Stable-Baselines3's ``MlpPolicy`` (``pi_body`` = ``mlp_extractor.policy_net``,
``pi_head`` = ``action_net``, ``vf_body`` = ``mlp_extractor.value_net``, ``vf_head`` = ``value_net``) so a
MaskablePPO policy converts to this one by renaming keys (:func:`from_sb3_state_dict`).

With ``shared_trunk=True`` the value head sits on the policy body (one trunk, about half the compute); the
file then has no ``vf_body`` weights, and a checkpoint plays the same way (only ``pi_body``/``pi_head`` act).

The observation's few raw (non 0/1) terms -- scores, target score, hand sizes -- are scaled by a fixed
buffer ``obs_scale`` (saved with the weights) before the first layer.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import torch
from torch import nn

from smear_env.core.actions import NUM_ACTIONS
from smear_env.engine.observation import OBS_SCALE, OBS_SIZE, SUIT_ACTION_TARGET, SUIT_OBS_SOURCE, suit_orders

ACTIVATIONS: dict[str, type[nn.Module]] = {"relu": nn.ReLU, "tanh": nn.Tanh}

SB3_KEY_MAP = (
    ("pi_body.", "mlp_extractor.policy_net."),
    ("vf_body.", "mlp_extractor.value_net."),
    ("pi_head.", "action_net."),
    ("vf_head.", "value_net."),
)


def obs_scale() -> np.ndarray:
    """Per-feature multiplier of the observation (1 for 0/1 features): a copy of
    :data:`smear_env.engine.observation.OBS_SCALE` (each term's ``scale`` in the layout)."""
    return OBS_SCALE.copy()


def _activation(name: str) -> nn.Module:
    if name == "gelu":
        return nn.GELU(approximate="tanh")  # the tanh form: the numpy agent computes exactly the same
    if name not in ACTIVATIONS:
        raise ValueError(f"activation {name!r} is not one of relu, tanh, gelu")
    return ACTIVATIONS[name]()


def _mlp(sizes: list[int], activation: str) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in zip(sizes, sizes[1:], strict=False):
        layers += [nn.Linear(a, b), _activation(activation)]
    return nn.Sequential(*layers)


def _init(layer: nn.Linear, gain: float) -> None:
    nn.init.orthogonal_(layer.weight, gain)
    nn.init.zeros_(layer.bias)


class SmearPolicy(nn.Module):
    """Actor-critic MLP; ``forward(obs, mask)`` -> (masked logits, value)."""

    def __init__(
        self,
        hidden_sizes: list[int] | tuple[int, ...] = (256, 256),
        activation: str = "relu",
        shared_trunk: bool = False,
        suit_canonical: bool = False,
    ) -> None:
        super().__init__()
        self.hidden_sizes = [int(h) for h in hidden_sizes]
        self.activation = activation
        self.shared_trunk = bool(shared_trunk)
        self.suit_canonical = bool(suit_canonical)
        sizes = [OBS_SIZE, *self.hidden_sizes]
        self.register_buffer("obs_scale", torch.from_numpy(obs_scale()))
        # lookup tables, not weights: kept out of the state dict
        self._obs_src = torch.from_numpy(SUIT_OBS_SOURCE)
        self._act_dst = torch.from_numpy(SUIT_ACTION_TARGET)
        self.pi_body = _mlp(sizes, activation)
        self.vf_body = nn.Sequential() if self.shared_trunk else _mlp(sizes, activation)
        self.pi_head = nn.Linear(sizes[-1], NUM_ACTIONS)
        self.vf_head = nn.Linear(sizes[-1], 1)
        for body in (self.pi_body, self.vf_body):
            for m in body:
                if isinstance(m, nn.Linear):
                    _init(m, float(np.sqrt(2)))
        _init(self.pi_head, 0.01)
        _init(self.vf_head, 1.0)

    def _inputs(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The scaled network input and, with ``suit_canonical``, each row's suit order (the observation's
        columns renamed into the canonical suit order, :func:`smear_env.engine.observation.suit_orders`)."""
        if not self.suit_canonical:
            return obs * self.obs_scale, None
        p = torch.from_numpy(suit_orders(obs.detach().numpy()))
        return obs.gather(1, self._obs_src[p]) * self.obs_scale, p

    def _to_actions(self, logits: torch.Tensor, p: torch.Tensor | None, mask: torch.Tensor) -> torch.Tensor:
        if p is not None:
            logits = logits.gather(1, self._act_dst[p])  # canonical action logits back to the real actions
        return logits.masked_fill(~mask, -1e9)

    def logits(self, obs: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        x, p = self._inputs(obs)
        return self._to_actions(self.pi_head(self.pi_body(x)), p, mask)

    def value(self, obs: torch.Tensor) -> torch.Tensor:
        body = self.pi_body if self.shared_trunk else self.vf_body
        return self.vf_head(body(self._inputs(obs)[0])).squeeze(-1)

    def forward(self, obs: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        x, p = self._inputs(obs)
        h = self.pi_body(x)
        value = self.vf_head(h if self.shared_trunk else self.vf_body(x)).squeeze(-1)
        return self._to_actions(self.pi_head(h), p, mask), value

    @torch.no_grad()
    def act(
        self, obs: np.ndarray, mask: np.ndarray, rng: np.random.Generator | None = None, greedy: bool = False
    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """Batched actions for numpy (B, OBS_SIZE) / (B, 72): (actions, log-probs, values).

        Sampling uses ``rng`` (Gumbel-max over the masked logits) so it is reproducible without torch's
        global generator."""
        o = torch.from_numpy(obs)
        m = torch.from_numpy(mask.astype(bool, copy=False))
        logits, value = self.forward(o, m)
        logp_all = torch.log_softmax(logits, dim=-1).numpy()
        if greedy or rng is None:
            a = logp_all.argmax(axis=1)
        else:
            g = rng.gumbel(size=logp_all.shape).astype(np.float32)
            a = np.where(mask.astype(bool), logp_all + g, -np.inf).argmax(axis=1)
        return a, logp_all[np.arange(len(a)), a], value.numpy()

    def spec(self) -> dict[str, Any]:
        spec: dict[str, Any] = {"hidden_sizes": self.hidden_sizes, "activation": self.activation}
        if self.suit_canonical:
            spec["suit_canonical"] = True
        return spec


class ForeignModelPolicy:
    """Mixin for trainers whose network lives in another library's model (SB3, RLlib): the
    :class:`SmearPolicy` view of it for evaluation and for the imitation warm start. A subclass has
    ``cfg`` (its TrainConfig) and defines :meth:`policy_state`; its ``after_warm_start`` copies
    ``self._warm`` back."""

    cfg: Any
    _warm: SmearPolicy | None = None

    def policy_state(self) -> dict[str, torch.Tensor]:
        raise NotImplementedError

    def eval_policy(self) -> SmearPolicy:
        pol = SmearPolicy(self.cfg.network.hidden_sizes, self.cfg.network.activation)
        pol.load_state_dict(self.policy_state())
        return pol.eval()

    def warm_start_policy(self) -> SmearPolicy:
        self._warm = self.eval_policy().train()
        return self._warm


def to_sb3_state_dict(sd: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    out = {}
    for k, v in sd.items():
        if k == "obs_scale":
            continue
        for ours, theirs in SB3_KEY_MAP:
            if k.startswith(ours):
                k = theirs + k[len(ours):]
                break
        out[k] = v
    return out


def from_sb3_state_dict(sd: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
    """SB3 MlpPolicy keys -> SmearPolicy keys (``obs_scale`` added: the SB3 env wrapper scales the
    observation with the same vector)."""
    out = {"obs_scale": torch.from_numpy(obs_scale())}
    for k, v in sd.items():
        for ours, theirs in SB3_KEY_MAP:
            if k.startswith(theirs):
                out[ours + k[len(theirs):]] = v
                break
    return out
