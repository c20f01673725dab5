"""Win rate vs training steps, as a PNG, from a run's ``train.log`` (its evaluation entries).

    python -m training.plot runs/scratch                 # writes runs/scratch/win_rate.png
    python -m training.plot runs/scratch/train.log --out curve.png

One line per evaluation opponent (greedy policy, duplicate games), with its 95% interval as a shaded band
and a dashed line at 50%. ``smear-train`` writes ``win_rate.png`` into the run folder at the end of a run.
Drawn with Pillow (its built-in bitmap font), no plotting library needed.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from PIL import Image, ImageDraw

from .checkpoint import same_file, write_atomic

COLORS = [(31, 119, 180), (214, 39, 40), (44, 160, 44), (148, 103, 189), (255, 127, 14), (140, 86, 75)]


def read_curves(log: str | Path) -> dict[str, list[tuple[int, float, float, float]]]:
    """``{opponent: [(step, win rate, ci low, ci high), ...]}`` from the ``eval`` entries of a train.log
    (sorted by step; other lines are skipped)."""
    curves: dict[str, list[tuple[int, float, float, float]]] = {}
    for line in Path(log).read_text(encoding="utf-8").splitlines():
        try:
            rec = json.loads(line)
        except json.JSONDecodeError:
            continue
        ev = rec.get("eval") if isinstance(rec, dict) else None
        if not isinstance(ev, dict) or not _finite(ev.get("win_rate")) or not _finite(rec.get("step", 0)):
            continue
        rate = float(ev["win_rate"])
        ci = ev.get("ci95")
        lo, hi = (ci[:2] if isinstance(ci, list) and len(ci) >= 2 and all(_finite(v) for v in ci[:2])
                  else (rate, rate))  # an interval that could not be computed: the point alone
        curves.setdefault(str(ev.get("opponent")), []).append(
            (int(rec.get("step", 0)), rate, float(lo), float(hi)))
    for pts in curves.values():
        pts.sort()
    return curves


def _finite(x: object) -> bool:
    """Whether ``x`` is a finite number (not a bool, not None)."""
    return isinstance(x, int | float) and not isinstance(x, bool) and math.isfinite(x)


def fmt_step(s: float) -> str:
    """A step count for an axis label: ``"1.5M"``, ``"300k"``, ``"40"``."""
    if s >= 1e6:
        return f"{s / 1e6:.3g}M"
    if s >= 1e3:
        return f"{s / 1e3:.3g}k"
    return f"{s:.0f}"


def plot(curves: dict[str, list[tuple[int, float, float, float]]], out: str | Path, title: str = "",
         size: tuple[int, int] = (720, 440)) -> Path:
    """Draw ``curves`` (see :func:`read_curves`) into the PNG ``out``; returns its path."""

    if not curves:
        raise ValueError("no evaluation entries to plot")
    w, h = size
    left, right, top, bottom = 56, 150, 30, 44
    img = Image.new("RGB", (w, h), "white")
    d = ImageDraw.Draw(img, "RGBA")
    steps = [p[0] for pts in curves.values() for p in pts]
    x0, x1 = min(steps), max(steps)
    if x1 == x0:
        x1 = x0 + 1

    def px(step: float, rate: float) -> tuple[float, float]:
        return (left + (step - x0) / (x1 - x0) * (w - left - right),
                top + (1.0 - rate) * (h - top - bottom))

    for i in range(11):  # horizontal grid, y labels
        y = px(x0, i / 10)[1]
        d.line([(left, y), (w - right, y)], fill=(225, 225, 225))
        d.text((8, y - 6), f"{i * 10:3d}%", fill="black")
    for i in range(6):  # x ticks
        s = x0 + (x1 - x0) * i / 5
        x = px(s, 0)[0]
        d.line([(x, h - bottom), (x, h - bottom + 4)], fill="black")
        d.text((x - 12, h - bottom + 8), fmt_step(s), fill="black")
    half = px(x0, 0.5)[1]
    for x in range(left, w - right, 8):
        d.line([(x, half), (x + 4, half)], fill=(90, 90, 90))
    d.rectangle([left, top, w - right, h - bottom], outline="black")
    d.text((left + (w - left - right) // 2 - 60, h - 16), "learner decisions", fill="black")
    d.text((left, 8), title or "greedy win rate vs baselines (duplicate games, 95% CI)", fill="black")
    for k, (name, pts) in enumerate(sorted(curves.items())):
        color = COLORS[k % len(COLORS)]
        upper = [px(s, hi) for s, _, _, hi in pts]
        lower = [px(s, lo) for s, _, lo, _ in reversed(pts)]
        if len(pts) > 1:
            d.polygon(upper + lower, fill=(*color, 40))
        line = [px(s, r) for s, r, _, _ in pts]
        if len(line) > 1:
            d.line(line, fill=color, width=2)
        for x, y in line:
            d.ellipse([x - 3, y - 3, x + 3, y + 3], fill=color)
        ly = top + 10 + 18 * k
        d.line([(w - right + 12, ly + 5), (w - right + 32, ly + 5)], fill=color, width=3)
        d.text((w - right + 38, ly), f"{name} {pts[-1][1]:.0%}", fill="black")

    out = Path(out)
    write_atomic(out, lambda tmp: img.save(tmp, format="PNG"))  # a failed write leaves the old plot
    return out


def plot_run(path: str | Path, out: str | Path | None = None) -> Path:
    """Plot a run folder's (or a train.log file's) evaluations; default output ``win_rate.png`` next to
    the log."""

    path = Path(path)
    log = path / "train.log" if path.is_dir() else path
    if not log.is_file():
        raise FileNotFoundError(f"no train.log at {str(log)!r}")
    out = Path(out) if out is not None else log.parent / "win_rate.png"
    if same_file(out, log):
        raise ValueError(f"the output {str(out)!r} is the log being read; pick another --out")
    return plot(read_curves(log), out, title="")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m training.plot", description=__doc__.split("\n\n")[0])
    ap.add_argument("run", help="run folder or train.log file")
    ap.add_argument("--out", help="PNG to write (default: win_rate.png next to train.log)")
    args = ap.parse_args(argv)
    try:
        path = plot_run(args.run, args.out)
    except (FileNotFoundError, ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
