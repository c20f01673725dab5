"""Reading and playing smear-rl checkpoints with numpy only (no torch needed to play).

A checkpoint is a safetensors file (no pickle) whose header's ``smear`` entry is a JSON object::

    format            "smear-checkpoint/1"
    env_version       "smear_v0"
    obs_size          OBS_SIZE of smear_env.engine.observation
    obs_layout_hash   sha256 of the observation layout (term names, sizes, kinds, in order)
    num_actions       72
    rules             the SmearRules options the policy was trained on
    network           {"hidden_sizes": [...], "activation": ...}
    algorithm         e.g. "ppo"
    step              learner decisions trained
    training          the resolved training config (dict)
    state             (training checkpoints) optimizer param groups, numpy RNG state, counters
    corrections       (optional) a list of advantage corrections applied in order, each an object with
                      the network's ``hidden_sizes``, ``activation``, ``suit_canonical`` and its ``margin``
                      (optional: ``max_logit_gap``, ``score_range``)

Tensor names: ``policy.<param>`` (the policy network's state dict; the layout written by
``training.policy.SmearPolicy``), ``correction.<i>.<param>`` for correction ``i`` (the same layout: its 72
outputs are advantages), and in training checkpoints also ``optim.<i>.<key>``, ``pool.<k>.<param>`` and
``rng.torch``.

A **correction** (the ``advantage`` stage) is one step of policy improvement without search: a
network estimating how much better each legal action is than the policy's greedy one. Where its best
legal action is more than ``margin`` above the greedy one, the two actions' logits are exchanged, so the
greedy choice becomes the correction's and the sampling distribution keeps its shape
(:class:`Correction`). Each later correction sees the logits the earlier ones left. A correction with a
``score_range`` (``{"own": [lo, hi], "other": [lo, hi]}``, the raw game scores of the positions it was fitted
on) changes nothing at a position whose scores lie outside it: there its values would be an extrapolation.

:func:`load_agent` turns a checkpoint into a :class:`CheckpointAgent` (an
:class:`~smear_env.agents.base.Agent`) that runs the policy in numpy, greedy by default. Writing checkpoints
(and everything that needs torch) lives in ``training.checkpoint``.
"""


from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
from safetensors import safe_open

from ..core.actions import NUM_ACTIONS, short_repr
from ..core.config import SmearRules
from ..core.jsonsafe import JsonError, json_depth, loads_strict
from ..engine.observation import (  # noqa: F401 (ENV_VERSION and obs_layout_hash re-exported: they live in observation)
    ENV_VERSION,
    OBS_HIGH,
    OBS_LOW,
    OBS_SIZE,
    SCORES,
    SUIT_ACTION_TARGET,
    SUIT_OBS_SOURCE,
    obs_layout_hash,
    suit_orders,
)

FORMAT = "smear-checkpoint/1"
META_KEY = "smear"


class CheckpointError(ValueError):
    """A checkpoint file is unreadable or does not fit the environment / rules it is used with."""


# --------------------------------------------------------------------------------------------- read
def read_checkpoint(path: str | Path) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """(tensors as numpy arrays, metadata); a missing, corrupt or foreign file raises CheckpointError."""

    path = Path(path)
    if path.is_dir():
        raise CheckpointError(f"checkpoint {str(path)!r} is a directory, not a checkpoint file")
    if not path.exists():
        raise CheckpointError(f"checkpoint {str(path)!r} does not exist")
    if not path.is_file():
        raise CheckpointError(f"checkpoint {str(path)!r} is not a regular file (a device or a pipe?)")
    check_header_size(path)
    try:
        with safe_open(str(path), framework="np") as f:
            header = f.metadata() or {}
            tensors = {k: f.get_tensor(k) for k in f.keys()}  # noqa: SIM118 (safe_open has no __iter__)
    except Exception as e:  # safetensors raises its own error types for truncated/corrupt files
        raise CheckpointError(
            f"checkpoint {str(path)!r} is not a readable safetensors file (corrupt or truncated?): {e}"
        ) from e
    if META_KEY not in header:
        raise CheckpointError(f"checkpoint {str(path)!r} has no smear metadata: not a smear-rl checkpoint")
    text = header[META_KEY]
    depth = json_depth(text)
    if depth > MAX_META_DEPTH:
        raise CheckpointError(
            f"checkpoint {str(path)!r}: its metadata is nested {depth} levels deep (at most {MAX_META_DEPTH})"
        )
    try:
        meta = loads_strict(text)  # also rejects repeated keys and NaN / Infinity
    except JsonError as e:
        raise CheckpointError(f"checkpoint {str(path)!r}: its metadata is not valid JSON ({e})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        shown = meta.get("format") if isinstance(meta, dict) else meta
        raise CheckpointError(f"checkpoint {str(path)!r}: format {short_repr(shown)} is not {FORMAT!r}")
    check_metadata_types(meta, path)
    return tensors, meta


MAX_META_DEPTH = 32
"""Deepest nesting of lists / objects allowed in a checkpoint's metadata (real ones use about 6)."""
MAX_HEADER_BYTES = 4 << 20
"""Largest safetensors header (tensor table and metadata) read: 4 MiB (the shipped agent's is 17 KB)."""


def check_header_size(path: str | Path) -> None:
    """Raise CheckpointError when the header length a safetensors file declares (its first 8 bytes, little
    endian) is over :data:`MAX_HEADER_BYTES`: checked before the header is read or parsed."""
    try:
        with open(path, "rb") as f:
            head = f.read(8)
    except OSError as e:
        raise CheckpointError(f"checkpoint {str(path)!r} cannot be read: {e.strerror or e}") from None
    if len(head) == 8:
        size = int.from_bytes(head, "little")
        if size > MAX_HEADER_BYTES:
            raise CheckpointError(f"checkpoint {str(path)!r} is not a readable safetensors file (corrupt or "
                                  f"truncated?): its header declares {size} bytes (at most "
                                  f"{MAX_HEADER_BYTES})")


def check_metadata_types(meta: dict[str, Any], path: str | Path) -> None:
    """Raise CheckpointError unless the metadata fields a player reads have their documented types:
    ``network`` an object with ``hidden_sizes`` a list of integers >= 1 and ``activation`` a string,
    ``rules`` an object, ``step`` an integer >= 0 (each when present)."""
    p = str(path)

    def bad(key: str, expected: str, value: Any) -> CheckpointError:
        return CheckpointError(
            f"checkpoint {p!r}: metadata {key!r} must be {expected}, got {short_repr(value)}"
        )

    net = meta.get("network")
    if net is not None:
        if not isinstance(net, dict):
            raise bad("network", 'an object {"hidden_sizes": [...], "activation": ...}', net)
        sizes = net.get("hidden_sizes")
        if not isinstance(sizes, list) or not all(type(h) is int and h >= 1 for h in sizes):
            raise bad("network.hidden_sizes", "a list of integers >= 1", sizes)
        if not isinstance(net.get("activation"), str):
            raise bad("network.activation", f"one of {', '.join(map(repr, _NP_ACT))}", net.get("activation"))
        if not isinstance(net.get("suit_canonical", False), bool):
            raise bad("network.suit_canonical", "true or false", net.get("suit_canonical"))
    if "rules" in meta and not isinstance(meta["rules"], dict):
        raise bad("rules", "an object of rule options", meta["rules"])
    if "step" in meta and (type(meta["step"]) is not int or meta["step"] < 0):
        raise bad("step", "an integer >= 0", meta["step"])


def check_compatible(meta: dict[str, Any], path: str | Path, rules: SmearRules | None = None, *,
                     wanted: str = "requested", advice: str = "play it under the rules it was trained on"
                     ) -> None:
    """Raise CheckpointError naming the first mismatch between a checkpoint and this environment (and the
    rules it will play under, when given). A rule mismatch reads ``kitty_size=3 (<wanted>: 2); <advice>``:
    callers say where the other rules come from (``wanted``, e.g. "this run's config") and what to do.
    Rules are compared by meaning (:meth:`SmearRules.differences_from`): an option missing from the
    checkpoint's record (added after it was written) counts as its default value; a recorded option this
    version does not know is a mismatch."""
    p = str(path)
    if meta.get("env_version") != ENV_VERSION:
        raise CheckpointError(
            f"checkpoint {p!r} was made for environment {meta.get('env_version')!r}, this is {ENV_VERSION!r}"
        )
    if meta.get("obs_size") != OBS_SIZE:
        raise CheckpointError(
            f"checkpoint {p!r} expects observations of size {meta.get('obs_size')}, "
            f"this environment's OBS_SIZE is {OBS_SIZE}"
        )
    if meta.get("obs_layout_hash") != obs_layout_hash():
        raise CheckpointError(
            f"checkpoint {p!r} was trained on a different observation layout "
            f"(hash {meta.get('obs_layout_hash')}, this environment's is {obs_layout_hash()})"
        )
    if meta.get("num_actions") != NUM_ACTIONS:
        raise CheckpointError(
            f"checkpoint {p!r} has {meta.get('num_actions')} actions, this environment has {NUM_ACTIONS}"
        )
    if rules is not None:
        # by meaning: an option the checkpoint predates (missing from its record) reads as its default
        trained = SmearRules.with_defaults(meta.get("rules") or {})
        want = rules.to_dict()
        diff = rules.differences_from(trained)
        if diff:
            desc = ", ".join(
                f"{k}={short_repr(trained[k])} ({wanted}: {want[k]!r})" if k in want
                else f"{k}={short_repr(trained[k])} (not a rule option of this version)" for k in diff
            )
            raise CheckpointError(
                f"checkpoint {p!r} was trained with different rule options: {desc}; {advice}"
            )


def prefixed(tensors: dict[str, np.ndarray], prefix: str) -> dict[str, np.ndarray]:
    n = len(prefix)
    return {k[n:]: v for k, v in tensors.items() if k.startswith(prefix)}


def mlp_layers(weights: dict[str, np.ndarray], prefix: str, network: dict[str, Any], inputs: int,
               outputs: int, where: str, dtype: Any = np.float32) -> list[tuple[np.ndarray, np.ndarray]]:
    """The (weight, bias) pairs ``<prefix>.<i>.weight`` / ``.bias`` of an MLP from ``inputs`` through
    ``network["hidden_sizes"]`` to ``outputs`` (the models of a search: win probability); a
    missing or misshapen tensor or a bad ``hidden_sizes`` is a ``ValueError`` naming ``where``."""
    sizes = network.get("hidden_sizes")
    if not isinstance(sizes, list) or not all(type(s) is int and s > 0 for s in sizes):
        raise ValueError(f"{where}: 'hidden_sizes' must be a list of positive integers, not {sizes!r}")
    layers = []
    width = inputs
    for i, size in enumerate([*sizes, outputs]):
        w, b = weights.get(f"{prefix}.{i}.weight"), weights.get(f"{prefix}.{i}.bias")
        if w is None or b is None or w.shape != (size, width) or b.shape != (size,):
            got = None if w is None or b is None else (w.shape, b.shape)
            raise ValueError(f"{where}: layer {i} must be ({size}, {width}) and ({size},), got {got}")
        layers.append((w.astype(dtype), b.astype(dtype)))
        width = size
    return layers


def read_model_file(path: str | Path, kind: str, what: str, rules: SmearRules | None = None
                    ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """(tensors, metadata) of a search model file (a checkpoint file whose metadata ``kind`` is ``kind``),
    checked like a policy checkpoint (:func:`check_compatible`); a file of another kind (a policy
    checkpoint) is a :class:`CheckpointError` saying it is not ``what``."""
    weights, meta = read_checkpoint(path)
    if meta.get("kind") != kind:
        raise CheckpointError(f"{str(path)!r} is not {what} (metadata kind {meta.get('kind')!r}, expected "
                              f"{kind!r})")
    check_compatible(meta, path, rules)
    return weights, meta


# --------------------------------------------------------------------------------------------- agent
def _gelu_tanh(x: np.ndarray) -> np.ndarray:
    return 0.5 * x * (1.0 + np.tanh(np.float32(0.7978845608028654) * (x + np.float32(0.044715) * x * x * x)))


_NP_ACT = {"relu": lambda x: np.maximum(x, 0), "tanh": np.tanh, "gelu": _gelu_tanh}


LOGIT_LIMIT = 1e30
"""Largest logit (bound, :meth:`NumpyPolicy.logit_bound`) a loaded policy may produce: far beyond any
trained network (|logits| of tens), far below float32's 3.4e38, so the forward pass never overflows."""


def check_finite_logits(logits: np.ndarray, where: str = "checkpoint") -> None:
    """Raise :class:`CheckpointError` naming ``where`` (e.g. ``"checkpoint 'x.safetensors'"``) when
    ``logits`` (raw, before masking) hold a NaN or an infinity: the guard every player of a checkpoint
    runs before an argmax or a softmax, so an overflowing network is an error, not the first legal action
    every time."""
    finite = np.isfinite(logits)
    if not finite.all():
        rows = np.flatnonzero(~finite.reshape(len(logits), -1).all(axis=1)) if logits.ndim > 1 else [0]
        raise CheckpointError(
            f"{where}: the policy computed NaN or infinite logits (overflow) for {len(rows)} of "
            f"{len(logits) if logits.ndim > 1 else 1} observations; its weights are unusable for these "
            "inputs (observations outside the observation space, or corrupt weights)"
        )


class NumpyPolicy:
    """The policy half of a SmearPolicy in numpy (for playing; no torch needed)."""

    def __init__(self, weights: dict[str, np.ndarray], network: dict[str, Any],
                 where: str = "checkpoint") -> None:
        net = network if isinstance(network, dict) else {}
        sizes, act = net.get("hidden_sizes"), net.get("activation")
        if not isinstance(sizes, list) or not all(type(h) is int and h >= 1 for h in sizes):
            raise CheckpointError(
                f"{where}: metadata network.hidden_sizes must be a list of integers >= 1, "
                f"got {short_repr(sizes)}"
            )
        n_hidden = len(sizes)
        self.where = where
        names = ["obs_scale"] + [f"pi_body.{2 * i}.{k}" for i in range(n_hidden) for k in ("weight", "bias")]
        names += ["pi_head.weight", "pi_head.bias"]
        for name in names:
            if name not in weights:
                raise CheckpointError(f"{where}: policy weights are missing tensor {name!r}")
            a = weights[name]
            if not isinstance(a, np.ndarray) or not np.issubdtype(a.dtype, np.floating):
                dtype = a.dtype if isinstance(a, np.ndarray) else type(a).__name__
                raise CheckpointError(
                    f"{where}: {name} has dtype {dtype}; policy tensors must be floating point "
                    "(float16, float32 or float64)"
                )
        with np.errstate(over="ignore"):  # float64 beyond float32's range becomes inf: rejected below
            f32 = {name: weights[name].astype(np.float32) for name in names}
        self.scale = f32["obs_scale"]
        self.layers = [(f32[f"pi_body.{2 * i}.weight"], f32[f"pi_body.{2 * i}.bias"])
                       for i in range(n_hidden)]
        self.head = (f32["pi_head.weight"], f32["pi_head.bias"])
        if not isinstance(act, str) or act not in _NP_ACT:
            raise CheckpointError(
                f"{where}: unknown activation {short_repr(act)} (one of {', '.join(map(repr, _NP_ACT))})"
            )
        self.act_fn = _NP_ACT[act]
        canon = net.get("suit_canonical", False)
        if not isinstance(canon, bool):
            raise CheckpointError(f"{where}: metadata network.suit_canonical must be true or false, got "
                                  f"{short_repr(canon)}")
        self.suit_canonical = canon
        self._check_shapes(sizes, where)
        self.corrections: list[Correction] = []
        """Advantage corrections applied to the logits, in order (:func:`read_corrections`)."""

    def _check_shapes(self, hidden_sizes: list[int], where: str) -> None:
        """The layer chain OBS_SIZE -> hidden_sizes -> NUM_ACTIONS, with matching biases and finite values;
        raise CheckpointError naming the first tensor that does not fit."""
        if self.scale.shape != (OBS_SIZE,):
            raise CheckpointError(f"{where}: obs_scale has shape {self.scale.shape}, expected ({OBS_SIZE},)")
        n_in = OBS_SIZE
        named = [(f"pi_body.{2 * i}", w, b, h) for i, ((w, b), h) in enumerate(zip(self.layers, hidden_sizes,
                                                                                     strict=True))]
        named.append(("pi_head", self.head[0], self.head[1], NUM_ACTIONS))
        for name, w, b, n_out in named:
            if w.shape != (n_out, n_in):
                raise CheckpointError(
                    f"{where}: {name}.weight has shape {w.shape}, expected ({n_out}, {n_in})"
                    + (f" ({NUM_ACTIONS} actions)" if name == "pi_head" else "")
                )
            if b.shape != (n_out,):
                raise CheckpointError(f"{where}: {name}.bias has shape {b.shape}, expected ({n_out},)")
            n_in = n_out
        arrays = [("obs_scale", self.scale)] + [(f"{n}.weight", w) for n, w, _, _ in named] + [
            (f"{n}.bias", b) for n, _, b, _ in named
        ]
        for name, a in arrays:
            if not np.issubdtype(a.dtype, np.floating) or not np.all(np.isfinite(a)):
                raise CheckpointError(
                    f"{where}: {name} holds NaN, infinite values or values beyond float32's range"
                )
        bound = self.logit_bound()
        if not bound <= LOGIT_LIMIT:
            raise CheckpointError(
                f"{where}: its weights can overflow float32 at run time: logits can reach {bound:.3g} on "
                f"observations within the observation space (at most {LOGIT_LIMIT:.0e} is allowed); the "
                "weights are corrupt or were not trained"
            )

    def logit_bound(self) -> float:
        """An upper bound (float64) on ``|logit|`` and on every intermediate value of :meth:`logits` for
        observations within the observation space (``OBS_LOW`` .. ``OBS_HIGH``): interval arithmetic through
        the layers (``|x @ W.T + b| <= |x| @ |W|.T + |b|``; relu, tanh and gelu never grow ``|x|``). Below
        float32's range, the forward pass cannot overflow."""
        with np.errstate(over="ignore", invalid="ignore"):
            x = np.maximum(np.abs(OBS_LOW), np.abs(OBS_HIGH)).astype(np.float64) * np.abs(self.scale)
            peak = float(np.max(x, initial=0.0))
            for w, b in [*self.layers, self.head]:
                x = np.abs(w.astype(np.float64)) @ x + np.abs(b.astype(np.float64))
                peak = max(peak, float(np.max(x, initial=0.0)))
        return peak if np.isfinite(peak) else float("inf")

    def raw_forward(self, x: np.ndarray) -> np.ndarray:
        """The network on float32 rows ``x`` already in its input column order: scale, hidden layers, head
        (no suit permutation, no finiteness check; call it inside ``np.errstate`` as :meth:`logits` does)."""
        x = x * self.scale
        for w, b in self.layers:
            x = self.act_fn(x @ w.T + b)
        w, b = self.head
        return x @ w.T + b

    def logits(self, obs: np.ndarray, mask: np.ndarray) -> np.ndarray:
        """Masked logits (float32 ``(n, 72)``; ``-inf`` on illegal actions) of observations ``(n, 493)``.
        A non-finite logit (an observation far outside the observation space, or weights that overflow)
        raises :class:`CheckpointError` naming the checkpoint (:func:`check_finite_logits`), never a row
        of NaN to take an argmax over."""
        with np.errstate(over="ignore", invalid="ignore"):  # overflow is checked below, once, by value
            x = obs.astype(np.float32)
            p = None
            if self.suit_canonical:  # the network sees the suits in canonical order (training.policy)
                p = suit_orders(x)
                x = np.take_along_axis(x, SUIT_OBS_SOURCE[p], axis=1)
            logits = self.raw_forward(x)
        check_finite_logits(logits, self.where)
        if p is not None:
            logits = np.take_along_axis(logits, SUIT_ACTION_TARGET[p], axis=1)
        out = np.where(mask.astype(bool), logits, -np.inf)
        for c in self.corrections:
            out = c.apply(out, c.net.logits(obs, mask), obs)[0]
        return out


class Correction:
    """An advantage correction of a policy (see the module docstring): ``net`` (a :class:`NumpyPolicy` whose
    outputs are advantages) and ``margin``."""

    TOLERANCE = 1e-4
    """Advantage differences this close to a decision (the margin, or a tie between two actions) are
    computed again one row at a time by the batched player, so that it chooses as the one-row player does."""

    def __init__(self, net: NumpyPolicy, margin: float, max_logit_gap: float = float("inf"),
                 score_range: dict[str, tuple[float, float]] | None = None) -> None:
        self.net = net
        self.margin = float(margin)
        self.max_logit_gap = float(max_logit_gap)
        """Only actions whose policy logit is at most this far below the greedy one's may be taken (a trust
        region: the correction re-ranks what the policy finds plausible)."""
        self.score_range = score_range
        """``{"own": (lo, hi), "other": (lo, hi)}``: the raw scores (the deciding player's team, the other
        team) within which the correction applies, both inclusive; ``None``: at every score."""

    def covers(self, obs: np.ndarray) -> np.ndarray:
        """Which rows of observations ``(n, 493)`` lie within :attr:`score_range` (all without one)."""
        if self.score_range is None:
            return np.ones(len(obs), dtype=bool)
        own, other = obs[:, SCORES], obs[:, SCORES + 1]
        (a, b), (c, d) = self.score_range["own"], self.score_range["other"]
        return (own >= a) & (own <= b) & (other >= c) & (other <= d)

    def apply(self, logits: np.ndarray, adv: np.ndarray, obs: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(``logits`` (masked, ``-inf`` illegal) with the greedy action's and the correction's best
        action's logits exchanged where that one's advantage ``adv`` (masked the same way) is more than the
        margin above the greedy one's and the observation ``obs`` is within :attr:`score_range`; which rows
        are within :attr:`TOLERANCE` of a decision)."""
        inside = self.covers(obs)
        r = np.arange(len(logits))
        greedy = np.argmax(logits, axis=1)
        best = np.argmax(adv, axis=1)
        over = adv[r, best] - adv[r, greedy]
        gap = logits[r, greedy] - logits[r, best]
        take = (over > self.margin) & (gap <= self.max_logit_gap) & inside
        out = logits.copy()
        g, b = greedy[take], best[take]
        rows = r[take]
        out[rows, g], out[rows, b] = logits[rows, b], logits[rows, g]
        second = np.where(np.eye(adv.shape[1], dtype=bool)[best], -np.inf, adv).max(axis=1)
        with np.errstate(invalid="ignore"):  # rows with one legal action: -inf - -inf
            # the choice can differ between players only at the margin, or between two near-equal best
            # actions when the correction changes the action
            close = (np.abs(over - self.margin) <= self.TOLERANCE) | (take & (adv[r, best] - second
                                                                              <= self.TOLERANCE))
            close |= (over > self.margin) & (np.abs(gap - self.max_logit_gap) <= 1e-3)
        return out, close & inside & (np.isfinite(adv).sum(axis=1) > 1)


def read_corrections(tensors: dict[str, np.ndarray], meta: dict[str, Any], where: str) -> list[Correction]:
    """The corrections a checkpoint's metadata lists (``corrections``), with their tensors
    ``correction.<i>.*``; a malformed entry or a missing or misshapen tensor is a CheckpointError naming
    it."""
    specs = meta.get("corrections", [])
    if not isinstance(specs, list):
        raise CheckpointError(f"{where}: metadata 'corrections' must be a list, got {short_repr(specs)}")
    out = []
    for i, spec in enumerate(specs):
        if not isinstance(spec, dict):
            raise CheckpointError(f"{where}: metadata corrections[{i}] must be an object, got "
                                  f"{short_repr(spec)}")
        margin = spec.get("margin")
        if isinstance(margin, bool) or not isinstance(margin, int | float) or not 0 <= margin < float("inf"):
            raise CheckpointError(f"{where}: metadata corrections[{i}].margin must be a number >= 0, got "
                                  f"{short_repr(margin)}")
        gap = spec.get("max_logit_gap", float("inf"))
        if isinstance(gap, bool) or not isinstance(gap, int | float) or not gap >= 0:
            raise CheckpointError(f"{where}: metadata corrections[{i}].max_logit_gap must be a number >= 0, "
                                  f"got {short_repr(gap)}")
        box = read_score_range(spec.get("score_range"), f"{where}: metadata corrections[{i}].score_range")
        net = NumpyPolicy(prefixed(tensors, f"correction.{i}."), spec, where=f"{where} correction {i}")
        out.append(Correction(net, float(margin), float(gap), box))
    listed = {str(i) for i in range(len(out))}
    extra = sorted({k.split(".")[1] for k in tensors if k.startswith("correction.")} - listed)
    if extra:
        raise CheckpointError(f"{where}: tensors of correction(s) {extra} that the metadata does not list")
    return out


def read_score_range(value: Any, what: str) -> dict[str, tuple[float, float]] | None:
    """A correction's ``score_range`` entry (``None``: absent) as ``{"own": (lo, hi), "other": (lo, hi)}``;
    anything else is a CheckpointError naming ``what`` and the expected form."""
    if value is None:
        return None
    form = 'an object {"own": [lo, hi], "other": [lo, hi]} of finite numbers with lo <= hi'
    if not isinstance(value, dict) or set(value) != {"own", "other"}:
        raise CheckpointError(f"{what} must be {form}, got {short_repr(value)}")
    out = {}
    for key in ("own", "other"):
        pair = value[key]
        ok = (isinstance(pair, list) and len(pair) == 2
              and all(isinstance(v, int | float) and not isinstance(v, bool) and np.isfinite(v) for v in pair)
              and pair[0] <= pair[1])
        if not ok:
            raise CheckpointError(f"{what}.{key} must be [lo, hi] ({form}), got {short_repr(pair)}")
        out[key] = (float(pair[0]), float(pair[1]))
    return out


class CheckpointAgent:
    """An Agent playing a checkpoint's policy: argmax over the legal actions' logits (``greedy=True``) or a
    sample from the masked softmax (``temperature``)."""

    def __init__(self, path: str, policy: NumpyPolicy, meta: dict[str, Any], greedy: bool = True,
                 temperature: float = 1.0) -> None:
        if not greedy and (isinstance(temperature, bool) or not isinstance(temperature, int | float)
                           or not 0.0 < temperature < float("inf")):
            raise ValueError(f"agent {path!r}: temperature must be a finite number > 0, not {temperature!r}")
        self.name = path
        self.policy = policy
        self.meta = meta
        self.greedy = greedy
        self.temperature = temperature
        self._rng = np.random.default_rng(0)

    def start_game(self, seat: int, rules: SmearRules, rng: np.random.Generator) -> None:
        self._rng = rng

    def act(self, observation: dict[str, Any]) -> int:
        mask = np.asarray(observation["action_mask"])
        if not mask.any():
            raise ValueError(
                f"agent {self.name!r}: the action mask has no legal action (is this agent to act?)"
            )
        logits = self.policy.logits(np.asarray(observation["observation"])[None], mask[None])[0]
        if self.greedy:
            return int(np.argmax(logits))
        z = logits / self.temperature
        z = z - z[mask.astype(bool)].max()
        p = np.where(mask.astype(bool), np.exp(z), 0.0)
        p /= p.sum()
        return int(self._rng.choice(len(p), p=p))


def load_agent(path: str | Path, rules: SmearRules | None = None, greedy: bool = True,
               temperature: float = 1.0, corrections: bool = True) -> CheckpointAgent:
    """A checkpoint as an Agent named ``path``. With ``rules``, a checkpoint trained under other rule options
    is rejected (CheckpointError naming the differing options); so is one for another observation layout,
    environment version or action space, and a corrupt file. ``corrections=False``: its policy network
    alone, without the advantage corrections it carries (the network a trainer started from it fine-tunes);
    they are still checked."""
    if not isinstance(corrections, bool):
        raise TypeError(f"load_agent: corrections must be True or False, not {corrections!r}")
    tensors, meta = read_checkpoint(path)
    check_compatible(meta, path, rules)
    where = f"checkpoint {str(path)!r}"
    policy = NumpyPolicy(prefixed(tensors, "policy."), meta.get("network") or {}, where=where)
    found = read_corrections(tensors, meta, where)
    policy.corrections = found if corrections else []
    return CheckpointAgent(str(path), policy, meta, greedy=greedy, temperature=temperature)
