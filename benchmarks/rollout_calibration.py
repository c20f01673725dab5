"""Is the rollout search right where it overrules its policy? A check at the first bid of a hand.

Deals ``--positions`` hands on the batched engine and takes each first bidder's position (nothing is known
but the own hand, so uniform sampling of the hidden cards is exact). For each it estimates every bid's value
with :func:`~smear_env.agents.rollout.rollout_values` (``--samples`` deals) and also plays every bid once
in the true deal with the same players (``--base`` for the bidder's team, ``--opponent`` for the others): an
unbiased sample of the bid's true value. Prints, per bid, the mean estimate and the mean true outcome, and,
over the positions where the search's best bid differs from the policy's, the estimated gain and the true
gain (with its standard error).

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/rollout_calibration.py --positions 1000 --samples 48``
"""

from __future__ import annotations

import argparse

import numpy as np

from smear_env.agents import rollout as ro
from smear_env.agents.registry import rollout_players
from smear_env.core.actions import action_name
from smear_env.core.config import SmearRules
from smear_env.engine.decoding import decode_batch
from smear_env.engine.infoset import HiddenDeal
from smear_env.engine.vector import VectorGame


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--positions", type=int, default=1000)
    ap.add_argument("--samples", type=int, default=48)
    ap.add_argument("--base", default="default")
    ap.add_argument("--opponent", default="heuristic")
    ap.add_argument("--seed", type=int, default=123)
    args = ap.parse_args(argv)
    rules = SmearRules()
    team, opp = rollout_players(args.base, args.opponent, rules)
    n = args.positions
    vg = VectorGame(n, rules, seed=args.seed)
    obs, mask, seat = vg.observe(), vg.legal_mask(), vg.to_act.copy()
    views = decode_batch(obs, mask)
    q = ro.rollout_values(rules, views, mask, team, opp, args.samples,
                          [np.random.default_rng([args.seed, i]) for i in range(n)])
    true_deals = [HiddenDeal(hands=tuple(int(vg.hands[i, (int(seat[i]) + r) & 3]) for r in range(4)),
                             discards=0, stock=sum(1 << c for c in vg.stock[i].tolist())) for i in range(n)]
    truth = ro.values_in_deals(rules, views, mask, true_deals, team, opp, np.random.default_rng(args.seed))
    print(f"{n} first-bidder positions, {args.samples} sampled deals each; base {args.base!r}, "
          f"opponent {args.opponent!r}")
    print("| bid | positions | mean estimate | mean true outcome |")
    print("|---|---|---|---|")
    for a in np.flatnonzero(mask.any(0)):
        sel = mask[:, a]
        est, true = q[sel, a].mean(), np.nanmean(truth[sel, a])
        print(f"| {action_name(int(a))} | {sel.sum()} | {est:+.3f} | {true:+.3f} |")
    rows = np.arange(n)
    base = team.act_batch(obs, mask, seat)
    best = np.argmax(q, axis=1)
    ch = best != base
    gain = truth[rows, best] - truth[rows, base]
    est = q[rows, best] - q[rows, base]
    if ch.any():
        se = gain[ch].std() / np.sqrt(ch.sum())
        print(f"search overrules the policy at {ch.sum()} positions: estimated gain {est[ch].mean():+.3f}, "
              f"true gain {gain[ch].mean():+.3f} (standard error {se:.3f})")
    else:
        print("search never overrules the policy")


if __name__ == "__main__":
    main()
