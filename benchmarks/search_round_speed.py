"""Speed of one worker's share of an expert-iteration round (:mod:`training.expert_iteration`): the
rollout search's trump, discard and card decisions in duplicate games against the heuristic, as
``generate`` plays them (the same spec and table), recorded targets included.

Prints one JSON line: games, searched decisions, seconds, searched decisions per second and the match's
win rate (the same seed gives the same games, so two code versions can be compared on the same work).
Machines vary from minute to minute; compare two versions in the same session, interleaved, e.g. with a
checkout of the older commit in ``/tmp/old``::

    for i in 1 2 3; do
      PYTHONPATH=/tmp/old .venv/bin/python benchmarks/search_round_speed.py --games 30
      PYTHONPATH=. .venv/bin/python benchmarks/search_round_speed.py --games 30
    done

Run: ``PYTHONPATH=. .venv/bin/python benchmarks/search_round_speed.py --games 30 --policy default``
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import torch


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--games", type=int, default=30, help="duplicate games (2 tables each)")
    ap.add_argument("--policy", default="default", help="the searcher's base: a checkpoint or shipped agent")
    ap.add_argument("--samples", type=int, default=32)
    ap.add_argument("--phases", default="trump+discard+play")
    ap.add_argument("--seed", type=int, default=99999)
    args = ap.parse_args(argv)
    torch.set_num_threads(1)
    from smear_env.agents.shipped import checkpoint_file
    from training.expert_iteration import generate, search_spec

    spec = search_spec(checkpoint_file(args.policy), "heuristic", args.samples, args.phases)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        got = generate(spec, "heuristic", args.games, args.seed, os.path.join(tmp, "targets.npz"))
        wall = time.perf_counter() - t0
    print(json.dumps({"games": args.games, "searched": got["searched"], "seconds": round(wall, 2),
                      "searched_per_s": round(got["searched"] / wall, 1), "win_rate": got["win_rate"],
                      "load_average": round(os.getloadavg()[0], 2)}))


if __name__ == "__main__":
    main()
