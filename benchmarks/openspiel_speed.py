"""Steps per second of python_smear beside OpenSpiel's C++ ``euchre`` and ``hearts``, in the same run.

Play in the manner of ``pyspiel.random_sim_test``: from the initial state, chance outcomes drawn by their
probabilities and uniformly random legal actions, through the pyspiel API from Python, game after game.
Two loops per game, interleaved in rounds so that machine load touches every game alike:

* ``play``: ``is_chance_node`` / ``chance_outcomes`` / ``legal_actions`` / ``apply_action`` (every state,
  chance nodes included, counts as a step; the decisions are reported too);
* ``observe``: the same, plus the acting player's ``information_state_tensor`` and
  ``information_state_string`` at each decision (what a learner or a search reads; euchre and hearts have no
  observation tensor).

And ``pyspiel.random_sim_test(game, num_sims, serialize=False)`` itself: seconds per simulated game (its
checks of every state are included). python_smear runs on the default rules with ``max_cycles=400`` here
(R21: random play's games to 15 run to thousands of decisions); the steps-per-second figures do not depend on
the bound. Needs the OpenSpiel venv (``make test-openspiel``); without open_spiel the script says so and
exits 0.

    .venv-openspiel/bin/python benchmarks/openspiel_speed.py [--seconds 3] [--rounds 3]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
import time

import numpy as np

if importlib.util.find_spec("pyspiel") is None:
    print("openspiel_speed: skipped (open_spiel is not installed; run it with .venv-openspiel/bin/python)")
    sys.exit(0)

import pyspiel  # noqa: E402

import smear_env.envs.integrations.openspiel  # noqa: E402, F401  (registers python_smear)

GAMES = {"python_smear": "python_smear(max_cycles=400)", "euchre": "euchre", "hearts": "hearts"}


def run(game: pyspiel.Game, seconds: float, observe: bool, rng: np.random.Generator
        ) -> tuple[int, int, float]:
    """(steps, decisions, elapsed seconds) of random play for about ``seconds``."""
    steps = decisions = 0
    start = time.perf_counter()
    deadline = start + seconds
    while time.perf_counter() < deadline:
        state = game.new_initial_state()
        while not state.is_terminal():
            if state.is_chance_node():
                outcomes, probs = zip(*state.chance_outcomes(), strict=True)
                state.apply_action(outcomes[int(rng.choice(len(outcomes), p=probs))])
            else:
                if observe:
                    p = state.current_player()
                    state.information_state_tensor(p)
                    state.information_state_string(p)
                legal = state.legal_actions()
                state.apply_action(legal[int(rng.integers(len(legal)))])
                decisions += 1
            steps += 1
    return steps, decisions, time.perf_counter() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=3.0, help="per game, loop and round")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--sims", type=int, default=3, help="random_sim_test games per game and round")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    games = {name: pyspiel.load_game(text) for name, text in GAMES.items()}
    rng = np.random.default_rng(args.seed)
    totals = {(n, m): [0, 0, 0.0] for n in games for m in ("play", "observe")}
    sim = dict.fromkeys(games, 0.0)
    print(f"load average at start: {os.getloadavg()}")
    for r in range(args.rounds):
        for name, game in games.items():
            for mode in ("play", "observe"):
                s, d, t = run(game, args.seconds, mode == "observe", rng)
                tot = totals[(name, mode)]
                tot[0] += s
                tot[1] += d
                tot[2] += t
            t0 = time.perf_counter()
            pyspiel.random_sim_test(game, num_sims=args.sims, serialize=False, verbose=False)
            sim[name] += time.perf_counter() - t0
        print(f"round {r + 1} done; load average {os.getloadavg()}")
    print(f"\n{'game':<14}{'loop':<9}{'steps/s':>10}{'decisions/s':>13}{'vs euchre':>11}{'vs hearts':>11}")
    for mode in ("play", "observe"):
        ref = {g: totals[(g, mode)][0] / totals[(g, mode)][2] for g in ("euchre", "hearts")}
        for name in games:
            s, d, t = totals[(name, mode)]
            print(f"{name:<14}{mode:<9}{s / t:>10.0f}{d / t:>13.0f}{(s / t) / ref['euchre']:>11.3f}"
                  f"{(s / t) / ref['hearts']:>11.3f}")
    print("\nrandom_sim_test (serialize=False): seconds per game")
    for name in games:
        print(f"  {name:<14}{sim[name] / (args.rounds * args.sims):.4f}")
    print(f"load average at end: {os.getloadavg()}")


if __name__ == "__main__":
    main()
