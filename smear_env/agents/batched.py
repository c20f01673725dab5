"""Batched agents: one call decides for many seats at once (the batched engine's and evaluator's form).

A :class:`BatchedAgent` sits in many *slots* at once (a slot is an opaque int chosen by the caller, e.g.
``lane * 4 + seat``). Each slot is told when its game starts (``start_game(slot, seat, rules, rng)``, the
same arguments the per-seat :class:`~smear_env.agents.base.Agent` gets) and ``act_batch(obs, mask, slots)``
returns one legal action per row. Row ``i``'s action equals what the per-seat agent of that slot returns for
``{"observation": obs[i], "action_mask": mask[i]}`` after the same history of calls (the same generator
draws in the same order), so a batched evaluation plays exactly the games of the per-seat one.

:func:`make_batched_agent` turns any spec that :func:`~smear_env.agents.registry.make_agent` accepts into a
batched agent:

* ``random`` -- :class:`BatchedRandomAgent` (vectorised; one draw from each row's slot generator, the draw
  of :meth:`RandomAgent.act <smear_env.agents.base.RandomAgent.act>`);
* ``heuristic`` -- :class:`~smear_env.agents.heuristic_batched.BatchedHeuristicAgent` (numpy array rules,
  exactly :class:`~smear_env.agents.heuristic.HeuristicAgent`'s choices);
* a checkpoint file or shipped name (``default``) -- :class:`BatchedCheckpointAgent` (one forward pass for
  all rows; :meth:`BatchedCheckpointAgent.from_weights` seats in-memory weights, e.g. a training snapshot);
* anything else (``pimc``, ``pimc:...``, ``cmd:...``) -- :class:`PerSlotAgent`, one per-seat agent per slot
  called row by row (``vectorised = False``).

:func:`can_vectorise` says which specs give a vectorised agent without building one.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..config import SmearRules
from .base import Agent, has_view_fast_path
from .slots import _check_start, _slot_int, _SlotTable, check_batch

__all__ = [
    "BatchedAgent",
    "BatchedCheckpointAgent",
    "BatchedRandomAgent",
    "PerSlotAgent",
    "can_vectorise",
    "check_batch",
    "make_batched_agent",
]


@runtime_checkable
class BatchedAgent(Protocol):
    """An agent that decides for many slots in one call (see the module docstring)."""

    name: str
    vectorised: bool
    """True: ``act_batch`` is one array computation; False: a per-slot fallback loop."""

    def start_game(self, slot: int, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        """A new game starts for ``slot`` in which this agent sits at absolute ``seat``; ``rng`` is that
        slot's generator for the game. The slot forgets what it knew of earlier games."""
        ...

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, slots: np.ndarray) -> np.ndarray:
        """(B,) int64 legal action ids for ``obs`` (B, OBS_SIZE), ``mask`` (B, 72), ``slots`` (B,)
        distinct."""
        ...

    def close(self) -> None:
        """Release processes/resources (idempotent)."""
        ...


# ----------------------------------------------------------------------------------------------- random
class BatchedRandomAgent:
    """Uniform over the legal actions, one generator per slot: row ``i`` draws
    ``legal[rng.integers(legal.size)]`` from its slot's generator, exactly :meth:`RandomAgent.act`."""

    vectorised = True

    def __init__(self, name: str = "random") -> None:
        self.name = name
        self._rngs = _SlotTable(name)

    def start_game(self, slot: int, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        _check_start(self.name, seat, rules, rng)
        self._rngs.set(slot, rng)

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, slots: np.ndarray) -> np.ndarray:
        obs, mask, slots = check_batch(self.name, obs, mask, slots)
        if slots.size == 0:
            return np.zeros(0, dtype=np.int64)
        get = self._rngs.values.get
        rngs = [get(s) for s in slots.tolist()]
        if None in rngs:
            self._rngs.get(int(slots[rngs.index(None)]))  # raises naming the slot
        cum = np.cumsum(mask, axis=1, dtype=np.int16)
        counts = cum[:, -1].tolist()
        r = np.array([g.integers(c) for g, c in zip(rngs, counts, strict=True)], dtype=np.int16)
        # the (r+1)-th legal action of each row: the first column where the running count exceeds r
        return np.argmax(cum > r[:, None], axis=1).astype(np.int64)

    def close(self) -> None:
        pass


# ----------------------------------------------------------------------------------------------- checkpoints
class BatchedCheckpointAgent:
    """A checkpoint's numpy policy for many rows: one forward pass for all rows, then per row the argmax over
    the legal actions (``greedy``) or a sample from the masked softmax, as
    :class:`~smear_env.agents.checkpoint.CheckpointAgent` does.

    A matrix product over B rows rounds differently from the per-seat agent's one-row product (the logits
    differ in the last bits, ~3e-5 at most on the shipped agents). So that the choice is still exactly the
    per-seat agent's, a greedy row whose two best legal logits are within ``tie_tolerance`` (absolute, plus
    1e-5 times the best logit's size; ~0.01% of rows of the shipped agents) is recomputed alone, as the
    per-seat agent computes it; ``rows_recomputed`` counts them. A sampling agent (``greedy=False``)
    recomputes every row alone (it is exact but not vectorised: ``vectorised`` is False).

    A NaN or infinite logit on a legal action is a ``ValueError`` naming the agent."""

    def __init__(self, policy: Any, name: str, meta: dict[str, Any] | None = None, greedy: bool = True,
                 temperature: float = 1.0, tie_tolerance: float = 1e-3) -> None:
        self.name = name
        self.policy = policy
        self.meta = meta if meta is not None else {}
        self.greedy = bool(greedy)
        self.temperature = float(temperature)
        if not self.greedy and not self.temperature > 0:
            raise ValueError(f"agent {name!r}: temperature must be > 0, not {temperature!r}")
        self.tie_tolerance = float(tie_tolerance)
        self.vectorised = self.greedy
        self.rows_recomputed = 0
        """Greedy rows recomputed alone because their two best legal logits were within the tolerance."""
        self._rngs = _SlotTable(name)

    @classmethod
    def from_checkpoint(cls, path: str, rules: SmearRules | None = None, name: str | None = None,
                        greedy: bool = True, temperature: float = 1.0) -> BatchedCheckpointAgent:
        """Load a checkpoint file (checked against ``rules`` as
        :func:`~smear_env.agents.checkpoint.load_agent` does)."""
        from .checkpoint import load_agent

        agent = load_agent(path, rules, greedy=greedy, temperature=temperature)
        return cls(agent.policy, name if name is not None else str(path), agent.meta, greedy=greedy,
                   temperature=temperature)

    @classmethod
    def from_weights(cls, weights: dict[str, np.ndarray], network: dict[str, Any], name: str = "snapshot",
                     greedy: bool = True, temperature: float = 1.0) -> BatchedCheckpointAgent:
        """A frozen policy from in-memory weights: ``weights`` are the policy tensors as numpy arrays
        without the ``policy.`` prefix (``obs_scale``, ``pi_body.<i>.weight``/``bias``,
        ``pi_head.weight``/``bias``) and ``network`` the checkpoint's ``network`` metadata
        (``hidden_sizes``, ``activation``, ``suit_canonical``), exactly what
        :class:`~smear_env.agents.checkpoint.NumpyPolicy` takes. The arrays are copied, so later training
        steps do not change the snapshot."""
        from .checkpoint import NumpyPolicy

        frozen = {k: np.array(v, copy=True) for k, v in weights.items()}
        policy = NumpyPolicy(frozen, network, where=f"snapshot {name!r}")
        return cls(policy, name, {"network": network}, greedy=greedy, temperature=temperature)

    def start_game(self, slot: int, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        _check_start(self.name, seat, rules, rng)
        self._rngs.set(slot, rng)

    def _row_logits(self, obs: np.ndarray, mask: np.ndarray, i: int) -> np.ndarray:
        """Row ``i``'s logits computed alone, as the per-seat agent computes them."""
        return self.policy.logits(obs[i][None], mask[i][None])[0]

    def _check_finite(self, logits: np.ndarray, mask: np.ndarray, slots: np.ndarray) -> None:
        bad = ~np.isfinite(logits) & mask
        if bad.any():
            row = int(np.flatnonzero(bad.any(axis=1))[0])
            raise ValueError(
                f"agent {self.name!r}: the policy gave a NaN or infinite logit for a legal action "
                f"(row {row}, slot {int(slots[row])}, action {int(np.flatnonzero(bad[row])[0])}); the "
                "checkpoint's weights or the observation are broken"
            )

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, slots: np.ndarray) -> np.ndarray:
        obs, mask, slots = check_batch(self.name, obs, mask, slots)
        if slots.size == 0:
            return np.zeros(0, dtype=np.int64)
        self._rngs.codes(slots)  # every slot has started a game
        if not self.greedy:
            return self._sample(obs, mask, slots)
        logits = self.policy.logits(obs, mask)
        self._check_finite(logits, mask, slots)
        masked = np.where(mask, logits, -np.inf)
        actions = np.argmax(masked, axis=1)
        rows = np.arange(actions.size)
        best = masked[rows, actions]
        masked[rows, actions] = -np.inf
        second = masked.max(axis=1)
        close = np.flatnonzero(best - second <= self.tie_tolerance + 1e-5 * np.abs(best))
        for i in close.tolist():
            row = self._row_logits(obs, mask, i)
            self._check_finite(row[None], mask[i][None], slots[i : i + 1])
            actions[i] = int(np.argmax(row))
        self.rows_recomputed += int(close.size)
        return actions.astype(np.int64)

    def _sample(self, obs: np.ndarray, mask: np.ndarray, slots: np.ndarray) -> np.ndarray:
        out = np.empty(slots.size, dtype=np.int64)
        for i, s in enumerate(slots.tolist()):
            logits = self._row_logits(obs, mask, i)
            m = mask[i]
            self._check_finite(logits[None], m[None], slots[i : i + 1])
            z = logits / self.temperature
            z = z - z[m].max()
            p = np.where(m, np.exp(z), 0.0)
            p /= p.sum()
            out[i] = int(self._rngs.get(s).choice(len(p), p=p))
        return out

    def close(self) -> None:
        pass


# ----------------------------------------------------------------------------------------------- fallback
class PerSlotAgent:
    """Fallback: wraps a factory ``() -> Agent``; one per-seat Agent per slot, created lazily on
    :meth:`start_game` (and kept for the slot's later games, which the agent's own ``start_game`` resets);
    :meth:`act_batch` loops over the rows calling that slot's ``act_view`` when it offers one (on the rows
    decoded with :func:`~smear_env.observation.decode_batch`) else ``act``. ``close`` closes every per-slot
    agent that has a ``close`` method."""

    vectorised = False

    def __init__(self, factory: Callable[[], Agent], name: str, spare: Agent | None = None) -> None:
        if not callable(factory):
            raise TypeError(f"PerSlotAgent needs a callable factory, not {type(factory).__name__}")
        self.name = name
        self._factory = factory
        self._spare = spare  # an agent already built (e.g. to check a spec), used for the first slot
        self._agents = _SlotTable(name)
        self._closed = False

    @property
    def agents(self) -> dict[int, Agent]:
        """The per-slot agents created so far, by slot."""
        return dict(self._agents.values)

    def start_game(self, slot: int, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        _check_start(self.name, seat, rules, rng)
        if self._closed:
            raise ValueError(f"agent {self.name!r} is closed")
        slot = _slot_int(self.name, slot)
        agent = self._agents.values.get(slot)
        if agent is None:
            if self._spare is not None:
                agent, self._spare = self._spare, None
            else:
                agent = self._factory()
            self._agents.set(slot, agent)
        agent.start_game(seat, rules, rng)

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, slots: np.ndarray) -> np.ndarray:
        obs, mask, slots = check_batch(self.name, obs, mask, slots)
        agents = [self._agents.get(s) for s in slots.tolist()]
        views = None
        if any(has_view_fast_path(a) for a in agents):
            from ..observation import decode_batch

            views = decode_batch(obs, mask)
        out = np.empty(len(agents), dtype=np.int64)
        for i, agent in enumerate(agents):
            if views is not None and has_view_fast_path(agent):
                out[i] = int(agent.act_view(views[i]))  # type: ignore[attr-defined]
            else:
                out[i] = int(agent.act({"observation": obs[i], "action_mask": mask[i].astype(np.int8)}))
        return out

    def close(self) -> None:
        if self._closed:
            return
        agents = list(self._agents.values.values())
        if self._spare is not None:
            agents.append(self._spare)
            self._spare = None
        self._closed = True
        errors: list[BaseException] = []
        for agent in agents:
            close = getattr(agent, "close", None)
            if callable(close):
                try:
                    close()
                except Exception as e:  # noqa: BLE001 - close the others first, then report
                    errors.append(e)
        if errors:
            raise errors[0]


# ----------------------------------------------------------------------------------------------- registry
def _kind(spec: str) -> str:
    """``"random"``, ``"heuristic"``, ``"checkpoint"`` or ``"per_slot"`` for a spec, resolved in the order of
    :func:`~smear_env.agents.registry.make_agent` (not validated: a bad spec is ``"per_slot"``, and
    :func:`make_batched_agent` then raises what ``make_agent`` raises)."""
    from .registry import is_checkpoint_spec
    from .shipped import SHIPPED_AGENTS

    text = spec.strip()
    base, _, opts = text.partition(":")
    if text.startswith(("cmd:", "cmd[")):
        return "per_slot"
    if base in ("random", "heuristic") and not opts:
        return base
    if base == "pimc":
        return "per_slot"
    if base in SHIPPED_AGENTS:
        return "per_slot" if opts else "checkpoint"
    if is_checkpoint_spec(text):
        return "checkpoint"
    return "per_slot"


def can_vectorise(spec: str) -> bool:
    """Whether :func:`make_batched_agent` ``(spec)`` gives a vectorised agent (no per-row Python agent loop):
    ``random``, ``heuristic``, a shipped agent's name or a checkpoint file. ``pimc``/``cmd:`` specs (and
    specs that are not valid at all) give False."""
    if not isinstance(spec, str):
        return False
    return _kind(spec) != "per_slot"


def make_batched_agent(spec: str, rules: SmearRules | None = None) -> BatchedAgent:
    """Any agent spec that :func:`~smear_env.agents.registry.make_agent` accepts, in batched form (see the
    module docstring), named by its spec. A bad spec raises what ``make_agent`` raises for it."""
    from .registry import make_agent
    from .shipped import SHIPPED_AGENTS, shipped_path

    if not isinstance(spec, str):
        make_agent(spec, rules)  # raises TypeError naming the valid specs
    rules = rules if rules is not None else SmearRules()
    text = spec.strip()
    kind = _kind(text)
    if kind == "random":
        return BatchedRandomAgent(name=text)
    if kind == "heuristic":
        from .heuristic_batched import BatchedHeuristicAgent

        return BatchedHeuristicAgent(rules, name=text)
    if kind == "checkpoint":
        if text in SHIPPED_AGENTS:
            path = str(shipped_path(text))
        elif os.path.isfile(text):
            path = text
        else:
            make_agent(text, rules)  # raises FileNotFoundError naming the spec
            raise AssertionError("unreachable")  # pragma: no cover
        return BatchedCheckpointAgent.from_checkpoint(path, rules, name=text)
    probe = make_agent(text, rules)  # validates the spec (options, program name) before any slot starts
    return PerSlotAgent(lambda: make_agent(text, rules), name=text, spare=probe)
