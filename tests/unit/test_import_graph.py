"""The import graph of ``promptdeck`` has no cycles.

Every ``import`` statement counts, function-local ones included: an import moved inside a
function still ties the two modules together, it only hides the tie from the reader. Imports
under ``if TYPE_CHECKING:`` are left out, since they never run.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# Where each subpackage of ``promptdeck`` lives in the source tree (pyproject's package-dir).
PACKAGE_DIRS = {"promptdeck.core": "core", "promptdeck.tui": "tui", "promptdeck.themes": "themes"}
if (ROOT / "cli" / "__init__.py").exists():
    PACKAGE_DIRS["promptdeck.cli"] = "cli"
# Folders of data that hold Python files which are never imported from the package.
DATA_DIRS = ("demo/workspace", "templates", "assets", "personas")


def _modules() -> dict[str, Path]:
    """Every importable module of the package, by dotted name."""
    found: dict[str, Path] = {}
    for package, folder in PACKAGE_DIRS.items():
        base = ROOT / folder
        for path in sorted(base.rglob("*.py")):
            rel = path.relative_to(base)
            if any(rel.as_posix().startswith(d) for d in DATA_DIRS):
                continue
            parts = list(rel.with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join([package, *parts])] = path
    return found


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _imported(
    tree: ast.AST, module: str, is_package: bool, modules: frozenset[str] = frozenset()
) -> set[str]:
    """The dotted names ``tree`` imports, relative imports resolved against ``module``.

    ``from . import sibling`` (every name a module of ``modules``) names the sibling modules
    only: the package is the importer's own, initialised before the importer runs, so it is no
    edge. A name the package itself defines (``from . import start_run``) stays an edge to it.
    """
    names: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = module.split(".")
                drop = node.level - 1 if is_package else node.level
                anchor = anchor[: len(anchor) - drop]
                base = ".".join([*anchor, node.module] if node.module else anchor)
            else:
                base = node.module or ""
            submodules = [f"{base}.{alias.name}" for alias in node.names]
            own_package = module.startswith(base + ".")
            if not (own_package and all(name in modules for name in submodules)):
                names.add(base)
            names.update(submodules)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return names


def import_graph() -> dict[str, set[str]]:
    """Each module of the package and the modules of the package it imports."""
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        targets = _imported(tree, name, path.name == "__init__.py", frozenset(modules))
        graph[name] = {t for t in targets if t in modules and t != name}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = 0
    for root in sorted(graph):
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_walk_sees_the_whole_package_and_its_function_local_imports() -> None:
    graph = import_graph()
    assert "promptdeck.core.project.config" in graph
    assert "promptdeck.tui.app" in graph
    # A function-local import is an edge like any other.
    tree = ast.parse("def f():\n    from .b import c\n")
    assert "pkg.b" in _imported(tree, "pkg.a", is_package=False)


def test_a_sibling_module_imported_from_the_own_package_is_no_edge_to_the_package() -> None:
    modules = frozenset({"pkg", "pkg.a", "pkg.b"})
    sibling = ast.parse("from . import b\n")
    assert _imported(sibling, "pkg.a", is_package=False, modules=modules) == {"pkg.b"}
    # A name the package's __init__ defines is an edge to the package: it may be half built.
    name = ast.parse("from . import start\n")
    assert "pkg" in _imported(name, "pkg.a", is_package=False, modules=modules)
    # Another package's module, imported as a module, still ties to that package.
    other = ast.parse("from ..other import c\n")
    found = _imported(other, "pkg.sub.a", is_package=False, modules=modules | {"pkg.other.c"})
    assert "pkg.other" in found


def test_the_cycle_finder_reports_a_cycle_it_is_shown() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_the_package_import_graph_has_no_cycles() -> None:
    found = cycles(import_graph())
    assert found == [], "import cycles:\n" + "\n".join(" <-> ".join(c) for c in found)
