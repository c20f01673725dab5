"""Learning speed: each trainer for the same CPU time; greedy win rate against ``heuristic`` over CPU minutes.

    PYTHONPATH=$PWD .venv/bin/python benchmarks/learning_curves.py [--minutes 3] [--points 3] [--games 2000]
        [--trainers dmc,vector_ppo,maskable_ppo,rllib_ppo] [--jobs 1] [--seed 9100]
        [--out runs/learning_curves] [--png docs/learning-curves.png] [--table docs/learning-curves.md]

Every trainer starts from scratch (no imitation) and trains in its own process (``--jobs`` at a time) for
``--minutes`` of *CPU time of that process* (``time.process_time``: training only, evaluations excluded; torch
with one thread), so a loaded machine slows the run down but does not change what it measures. At ``--points``
evenly spaced CPU times the greedy policy plays ``--games`` duplicate games against ``heuristic`` on the
batched engine (seed ``--seed``: the same deals at every point and for every trainer). The final policy is
saved as a checkpoint (``<out>/<trainer>.safetensors``, playable by ``smear-eval``).

Trainers (configs as shipped, no tuning to this benchmark):

* ``dmc`` -- Deep Monte-Carlo, ``configs/dmc.yaml``;
* ``vector_ppo`` -- ``configs/vector_ppo.yaml``, ``total_timesteps``
  scaled to the budget (0.5M decisions per CPU minute, the rate of the 1-hour ``scratch`` run) so its
  learning-rate and entropy schedules run their course;
* ``maskable_ppo`` -- sb3-contrib's MaskablePPO on the single-seat env (``smear_env.gym.single_seat``; 8 envs
  in a DummyVecEnv, the scratch opponent mix), the reference line;
* ``rllib_ppo`` -- Ray RLlib's PPO, ``configs/rllib_ppo.yaml`` (self-play), ``total_timesteps`` scaled as
  ``vector_ppo``'s, with no Ray env-runner actors and no remote learner (``ray.num_env_runners=0``): sampling
  and learning both run in the trainer's process, so its CPU time is what is counted (Ray's own daemons are
  not). It runs in the RLlib venv, ``.venv-rllib/bin/python`` (``make test-rllib`` builds it; ray pins
  another gymnasium), and is skipped with a message when that venv is absent.

Writes ``<out>/<trainer>.json`` (the curve), the PNG and the markdown table (win rate [95% CI] at each point,
decisions trained, decisions per CPU second). Default budgets (3 trainers x 3 CPU minutes + 9 evaluations of
2,000 games) take about 15 minutes of CPU.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

TRAINERS = ("dmc", "vector_ppo", "maskable_ppo", "rllib_ppo")
RLLIB_PYTHON = ROOT / ".venv-rllib" / "bin" / "python"
"""The interpreter ``rllib_ppo`` runs in (the other trainers: this one)."""
DECISIONS_PER_CPU_MINUTE = 500_000  # scratch: 29.7M learner decisions in its hour


def trainer_config(name: str, minutes: float, seed: int) -> Any:
    """The TrainConfig of a trainer for this benchmark (see the module docstring)."""
    from training.config import load_config

    total = int(max(1.0, minutes) * DECISIONS_PER_CPU_MINUTE)  # the PPO schedules' length
    if name == "dmc":
        return load_config(ROOT / "configs" / "dmc.yaml", [f"seed={seed}", "time_limit=null",
                                                            "total_timesteps=1_000_000_000"])
    if name == "vector_ppo":
        return load_config(ROOT / "configs" / "vector_ppo.yaml", [f"seed={seed}", "time_limit=null",
                                                                   f"total_timesteps={total}"])
    if name == "maskable_ppo":
        return load_config(None, [
            "algorithm.name=maskable_ppo", f"seed={seed}", "n_envs=8", f"total_timesteps={total}",
            "selfplay.opponents={self: 0.3, snapshot: 0.1, heuristic: 0.5, random: 0.1}",
            "env.episode=hand", "env.reward=score", "env.score_scale=0.25"])
    if name == "rllib_ppo":
        return load_config(ROOT / "configs" / "rllib_ppo.yaml", [
            f"seed={seed}", "time_limit=null", f"total_timesteps={total}", "ray.num_env_runners=0",
            "ray.num_cpus=1", "eval.interval=0"])
    raise ValueError(f"unknown trainer {name!r}; valid trainers: {', '.join(TRAINERS)}")


def interpreter(name: str) -> Path | None:
    """The Python that runs trainer ``name``; None when it is not installed (rllib_ppo without its venv)."""
    if name == "rllib_ppo":
        return RLLIB_PYTHON if RLLIB_PYTHON.is_file() else None
    return Path(sys.executable)


def run_one(name: str, minutes: float, points: int, games: int, seed: int, train_seed: int,
            out: Path) -> dict[str, Any]:
    """Train ``name`` for ``minutes`` CPU minutes, ``points`` evaluations; writes and returns the curve."""
    import numpy as np
    import torch

    from training.algorithms import make_trainer
    from training.checkpoint import base_metadata, network_metadata, save_policy
    from training.config import to_dict
    from training.evaluation import evaluate_policy

    cfg = trainer_config(name, minutes, train_seed)
    torch.set_num_threads(1)
    torch.manual_seed(cfg.seed)
    trainer = make_trainer(cfg, np.random.default_rng(cfg.seed))
    budget = minutes * 60.0
    marks = [budget * (i + 1) / points for i in range(points)]
    cpu = 0.0
    next_snap = cfg.selfplay.snapshot_interval
    curve: list[dict[str, Any]] = []
    t_start = time.time()
    for mark in marks:
        while cpu < mark:
            t0 = time.process_time()
            trainer.iterate()
            if trainer.step >= next_snap:
                trainer.add_snapshot()
                next_snap += cfg.selfplay.snapshot_interval
            cpu += time.process_time() - t0
        t0 = time.process_time()
        r = evaluate_policy(trainer.eval_policy(), "heuristic", cfg.rules, games=games, seed=seed)
        point = {"cpu_s": round(cpu, 1), "decisions": int(trainer.step), "win_rate": r["win_rate"],
                 "ci95": r["ci95"], "margin_per_hand": r["margin_per_hand"], "games": r["games"],
                 "eval_cpu_s": round(time.process_time() - t0, 1), "wall_s": round(time.time() - t_start, 1)}
        curve.append(point)
        print(f"{name}: {point}", file=sys.stderr, flush=True)
    meta = base_metadata(cfg.rules, network_metadata(cfg.network), cfg.algorithm.name, trainer.step,
                         to_dict(cfg))
    out.mkdir(parents=True, exist_ok=True)
    save_policy(out / f"{name}.safetensors", trainer.policy_state(), meta)
    close = getattr(trainer, "close", None)
    if close is not None:
        close()
    result = {"trainer": name, "minutes": minutes, "eval_seed": seed, "train_seed": train_seed,
              "curve": curve, "decisions_per_cpu_s": trainer.step / max(cpu, 1e-9)}
    (out / f"{name}.json").write_text(json.dumps(result, indent=1))
    return result


# ----------------------------------------------------------------------------------------------- output
COLORS = [(31, 119, 180), (214, 39, 40), (44, 160, 44), (148, 103, 189), (255, 127, 14)]


def plot(results: list[dict[str, Any]], path: Path, size: tuple[int, int] = (760, 440)) -> None:
    """Win rate vs CPU minutes, one line per trainer with its 95% band (Pillow, no plotting library)."""
    from PIL import Image, ImageDraw

    w, h = size
    left, right, top, bottom = 56, 190, 30, 44
    img = Image.new("RGB", (w, h), "white")
    d = ImageDraw.Draw(img, "RGBA")
    x1 = max(p["cpu_s"] for r in results for p in r["curve"]) / 60.0 or 1.0

    def px(minute: float, rate: float) -> tuple[float, float]:
        return left + minute / x1 * (w - left - right), top + (1.0 - rate) * (h - top - bottom)

    for i in range(11):
        y = px(0, i / 10)[1]
        d.line([(left, y), (w - right, y)], fill=(225, 225, 225))
        d.text((8, y - 6), f"{i * 10:3d}%", fill="black")
    for i in range(6):
        m = x1 * i / 5
        x = px(m, 0)[0]
        d.line([(x, h - bottom), (x, h - bottom + 4)], fill="black")
        d.text((x - 10, h - bottom + 8), f"{m:.1f}", fill="black")
    half = px(0, 0.5)[1]
    for x in range(left, w - right, 8):
        d.line([(x, half), (x + 4, half)], fill=(90, 90, 90))
    d.rectangle([left, top, w - right, h - bottom], outline="black")
    d.text((left + (w - left - right) // 2 - 80, h - 16), "CPU minutes of training (one core)", fill="black")
    d.text((left, 8), "greedy win rate vs heuristic (duplicate games, 95% CI), from scratch", fill="black")
    for k, r in enumerate(results):
        color = COLORS[k % len(COLORS)]
        pts = [(0.0, 0.0, 0.0, 0.0)] * 0 + [(p["cpu_s"] / 60, p["win_rate"], *p["ci95"]) for p in r["curve"]]
        if len(pts) > 1:
            d.polygon([px(m, hi) for m, _, _, hi in pts] + [px(m, lo) for m, _, lo, _ in reversed(pts)],
                      fill=(*color, 40))
            d.line([px(m, v) for m, v, _, _ in pts], fill=color, width=2)
        for m, v, _, _ in pts:
            x, y = px(m, v)
            d.ellipse([x - 3, y - 3, x + 3, y + 3], fill=color)
        ly = top + 10 + 18 * k
        d.line([(w - right + 12, ly + 5), (w - right + 32, ly + 5)], fill=color, width=3)
        d.text((w - right + 38, ly), f"{r['trainer']} {pts[-1][1]:.1%}", fill="black")
    path.parent.mkdir(parents=True, exist_ok=True)
    img.save(path, format="PNG")


def table(results: list[dict[str, Any]]) -> str:
    lines = ["| trainer | CPU min | decisions | decisions / CPU s | win rate vs heuristic [95% CI] "
             "| margin/hand | games |", "|---|---|---|---|---|---|---|"]
    for r in results:
        for p in r["curve"]:
            lo, hi = p["ci95"]
            lines.append(f"| {r['trainer']} | {p['cpu_s'] / 60:.1f} | {p['decisions']:,} | "
                         f"{p['decisions'] / max(p['cpu_s'], 1e-9):,.0f} | {100 * p['win_rate']:.1f}% "
                         f"[{100 * lo:.1f}, {100 * hi:.1f}] | {p['margin_per_hand']:+.3f} | {p['games']} |")
    lines += ratios(results)
    return "\n".join(lines)


def ratios(results: list[dict[str, Any]], reference: str = "maskable_ppo") -> list[str]:
    """Lines comparing the trainer with the best last win rate to ``reference`` at each point they share:
    the ratio of decisions per CPU second and of win rates (none when either is missing)."""
    ref = next((r for r in results if r["trainer"] == reference), None)
    others = [r for r in results if r["trainer"] != reference and r["curve"]]
    if ref is None or not others:
        return []
    best = max(others, key=lambda r: r["curve"][-1]["win_rate"])
    lines = ["", f"{best['trainer']} (the highest last win rate) against {reference}, point by point:", "",
             f"| CPU min | decisions / CPU s, ratio | win rate, ratio | {best['trainer']} ahead |",
             "|---|---|---|---|"]
    for p, q in zip(best["curve"], ref["curve"], strict=False):  # the points both have
        speed = (p["decisions"] / max(p["cpu_s"], 1e-9)) / max(q["decisions"] / max(q["cpu_s"], 1e-9), 1e-9)
        rate = f"{p['win_rate'] / q['win_rate']:,.1f}x" if q["win_rate"] > 0 else "no ratio (0 wins)"
        ahead = "yes" if p["ci95"][0] > q["ci95"][1] else "no (the intervals overlap)"
        lines.append(f"| {p['cpu_s'] / 60:.1f} | {speed:,.1f}x | {rate} ({100 * p['win_rate']:.1f}% vs "
                     f"{100 * q['win_rate']:.1f}%) | {ahead} |")
    return lines


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--minutes", type=float, default=3.0, help="CPU minutes of training per trainer")
    ap.add_argument("--points", type=int, default=3, help="evaluations per trainer (evenly spaced)")
    ap.add_argument("--games", type=int, default=2000, help="games per evaluation (duplicate, vs heuristic)")
    ap.add_argument("--trainers", default=",".join(TRAINERS))
    ap.add_argument("--jobs", type=int, default=1, help="trainers run at the same time (one process each)")
    ap.add_argument("--seed", type=int, default=9100, help="evaluation seed (the deals of every evaluation)")
    ap.add_argument("--train-seed", type=int, default=1, help="seed of every trainer")
    ap.add_argument("--out", default="runs/learning_curves")
    ap.add_argument("--png", default="docs/learning-curves.png")
    ap.add_argument("--table", default="docs/learning-curves.md")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: run one trainer in this process
    ap.add_argument("--plot-only", action="store_true", help="redraw from the JSON files in --out")
    args = ap.parse_args(argv)
    names = [t.strip() for t in args.trainers.split(",") if t.strip()]
    bad = [t for t in names if t not in TRAINERS]
    if bad or not names:
        print(f"error: unknown trainers {bad}; valid: {', '.join(TRAINERS)}", file=sys.stderr)
        return 2
    if not args.minutes > 0 or args.points < 1 or args.games < 2 or args.games % 2 or args.jobs < 1:
        print("error: need --minutes > 0, --points >= 1, --games an even number >= 2, --jobs >= 1",
              file=sys.stderr)
        return 2
    out = Path(args.out)
    if args.one:
        run_one(args.one, args.minutes, args.points, args.games, args.seed, args.train_seed, out)
        return 0
    if not args.plot_only:
        pending = list(names)
        running: list[subprocess.Popen] = []
        while pending or running:
            while pending and len(running) < args.jobs:
                t = pending.pop(0)
                python = interpreter(t)
                if python is None:
                    print(f"{t}: skipped: {RLLIB_PYTHON} is absent (make test-rllib builds it)",
                          file=sys.stderr)
                    continue
                cmd = [str(python), __file__, "--one", t, "--minutes", str(args.minutes), "--points",
                       str(args.points), "--games", str(args.games), "--seed", str(args.seed),
                       "--train-seed", str(args.train_seed), "--out", str(out), "--trainers", t]
                running.append(subprocess.Popen(cmd))
            time.sleep(2)
            for p in list(running):
                if p.poll() is not None:
                    running.remove(p)
                    if p.returncode:
                        print(f"error: {' '.join(p.args[2:5])} failed ({p.returncode})", file=sys.stderr)
    results = [json.loads((out / f"{t}.json").read_text()) for t in names if (out / f"{t}.json").is_file()]
    if not results:
        print("error: no results", file=sys.stderr)
        return 1
    plot(results, Path(args.png))
    text = table(results)
    Path(args.table).parent.mkdir(parents=True, exist_ok=True)
    Path(args.table).write_text(text + "\n")
    print(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
