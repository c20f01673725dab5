"""The supervised fitter: the one Adam loop of the stages that fit a network on recorded rows.

:func:`fit` runs ``epochs`` passes of Adam at a constant learning rate (the fits are short, a few passes, and
fine-tune or regress; the RL algorithms' schedule is
:meth:`~training.configs.base.UpdateConfig.lr_at`): each pass a permutation of the training
rows drawn from the caller's generator, in minibatches, or (no rows) one full-batch step. The caller's
``loss(idx)`` returns the minibatch's loss and the figures it wants kept; :func:`fit` returns them per pass.
Its users: the imitation warm start, distillation, the advantage correction and the win model.
:func:`holdout` splits the rows held out for the figures measured after the fit.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Iterable
from typing import Any

import numpy as np
import torch


def holdout(rng: np.random.Generator, n: int, share: float, at_least: int = 0
            ) -> tuple[np.ndarray, np.ndarray]:
    """(held-out rows, training rows) of ``n`` rows: one permutation from ``rng``, its first ``share`` (at
    least ``at_least`` rows) held out."""
    perm = rng.permutation(n)
    n_val = max(at_least, int(n * share))
    return perm[:n_val], perm[n_val:]


Loss = Callable[[torch.Tensor | None], tuple[torch.Tensor, dict[str, float]]]
"""A fit's loss: the rows of a minibatch (None: all) -> (the loss, figures kept per step)."""


def fit(params: Iterable[torch.nn.Parameter], loss: Loss, epochs: int, lr: float,
        rows: np.ndarray | None = None, batch: int = 0, rng: np.random.Generator | None = None,
        clip: float | None = None, module: torch.nn.Module | None = None,
        after_epoch: Callable[[int, dict[str, list[float]]], Any] = lambda epoch, stats: None
        ) -> list[dict[str, list[float]]]:
    """Adam (learning rate ``lr``) on ``params`` for ``epochs`` passes; each pass ``rows`` in the order of
    ``rng.permutation(rows)``, ``batch`` rows a step (``rows`` None: one step on ``loss(None)``, the full
    batch). ``loss(idx)`` -> (the loss, ``{name: float}`` kept per step). ``clip``: the gradients' norm is
    clipped to it; ``module`` is put in training mode at each pass. ``after_epoch(epoch, stats)`` runs after
    each pass (``epoch`` from 1) with the pass's kept figures, ``{name: [one a step]}``; returns them all."""
    params = list(params)
    opt = torch.optim.Adam(params, lr=lr)
    history = []
    for epoch in range(epochs):
        if module is not None:
            module.train()
        if rows is None:
            batches: list[torch.Tensor | None] = [None]
        else:
            order = torch.from_numpy(rng.permutation(rows))  # type: ignore[union-attr]
            batches = [order[b:b + batch] for b in range(0, order.numel(), batch)]
        stats: dict[str, list[float]] = defaultdict(list)  # a pass without a step: empty lists
        for idx in batches:
            value, kept = loss(idx)
            opt.zero_grad()
            value.backward()
            if clip is not None:
                torch.nn.utils.clip_grad_norm_(params, clip)
            opt.step()
            for k, v in kept.items():
                stats[k].append(v)
        after_epoch(epoch + 1, stats)
        history.append(stats)
    return history
