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
* ``rollout:...`` -- the rollout search (:func:`~smear_env.agents.rollout.rollout_from_spec`), and
  ``split:bid=<spec>,play=<spec>`` -- one agent bids and names trump, another discards and plays
  (:func:`~smear_env.agents.composite.composite_from_spec`): batched agents by nature, which
  :func:`~smear_env.agents.registry.make_agent` seats per seat through :class:`OneSeatAgent`;
* anything else (``pimc``, ``pimc:...``, ``cmd:...``) -- :class:`PerSlotAgent`, one per-seat agent per slot
  called row by row (``vectorised = False``).

:func:`can_vectorise` says which specs give a vectorised agent without building one.

Two optional members speed up the batched table and the evaluator without changing any action:

* ``act_packed(words, legal, base, slots)`` -- ``act_batch`` on the packed form the engine holds anyway:
  ``words`` (B, 8) the observations' 0/1 features as bits
  (:meth:`~smear_env.engine.vector.VectorGame.observe_words`) and the legal actions as ``base + i`` for the
  set bits ``i`` of ``legal`` (B,). :class:`~smear_env.tables.batched_table.BatchedTable` calls it instead of
  ``act_batch`` when an agent has it (the heuristic and random do), so no float rows are built for them;
* ``draws`` -- False for an agent that never draws from the generators given to ``start_game`` (the
  heuristic, a greedy checkpoint); the duplicate evaluator then hands those seats one shared generator
  instead of building one per seat and game.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol, runtime_checkable

import numpy as np

from ..core.config import SmearRules
from ..engine.decoding import decode_batch
from ..engine.observation import SUIT_ACTION_TARGET, SUIT_OBS_SOURCE, suit_orders
from .base import Agent, has_view_fast_path
from .checkpoint import NumpyPolicy, check_finite_logits, load_agent
from .slots import SlotTable, check_batch, check_slot, check_start, no_legal_error

__all__ = [
    "BatchedAgent",
    "BatchedCheckpointAgent",
    "BatchedRandomAgent",
    "OneSeatAgent",
    "PerSlotAgent",
    "check_batch",
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
# bit tables: set bits of a byte; the j-th set bit of a byte (0 where there is none)
_POP8 = np.array([b.bit_count() for b in range(256)], dtype=np.int64)
_SELECT8 = np.array([([i for i in range(8) if b >> i & 1] + [0] * 8)[:8] for b in range(256)], dtype=np.int64)


def select_bit(bits: np.ndarray, r: np.ndarray) -> np.ndarray:
    """(B,) the index of the ``r``-th (0-based) set bit of each 32-bit mask ``bits`` (``r`` < its
    popcount)."""
    c1 = _POP8[bits & 255]
    c2 = c1 + _POP8[(bits >> 8) & 255]
    c3 = c2 + _POP8[(bits >> 16) & 255]
    byte = (r >= c1).astype(np.int64) + (r >= c2) + (r >= c3)
    before = np.where(byte == 0, 0, np.where(byte == 1, c1, np.where(byte == 2, c2, c3)))
    shift = byte << 3
    return shift + _SELECT8[(bits >> shift) & 255, r - before]


class BatchedRandomAgent:
    """Uniform over the legal actions, one generator per slot: row ``i`` draws
    ``legal[rng.integers(legal.size)]`` from its slot's generator, exactly :meth:`RandomAgent.act`.

    The draw is computed here as ``Generator.integers`` computes it (Lemire's bounded integer from the bit
    generator's ``next_uint32``, with its rejection step), calling ``next_uint32`` through the bit
    generator's ``ctypes`` interface (~0.2 us instead of ~1.2 us a call): the same numbers and the same
    generator state after every call. A row with one legal action calls nothing (``integers(1)`` draws
    nothing). The rows' first draws are taken in row order, then any rejected draw is redrawn (about once
    in 10^8 draws; only a generator shared by two rows of one batch could see another order)."""

    vectorised = True
    draws = True
    """It draws from its slots' generators."""

    def __init__(self, name: str = "random") -> None:
        self.name = name
        self._rngs = SlotTable(name)
        # slot -> (next_uint32, its argument) of the slot generator's bit generator
        self._draw: dict[int, tuple[Callable[[Any], int], Any]] = {}

    def start_game(self, slot: int, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        check_start(self.name, seat, rules, rng)
        self._rngs.set(slot, rng)  # keeps the generator (and the state the ctypes pointer names) alive
        try:
            c = rng.bit_generator.ctypes
            self._draw[int(slot)] = (c.next_uint32, c.state)
        except Exception:  # noqa: BLE001 - no ctypes: integers(2**32, uint32) is one next_uint32 too
            self._draw[int(slot)] = (lambda _s, g=rng: int(g.integers(1 << 32, dtype=np.uint32)), None)

    def _draws(self, slots: np.ndarray, counts: np.ndarray) -> np.ndarray:
        """(B,) ``rng.integers(count)`` of each row's slot generator, in row order (0 where count is 1)."""
        self._rngs.codes(slots)  # every slot has started a game (ValueError naming the first that has not)
        r = np.zeros(slots.size, dtype=np.int64)
        multi = np.flatnonzero(counts > 1)
        if not multi.size:
            return r
        draw = self._draw
        fns = [draw[s] for s in slots[multi].tolist()]
        c = counts[multi].astype(np.uint64)
        m = np.array([f(a) for f, a in fns], dtype=np.uint64) * c
        threshold = (np.uint64(1 << 32) - c) % c  # (2**32 - c) % c < c: numpy's rejection bound
        low = np.uint64(0xFFFFFFFF)
        rejected = np.flatnonzero((m & low) < threshold)
        while rejected.size:
            for i in rejected.tolist():
                f, a = fns[i]
                m[i] = np.uint64(f(a)) * c[i]
            rejected = rejected[(m[rejected] & low) < threshold[rejected]]
        r[multi] = (m >> np.uint64(32)).astype(np.int64)
        return r

    def act_batch(self, obs: np.ndarray, mask: np.ndarray, slots: np.ndarray) -> np.ndarray:
        obs, mask, slots = check_batch(self.name, obs, mask, slots)
        if slots.size == 0:
            return np.zeros(0, dtype=np.int64)
        cum = np.cumsum(mask, axis=1, dtype=np.int16)
        r = self._draws(slots, cum[:, -1].astype(np.int64))
        # the (r+1)-th legal action of each row: the first column where the running count exceeds r
        return np.argmax(cum > r[:, None], axis=1).astype(np.int64)

    def act_packed(self, words: np.ndarray, legal: np.ndarray, base: np.ndarray, slots: np.ndarray
                   ) -> np.ndarray:
        """:meth:`act_batch` on the packed form (see
        :meth:`~smear_env.agents.heuristic_batched.BatchedHeuristicAgent.act_packed`; ``words`` unused):
        ``base`` + the ``r``-th set bit of ``legal``, ``r`` the slot generator's draw."""
        slots = np.asarray(slots, dtype=np.int64)
        if slots.size == 0:
            return np.zeros(0, dtype=np.int64)
        legal = np.asarray(legal, dtype=np.int64)
        counts = np.bitwise_count(legal).astype(np.int64)
        if (counts == 0).any():
            raise no_legal_error(self.name, np.flatnonzero(counts == 0), slots)
        return np.asarray(base, dtype=np.int64) + select_bit(legal, self._draws(slots, counts))

    def close(self) -> None:
        pass


# ----------------------------------------------------------------------------------------------- checkpoints
def _suit_weights(pol: Any, q: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Suit order ``q``'s first-layer weights and head of a ``suit_canonical`` policy, permuted so that the
    network reads rows in their original column order and answers in the original action order: ``x @
    W1.T`` equals the canonical ``(x[:, SUIT_OBS_SOURCE[q]] * scale) @ W1.T`` (the observation scale folded
    in), and the head's rows follow ``SUIT_ACTION_TARGET[q]``. Made once per policy and order."""

    cache = pol.__dict__.setdefault("_suit_weight_cache", {})
    got = cache.get(q)
    if got is None:
        w, b = pol.head
        head = np.ascontiguousarray(w[SUIT_ACTION_TARGET[q]])
        w1 = pol.layers[0][0] if pol.layers else head  # no hidden layer: the head reads the rows
        first = np.empty_like(w1)
        first[:, SUIT_OBS_SOURCE[q]] = w1 * pol.scale
        got = cache[q] = (first, head, b[SUIT_ACTION_TARGET[q]])
    return got


def batch_forward(pol: Any, obs: np.ndarray) -> np.ndarray:
    """Raw outputs (B, 72) float32 of a :class:`~smear_env.agents.checkpoint.NumpyPolicy` network for all
    rows, in the original action order (no mask, no corrections). With ``suit_canonical`` the rows are
    grouped by suit order and each group goes through its order's permuted first layer and head
    (:func:`_suit_weights`: no column gather of the rows, no (B, 493) index array); the hidden layers between
    are one matrix product over all rows. The rows are returned in their input order. The sums run in
    another order than the one-row :meth:`~smear_env.agents.checkpoint.NumpyPolicy.logits`, so outputs
    differ from it in the last bits (the batched players recompute near-ties alone). Non-finite outputs
    raise :class:`~smear_env.agents.checkpoint.CheckpointError` as ``pol.logits`` does."""

    x = obs if obs.dtype == np.float32 else obs.astype(np.float32)
    with np.errstate(over="ignore", invalid="ignore"):  # overflow is checked below, once, by value
        if not pol.suit_canonical:
            logits = pol.raw_forward(x)
            check_finite_logits(logits, pol.where)
            return logits
        p = suit_orders(x)
        order = np.argsort(p, kind="stable")
        ps = p[order]
        edges = [0, *(np.flatnonzero(ps[1:] != ps[:-1]) + 1).tolist(), ps.size]
        groups = [(edges[i], edges[i + 1], int(ps[edges[i]])) for i in range(len(edges) - 1)]
        xs = x[order] if len(groups) > 1 else x
        logits = np.empty((x.shape[0], pol.head[0].shape[0]), dtype=np.float32)
        if not pol.layers:  # no hidden layer: the head is the first layer
            for a, b, q in groups:
                first, _, hb = _suit_weights(pol, q)
                logits[a:b] = xs[a:b] @ first.T + hb
        else:
            b1 = pol.layers[0][1]
            h = np.empty((x.shape[0], b1.shape[0]), dtype=np.float32)
            for a, b, q in groups:
                h[a:b] = xs[a:b] @ _suit_weights(pol, q)[0].T
            h = pol.act_fn(h + b1)
            for w, b in pol.layers[1:]:
                h = pol.act_fn(h @ w.T + b)
            for a, b, q in groups:
                _, hw, hb = _suit_weights(pol, q)
                logits[a:b] = h[a:b] @ hw.T + hb
    check_finite_logits(logits, pol.where)
    if len(groups) == 1:
        return logits
    out = np.empty_like(logits)
    out[order] = logits
    return out


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
        self.draws = not self.greedy
        """Whether it draws from its slots' generators (only when sampling)."""
        self.rows_recomputed = 0
        """Greedy rows recomputed alone because their two best legal logits were within the tolerance."""
        self._rngs = SlotTable(name)

    @classmethod
    def from_checkpoint(cls, path: str, rules: SmearRules | None = None, name: str | None = None,
                        greedy: bool = True, temperature: float = 1.0,
                        corrections: bool = True) -> BatchedCheckpointAgent:
        """Load a checkpoint file (checked against ``rules`` as
        :func:`~smear_env.agents.checkpoint.load_agent` does; ``corrections=False``: its policy network
        without its advantage corrections)."""

        agent = load_agent(path, rules, greedy=greedy, temperature=temperature, corrections=corrections)
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

        frozen = {k: np.array(v, copy=True) for k, v in weights.items()}
        policy = NumpyPolicy(frozen, network, where=f"snapshot {name!r}")
        return cls(policy, name, {"network": network}, greedy=greedy, temperature=temperature)

    def start_game(self, slot: int, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        check_start(self.name, seat, rules, rng)
        self._rngs.set(slot, rng)

    def _batch_logits(self, obs: np.ndarray) -> np.ndarray:
        """Raw logits (B, 72) float32 of all rows, in the original action order: the policy's forward pass
        (:meth:`~smear_env.agents.checkpoint.NumpyPolicy.logits`, before its corrections) computed for a
        batch (:func:`batch_forward`)."""
        return batch_forward(self.policy, obs)

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

        batched = isinstance(self.policy, NumpyPolicy)
        logits = self._batch_logits(obs) if batched else self.policy.logits(obs, mask)
        self._check_finite(logits, mask, slots)
        masked = np.where(mask, logits, -np.inf)
        near = np.zeros(len(masked), dtype=bool)  # rows near a correction's decision: computed alone below
        for c in getattr(self.policy, "corrections", []) if batched else []:
            masked, c_near = c.apply(masked, np.where(mask, batch_forward(c.net, obs), -np.inf), obs)
            near |= c_near
        actions = np.argmax(masked, axis=1)
        rows = np.arange(actions.size)
        best = masked[rows, actions]
        masked[rows, actions] = -np.inf
        second = masked.max(axis=1)
        close = np.flatnonzero((best - second <= self.tie_tolerance + 1e-5 * np.abs(best)) | near)
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
    decoded with :func:`~smear_env.engine.decoding.decode_batch`) else ``act``. ``close`` closes every
    per-slot agent that has a ``close`` method."""

    vectorised = False
    draws = True
    """Its per-seat agents may draw from their generators."""

    def __init__(self, factory: Callable[[], Agent], name: str, spare: Agent | None = None) -> None:
        if not callable(factory):
            raise TypeError(f"PerSlotAgent needs a callable factory, not {type(factory).__name__}")
        self.name = name
        self._factory = factory
        self._spare = spare  # an agent already built (e.g. to check a spec), used for the first slot
        self._agents = SlotTable(name)
        self._closed = False

    @property
    def agents(self) -> dict[int, Agent]:
        """The per-slot agents created so far, by slot."""
        return dict(self._agents.values)

    def start_game(self, slot: int, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        check_start(self.name, seat, rules, rng)
        if self._closed:
            raise ValueError(f"agent {self.name!r} is closed")
        slot = check_slot(self.name, slot)
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


class OneSeatAgent:
    """A batched agent as a per-seat :class:`~smear_env.agents.base.Agent`: it sits in one slot (0) and is
    asked one row a call, so its actions are the batched agent's for that slot after the same calls (the same
    generator draws). How :func:`~smear_env.agents.registry.make_agent` gives the search specs
    (``rollout:``, ``split:``) to ``smear-serve``, the web table and the reference evaluator."""

    def __init__(self, batched: BatchedAgent, name: str | None = None) -> None:
        if not callable(getattr(batched, "act_batch", None)):
            raise TypeError(f"OneSeatAgent needs a batched agent (act_batch), not {type(batched).__name__}")
        self.batched = batched
        self.name = batched.name if name is None else name

    def start_game(self, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        self.batched.start_game(0, seat, rules, rng)

    def act(self, observation: dict[str, Any]) -> int:
        obs = np.asarray(observation["observation"], dtype=np.float32)[None]
        mask = np.asarray(observation["action_mask"]) != 0
        return int(self.batched.act_batch(obs, mask[None], np.zeros(1, dtype=np.int64))[0])

    def close(self) -> None:
        self.batched.close()
