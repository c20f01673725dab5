"""The size figures the package's budgets are stated in, from the source of a checkout.

    python tools/line_budgets.py [ROOT]

- ``training/``: the lines of its ``.py`` files (``find training -name '*.py' | xargs wc -l``);
- the config machinery: ``training/config_files.py``, ``training/config.py`` without its pydantic section
  models (the classes deriving from ``Section``, decorators included) and ``training/configs/base.py``
  without ``AlgorithmConfig`` and ``UpdateConfig`` (the fields of the configs are not machinery): physical
  lines, and code lines (not blank, not a comment-only line, not a line of a docstring or other bare
  string);
- ``smear_env/``: its modules over 600 lines and the modules at its root.
"""

from __future__ import annotations

import ast
import io
import sys
import tokenize
from collections.abc import Callable
from pathlib import Path


def machinery_lines(path: Path, excluded: Callable[[ast.ClassDef], bool]) -> tuple[int, int]:
    """(physical, code) lines of ``path`` outside its top-level classes for which ``excluded`` holds."""
    src = path.read_text()
    lines = src.splitlines()
    tree = ast.parse(src)
    drop: set[int] = set()
    for node in tree.body:
        if isinstance(node, ast.ClassDef) and excluded(node):
            start = min([node.lineno] + [d.lineno for d in node.decorator_list])
            drop.update(range(start, (node.end_lineno or node.lineno) + 1))
    strings = {i for node in ast.walk(tree)
               if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant)
               and isinstance(node.value.value, str)
               for i in range(node.lineno, (node.end_lineno or node.lineno) + 1)}
    comments = {tok.start[0] for tok in tokenize.generate_tokens(io.StringIO(src).readline)
                if tok.type == tokenize.COMMENT and not lines[tok.start[0] - 1].split("#")[0].strip()}
    kept = [i for i in range(1, len(lines) + 1) if i not in drop]
    code = [i for i in kept if lines[i - 1].strip() and i not in strings and i not in comments]
    return len(kept), len(code)


def main(root: Path) -> None:
    training = sum(len(p.read_text().splitlines()) for p in (root / "training").rglob("*.py"))
    print(f"training/: {training} lines")
    parts = [
        ("training/config_files.py", lambda n: False),
        ("training/config.py", lambda n: any(getattr(b, "id", None) == "Section" for b in n.bases)),
        ("training/configs/base.py", lambda n: n.name in ("AlgorithmConfig", "UpdateConfig")),
    ]
    physical = code = 0
    for name, excluded in parts:
        p, c = machinery_lines(root / name, excluded)
        print(f"  {name}: {p} lines of machinery ({c} of code)")
        physical, code = physical + p, code + c
    print(f"config machinery: {physical} lines ({code} of code)")
    sizes = sorted(((len(p.read_text().splitlines()), p.relative_to(root)) for p in
                    (root / "smear_env").rglob("*.py")), reverse=True)
    big = ", ".join(f"{p} ({n})" for n, p in sizes if n > 600)
    print("smear_env/ modules over 600 lines:", big or "none")
    print("smear_env/ root modules:", ", ".join(sorted(p.name for p in (root / "smear_env").glob("*.py"))))


if __name__ == "__main__":
    main(Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent))
