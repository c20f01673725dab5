"""The evaluation figures that README.md's quick start and the model cards quote, checked against the results
files (``smear-eval --json``) they link.

A quoted figure is a win rate, with its 95% interval where it has one (``**61.45%** [59.3%, 63.6%]``) and
optionally the score margin with its interval (``+0.266 [+0.225, +0.302]``), followed -- in the same table
row, or in the same paragraph before any other link -- by a link to the JSON its command wrote
(``[json](smear_v0_scratch.eval_heuristic.json)``, relative to the document). The text between the previous
link and this one must quote the file's win rate (its last percentage) and, where it quotes one, its margin,
each to the digits shown, and name the file's opponent, its number of games and (unless 0) its seed. A
figure with an interval and no link after it is unsourced: an error too.

``python tools/figures.py check`` checks every document (``tests/test_figures.py`` runs it; exit status 1
on an error); ``python tools/figures.py show FILE...`` prints the figures of results files (``make run``).
A linked file that is missing is an error, unless it is one the Makefile writes into ``results/`` (``make
run``'s ``results/quickstart.*.json``): then it is *pending*, to be written and committed.
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DOCS = {"README.md": "## Quick start", "checkpoints/README.md": None, "checkpoints/SCRATCH.md": None}
"""The documents checked, with the heading of the only section checked (None: the whole document)."""

_PCT = r"(\d+(?:\.\d+)?)%"
FIGURE = re.compile(_PCT + r"\**(?:\s*\[" + _PCT + r"?,\s*" + _PCT + r"?\])?")
MARGIN = re.compile(r"([+\-−]\d+\.\d+)\s*\[([+\-−]\d+\.\d+),\s*([+\-−]\d+\.\d+)\]")
JSON_LINK = re.compile(r"\]\(([^)\s]+\.json)\)")


def _num(text: str) -> float:
    return float(text.replace("−", "-"))


def _agrees(shown: str, value: float) -> bool:
    """Whether ``shown`` (a figure as the text writes it) is ``value`` to the digits shown."""
    digits = len(shown.split(".")[1]) if "." in shown else 0
    return abs(_num(shown) - value) <= 0.5 * 10 ** -digits + 1e-9


def blocks(text: str) -> list[str]:
    """The units a figure and its link must share: each table row, each paragraph (its lines joined)."""
    out: list[str] = []
    for para in re.split(r"\n\s*\n", text):
        lines = para.strip().splitlines()
        if lines and lines[0].lstrip().startswith("|"):
            out += lines
        elif lines:
            out.append(" ".join(line.strip() for line in lines))
    return out


def section(text: str, heading: str | None) -> str:
    """``text`` from ``heading`` to the next heading of the same level (all of it for None)."""
    if heading is None:
        return text
    start = text.index(heading)
    level = heading.split(" ")[0] + " "
    rest = text[start + len(heading):]
    end = re.search(rf"^{re.escape(level)}", rest, re.M)
    return text[start:start + len(heading) + (end.start() if end else len(rest))]


def check_segment(segment: str, result: dict[str, Any], where: str) -> list[str]:
    """The disagreements between a text segment and the results file it links."""
    errors = []
    figures = list(FIGURE.finditer(segment))
    if not figures:
        return [f"{where}: no win rate before the link"]
    win = figures[-1]
    lo, hi = result["win_rate_a_ci95"]
    if not _agrees(win.group(1), 100 * result["win_rate_a"]):
        errors.append(f"{where}: win rate {win.group(1)}% but the file has {100 * result['win_rate_a']:.4g}%")
    if win.group(2) is not None and not (_agrees(win.group(2), 100 * lo) and _agrees(win.group(3), 100 * hi)):
        errors.append(f"{where}: interval [{win.group(2)}%, {win.group(3)}%] but the file has "
                      f"[{100 * lo:.4g}%, {100 * hi:.4g}%]")
    margin = MARGIN.search(segment, win.end())
    if margin is not None:
        m, (mlo, mhi) = result["margin_per_hand_a"], result["margin_per_hand_a_ci95"]
        if not all(_agrees(s, v) for s, v in zip(margin.groups(), (m, mlo, mhi), strict=True)):
            errors.append(f"{where}: margin {margin.group(0)} but the file has {m:+.3f} "
                          f"[{mlo:+.3f}, {mhi:+.3f}]")
    games = result["games"]
    if not re.search(rf"(?<![\d,]){games}(?![\d,])|(?<![\d,]){games:,}(?![\d,])", segment):
        errors.append(f"{where}: does not say the file's {games:,} games")
    if result["seed"] != 0 and not re.search(rf"(?<!\d){result['seed']}(?!\d)", segment):
        errors.append(f"{where}: does not say the file's seed {result['seed']}")
    if result["team_b"] not in segment:
        errors.append(f"{where}: does not name the file's opponent {result['team_b']!r}")
    return errors


def check(root: Path = ROOT) -> tuple[list[str], list[str]]:
    """``(errors, pending)`` over :data:`DOCS`: the disagreements, and the linked files that the Makefile
    writes but that are not there yet."""
    errors: list[str] = []
    pending: list[str] = []
    makefile = (root / "Makefile").read_text()
    for doc, heading in DOCS.items():
        path = root / doc
        for k, block in enumerate(blocks(section(path.read_text(), heading))):
            where = f"{doc}, block {k + 1} ({block[:50]!r}...)"
            last = 0
            for link in JSON_LINK.finditer(block):
                segment, last = block[last:link.start()], link.end()
                target = (path.parent / link.group(1)).resolve()
                rel = target.relative_to(root.resolve()).as_posix()
                if not target.is_file():
                    if rel.startswith("results/") and Path(rel).name in makefile:
                        pending.append(rel)
                    else:
                        errors.append(f"{where}: links {link.group(1)!r}, which does not exist")
                    continue
                errors += check_segment(segment, json.loads(target.read_text()), f"{where} -> {rel}")
            tail = block[last:]
            unsourced = [m.group(0) for m in FIGURE.finditer(tail) if m.group(2) is not None]
            if unsourced:
                errors.append(f"{where}: {unsourced[0]!r} has no results file linked after it")
    return errors, pending


def show(paths: list[str]) -> None:
    """One line per results file: who played whom, games, seed, win rate and margin with their intervals."""
    for p in paths:
        r = json.loads(Path(p).read_text())
        lo, hi = r["win_rate_a_ci95"]
        m, (mlo, mhi) = r["margin_per_hand_a"], r["margin_per_hand_a_ci95"]
        print(f"{r['team_a']} vs {r['team_b']}: {r['games']:,} games, seed {r['seed']}: "
              f"{100 * r['win_rate_a']:.1f}% [{100 * lo:.1f}%, {100 * hi:.1f}%], margin {m:+.3f} "
              f"[{mlo:+.3f}, {mhi:+.3f}] per hand ({p})")


def main(argv: list[str]) -> int:
    if argv[:1] == ["show"] and len(argv) > 1:
        show(argv[1:])
        return 0
    if argv == ["check"]:
        errors, pending = check()
        for e in errors:
            print(f"error: {e}", file=sys.stderr)
        for p in pending:
            print(f"pending: {p} (written by make run; commit it)", file=sys.stderr)
        return 1 if errors else 0
    print("usage: python tools/figures.py check | show RESULTS.json...", file=sys.stderr)
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
