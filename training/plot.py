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
from typing import Any

from PIL import Image, ImageDraw

from smear_env.evaluation.cli import same_file

from .checkpoint import write_atomic

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


def draw(panels: list[dict[str, Any]], out: str | Path, title: str, x_label: str, size: tuple[int, int],
         legend: bool = False) -> Path:
    """Panels stacked top to bottom sharing the x axis, each ``{"title", "curves", "lo", "hi", "ref",
    "fmt"}`` (``curves``: name -> ``[(x, value, interval low, interval high), ...]`` sorted by x; the y range,
    a dashed reference line, the y labels' format); every curve a line with its interval as a shaded band;
    ``legend``: the curves' names and last values at the right. Written atomically as a PNG; returns its
    path."""
    w, h = size
    left, right, top, gap, bottom = 56, 150 if legend else 24, 42, 46, 44
    ph = (h - top - bottom - gap * (len(panels) - 1)) // len(panels)
    img = Image.new("RGB", (w, h), "white")
    d = ImageDraw.Draw(img, "RGBA")
    xs = [p[0] for panel in panels for pts in panel["curves"].values() for p in pts]
    x0, x1 = min(xs), max(max(xs), min(xs) + 1)

    def px(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * (w - left - right)

    for k, panel in enumerate(panels):
        y_top, ylo, yhi = top + k * (ph + gap), panel["lo"], panel["hi"]

        def py(v: float, y_top: int = y_top, ylo: float = ylo, yhi: float = yhi) -> float:
            return y_top + (1.0 - (v - ylo) / (yhi - ylo)) * ph

        for i in range(6):
            y = py(ylo + (yhi - ylo) * i / 5)
            d.line([(left, y), (w - right, y)], fill=(225, 225, 225))
            d.text((6, y - 6), format(ylo + (yhi - ylo) * i / 5, panel["fmt"]), fill="black")
        for x in range(left, w - right, 8):
            d.line([(x, py(panel["ref"])), (x + 4, py(panel["ref"]))], fill=(90, 90, 90))
        d.rectangle([left, y_top, w - right, y_top + ph], outline="black")
        d.text((left, y_top - 14), panel["title"], fill="black")
        for c, (name, pts) in enumerate(sorted(panel["curves"].items())):
            color = panel.get("color") or COLORS[c % len(COLORS)]
            if len(pts) > 1:
                d.polygon([(px(x), py(hi)) for x, _, _, hi in pts]
                          + [(px(x), py(lo)) for x, _, lo, _ in reversed(pts)], fill=(*color, 40))
                d.line([(px(x), py(v)) for x, v, _, _ in pts], fill=color, width=2)
            for x, v, _, _ in pts:
                d.ellipse([px(x) - 3, py(v) - 3, px(x) + 3, py(v) + 3], fill=color)
            if legend:
                ly = y_top + 10 + 18 * c
                d.line([(w - right + 12, ly + 5), (w - right + 32, ly + 5)], fill=color, width=3)
                d.text((w - right + 38, ly), f"{name} {format(pts[-1][1], panel['fmt'])}", fill="black")
    for i in range(6):
        s = x0 + (x1 - x0) * i / 5
        d.line([(px(s), h - bottom), (px(s), h - bottom + 4)], fill="black")
        d.text((px(s) - 12, h - bottom + 8), fmt_step(s), fill="black")
    d.text((left + (w - left - right) // 2 - 3 * len(x_label), h - 16), x_label, fill="black")
    d.text((left, 6), title, fill="black")
    out = Path(out)
    write_atomic(out, lambda tmp: img.save(tmp, format="PNG"))  # a failed write leaves the old plot
    return out


def plot(curves: dict[str, list[tuple[int, float, float, float]]], out: str | Path, title: str = "",
         size: tuple[int, int] = (720, 440)) -> Path:
    """Draw ``curves`` (see :func:`read_curves`) into the PNG ``out``; returns its path."""
    if not curves:
        raise ValueError("no evaluation entries to plot")
    panel = {"title": "", "curves": curves, "lo": 0.0, "hi": 1.0, "ref": 0.5, "fmt": ".0%"}
    return draw([panel], out, title or "greedy win rate vs baselines (duplicate games, 95% CI)",
                "learner decisions", size, legend=True)


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
