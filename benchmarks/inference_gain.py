"""Does card-location inference make the rollout search choose better? Exact answers on real positions.

Plays ``--base`` (seats 0, 2) against ``--opponent`` (1, 3) on the batched engine and keeps ``--positions``
decisions of the base team in ``--phases`` with more than one legal action (about one a lane, at random
points of the games). At each it estimates every legal action's value by
:func:`~smear_env.agents.rollout.rollout_values` with ``--samples`` deals drawn uniformly
(:func:`~smear_env.infoset.sample_hidden`) and drawn by the inference model at each ``--alpha``
(:func:`~smear_env.agents.inference.sample_inferred`), and plays every legal action once in the *true* deal
with the same deterministic players: that is the action's exact value in this deal (up to which of another
bidder's cards were the kitty, which the observer's own engine draws). Prints the mean true value of the
action each chooser takes -- the policy, the uniform search, the inferred searches -- and the paired
difference to the uniform search with its standard error.

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/inference_gain.py --model runs/inf.safetensors
--positions 2000 --samples 32 --alpha 0.5 1``
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from smear_env.agents import rollout as ro
from smear_env.agents.inference import load_inference, sample_inferred
from smear_env.config import SmearRules
from smear_env.infoset import HiddenDeal
from smear_env.observation import decode_batch
from smear_env.vector import VectorGame


def positions(base: object, opp: object, n: int, seed: int, phases: list[int], rules: SmearRules
              ) -> tuple[np.ndarray, np.ndarray, list[HiddenDeal]]:
    """``n`` positions (observations, masks, true relative deals) of seats 0/2 in ``phases``."""
    vg = VectorGame(n, rules, seed=seed)
    rng = np.random.default_rng(seed)
    obs_out, mask_out, deals = [], [], []
    taken = np.zeros(n, dtype=bool)
    for _ in range(2000):
        obs, mask, seat = vg.observe(), vg.legal_mask(), vg.to_act.copy()
        own = (seat & 1) == 0
        ok = own & np.isin(vg.phase, phases) & (mask.sum(1) > 1) & ~taken & (rng.random(n) < 0.03)
        for lane in np.flatnonzero(ok).tolist():
            deals.append(ro.true_deal(vg, lane))
            obs_out.append(obs[lane])
            mask_out.append(mask[lane])
        taken |= ok
        if taken.all():
            break
        vg.step(ro.team_actions(base, opp, obs, mask, seat))
    return np.array(obs_out), np.array(mask_out), deals


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", required=True, help="card-location model file (python -m training.inference)")
    ap.add_argument("--positions", type=int, default=2000)
    ap.add_argument("--samples", type=int, default=32)
    ap.add_argument("--alpha", type=float, nargs="+", default=[1.0])
    ap.add_argument("--moves", type=int, default=200)
    ap.add_argument("--base", default="default")
    ap.add_argument("--opponent", default="heuristic")
    ap.add_argument("--phases", default="trump+discard+play")
    ap.add_argument("--seed", type=int, default=123)
    args = ap.parse_args(argv)
    rules = SmearRules()
    team, opp = ro.rollout_players(args.base, args.opponent, rules)
    model = load_inference(args.model, rules)
    obs, mask, true_deals = positions(team, opp, args.positions, args.seed,
                                      [ro.PHASES[p] for p in args.phases.split("+")], rules)
    n = len(true_deals)
    views = decode_batch(obs, mask)
    truth = ro.values_in_deals(rules, views, mask, true_deals, team, opp, np.random.default_rng(args.seed))
    rows = np.arange(n)
    seat0 = np.zeros(n, dtype=np.int64)
    choosers = {"policy": team.act_batch(obs, mask, seat0)}

    def rngs() -> list[np.random.Generator]:
        return [np.random.default_rng([args.seed, 7, i]) for i in range(n)]

    t = time.monotonic()
    choosers["uniform search"] = np.argmax(ro.rollout_values(rules, views, mask, team, opp, args.samples,
                                                             rngs()), axis=1)
    times = {"uniform search": time.monotonic() - t}
    log_probs = model.log_probs(obs)
    for alpha in args.alpha:
        t = time.monotonic()
        r = rngs()
        deals = sample_inferred(views, log_probs, r, args.samples, alpha, args.moves)
        q = ro.rollout_values(rules, views, mask, team, opp, args.samples, r, deals=deals)
        name = f"inferred search, alpha {alpha:g}"
        choosers[name] = np.argmax(q, axis=1)
        times[name] = time.monotonic() - t
    best = np.nanmax(truth, axis=1)
    ref = truth[rows, choosers["uniform search"]]
    print(f"{n} positions ({args.phases}) of {args.base!r} against {args.opponent!r}, seed {args.seed}; "
          f"{args.samples} deals a search; model {args.model}")
    print("| chooser | mean true value | regret (best in the true deal minus chosen) | "
          "minus uniform search [SE] | seconds |")
    print("|---|---|---|---|---|")
    for name, choice in choosers.items():
        v = truth[rows, choice]
        d = v - ref
        print(f"| {name} | {v.mean():+.4f} | {(best - v).mean():.4f} | {d.mean():+.4f} "
              f"[{d.std() / np.sqrt(n):.4f}] | {times.get(name, 0):.0f} |")


if __name__ == "__main__":
    main()
