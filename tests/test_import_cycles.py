"""No import cycle among the smear_env modules: the static import graph (every import statement, at module
level or inside a function, except ``if TYPE_CHECKING:`` and ``if __name__ == "__main__":`` blocks, which
never run on import) has no cycle."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _guarded(node: ast.If) -> bool:
    """``if TYPE_CHECKING:`` / ``if typing.TYPE_CHECKING:`` / ``if __name__ == "__main__":``."""
    t = node.test
    if isinstance(t, ast.Name | ast.Attribute):
        return (t.id if isinstance(t, ast.Name) else t.attr) == "TYPE_CHECKING"
    return (isinstance(t, ast.Compare) and isinstance(t.left, ast.Name) and t.left.id == "__name__"
            and len(t.comparators) == 1 and isinstance(t.comparators[0], ast.Constant)
            and t.comparators[0].value == "__main__")


def import_graph(package: str, root: Path = ROOT) -> dict[str, dict[str, int]]:
    """Module -> {imported module of the same package: first line importing it}."""
    paths = {}
    for p in (root / package).rglob("*.py"):
        parts = list(p.relative_to(root).with_suffix("").parts)
        paths[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = p
    graph: dict[str, dict[str, int]] = {}
    for mod, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        base = mod.split(".") if path.name == "__init__.py" else mod.split(".")[:-1]
        skip = {id(n) for g in ast.walk(tree) if isinstance(g, ast.If) and _guarded(g) for n in ast.walk(g)}
        edges: dict[str, int] = {}
        for node in ast.walk(tree):
            if id(node) in skip:
                continue
            if isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    m = ".".join(base[: len(base) - node.level + 1] + ([node.module] if node.module else []))
                else:
                    m = node.module or ""
                targets = [f"{m}.{a.name}" if f"{m}.{a.name}" in paths else m for a in node.names]
            else:
                continue
            for t in targets:
                if t in paths and t != mod:
                    edges.setdefault(t, node.lineno)
        graph[mod] = edges
    return graph


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """The strongly connected components with more than one module (each a set of mutual imports)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    out: list[list[str]] = []

    def visit(v: str) -> None:  # Tarjan's algorithm; the graph is small (a recursion per module)
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def _describe(graph: dict[str, dict[str, int]], comp: list[str]) -> str:
    return "; ".join(f"{a}:{line} imports {b}" for a in comp for b, line in graph[a].items() if b in comp)


def test_no_import_cycle_among_smear_env_modules():
    graph = import_graph("smear_env")
    assert len(graph) > 40 and "smear_env.core.rules" in graph["smear_env.engine.game"]
    found = cycles(graph)
    assert not found, "import cycles: " + " | ".join(_describe(graph, c) for c in found)


def test_the_cycle_check_finds_a_cycle_and_skips_guarded_imports(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("def f():\n    from .b import g\n")
    (pkg / "b.py").write_text("from . import c\n")
    (pkg / "c.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .a import f\n"
                              "if __name__ == '__main__':\n    from pkg.a import f\n")
    graph = import_graph("pkg", tmp_path)
    assert graph["pkg.a"] == {"pkg.b": 2} and graph["pkg.b"] == {"pkg.c": 1} and graph["pkg.c"] == {}
    assert cycles(graph) == []
    (pkg / "c.py").write_text("import pkg.a\n")
    assert cycles(import_graph("pkg", tmp_path)) == [["pkg.a", "pkg.b", "pkg.c"]]


def sibling_graph(graph: dict[str, dict[str, int]], package: str) -> dict[str, dict[str, int]]:
    """The imports among the children of ``package``, each child standing for itself and every module below
    it (what import-linter's acyclic_siblings contract checks, lazy imports included)."""
    prefix = package + "."

    def child(mod: str) -> str | None:
        return prefix + mod[len(prefix):].split(".")[0] if mod.startswith(prefix) else None

    out: dict[str, dict[str, int]] = {c: {} for m in graph if (c := child(m))}
    for mod, edges in graph.items():
        a = child(mod)
        for target, line in edges.items():
            b = child(target)
            if a and b and a != b:
                out[a].setdefault(b, line)
    return out


@pytest.mark.parametrize("root", ["smear_env", "training"])
def test_no_import_cycle_among_the_siblings_of_a_package(root):
    """A package's modules and subpackages import each other one way only: the training config does not import
    the trainers and stages that import it (training.configs is below them), and so on for every package."""
    graph = import_graph(root)
    packages = sorted({m for m in graph if any(o.startswith(m + ".") for o in graph)})
    assert "training.configs" in packages or root != "training"
    found = [(p, c) for p in packages for c in cycles(sibling_graph(graph, p))]
    assert not found, "sibling import cycles: " + " | ".join(f"in {p}: {' <-> '.join(c)}" for p, c in found)


def test_the_sibling_check_sees_a_cycle_through_subpackages(tmp_path):
    pkg = tmp_path / "pkg"
    (pkg / "sub").mkdir(parents=True)
    for f in ("__init__.py", "sub/__init__.py", "sub/x.py"):
        (pkg / f).write_text("")
    (pkg / "sub" / "y.py").write_text("def f():\n    from .. import a\n")
    (pkg / "a.py").write_text("from .sub import x\n")
    graph = import_graph("pkg", tmp_path)
    assert graph["pkg.a"] == {"pkg.sub.x": 1} and graph["pkg.sub.y"] == {"pkg.a": 2}
    assert cycles(graph) == [] and cycles(sibling_graph(graph, "pkg")) == [["pkg.a", "pkg.sub"]]
