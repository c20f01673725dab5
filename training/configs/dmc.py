"""The ``algorithm:`` keys of ``dmc`` (:mod:`training.algorithms.dmc`; torch-free)."""

from __future__ import annotations

from typing import Literal

from .base import Fraction, UpdateConfig


class DMCConfig(UpdateConfig):
    """Deep Monte-Carlo: Q over the 72 masked actions regressed on each decision's Monte-Carlo return,
    epsilon-greedy actors on the batched table (smear_env.tables.batched_table); saved with Q as the logits.
    No imitation warm start (it learns action values, not a policy to clone into). Opponents: itself ("self")
    or any agent spec, no "snapshot"."""

    name: Literal["dmc"] = "dmc"  # type: ignore[assignment]
    """Algorithm, one of training.algorithms.ALGORITHMS."""
    epsilon: Fraction = 0.05
    """Probability that an actor takes a uniformly random legal action instead of the highest-Q one."""
    bid_epsilon: Fraction | None = None
    """The same probability at bid decisions (None: ``epsilon``). Bids are about a tenth of the decisions and
    each has few legal actions; a greedy actor that rates one bid low never tries it again, so its Q-value is
    learnt from exploration alone (bid 2, which the dealer after three passes should prefer to 3 or 4, was
    taken 0.4% of the time with epsilon 0.05)."""

    supports_suit_canonical = True
    supports_imitation = False
    supports_snapshot = False  # no pool of its past selves: "self" and any agent spec
