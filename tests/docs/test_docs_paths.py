"""Every module and source path the docstrings and the docs name exists.

Read: the docstrings (module, class, function) of every module under core/, cli/ and tui/,
and README.md and docs/*.md. Checked:

* a dotted module path ``promptdeck.<core|cli|tui|themes>.…``: each part names a package or
  module, and what follows the last module (an attribute, ``bundle.prepare_demo``) is a name
  that module defines, imports or exports;
* in a docstring, a cross-reference role whose target starts with a dot
  (``:mod:`.choices```, ``:func:`~..layers.delivery```): resolved as a relative import from
  the module's package (each further dot a package up), else from the module itself, and
  checked the same way;
* a source path starting with ``core/``, ``cli/``, ``tui/``, ``themes/``, ``tests/`` or
  ``bench/`` that ends in a file's suffix or in ``/``: that file or folder exists. A path
  written as a pattern (``<story>``, ``{a,b}``, ``*``, ``…``) is not checked.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from doc_pages import ROOT, pages, relative

PACKAGES = {"core": "core", "cli": "cli", "tui": "tui", "themes": "themes"}
"""``promptdeck.<name>`` → its folder in the checkout."""

_DOTTED = re.compile(r"\bpromptdeck\.(?:core|cli|tui|themes)(?:\.[A-Za-z_]\w*)*")
_SOURCE = re.compile(
    r"(?<![\w./-])((?:core|cli|tui|themes|tests|bench)/[\w./-]*?(?:\.(?:py|tcss|toml|md|svg|json)|/))"
    r"(?![\w<{*…-])"
)
_SKIP_TREES = ("core/demo/workspace",)
_ROLE = re.compile(r":(?:mod|func|class|meth|attr|data|obj|exc):`~?(\.[\w.]+)`")


def _sources() -> list[Path]:
    found = []
    for top in ("core", "cli", "tui"):
        for path in sorted((ROOT / top).rglob("*.py")):
            if not relative(path).startswith(_SKIP_TREES):
                found.append(path)
    return found


def _docstrings(path: Path) -> Iterator[tuple[int, str]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            text = ast.get_docstring(node, clean=False)
            if text is not None:
                yield node.body[0].lineno, text


def _top_level_names(module: Path) -> set[str]:
    """What ``module`` defines, imports or exports at its top level (read, never imported):
    functions, classes, assignments, imports, and the names a top-level table lists as strings
    (``__all__``, a lazy export table)."""
    tree = ast.parse(module.read_text(encoding="utf-8"))
    names: set[str] = set()
    statements = list(tree.body)
    while statements:
        node = statements.pop()
        if isinstance(node, ast.If | ast.Try):  # `if TYPE_CHECKING:`, a guarded import
            statements += [*node.body, *node.orelse, *getattr(node, "finalbody", [])]
        elif isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            names |= {(alias.asname or alias.name).split(".")[0] for alias in node.names}
        elif isinstance(node, ast.Assign | ast.AnnAssign | ast.AugAssign):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names |= {
                name.id
                for target in targets
                for name in ast.walk(target)
                if isinstance(name, ast.Name)
            }
            if node.value is not None:
                names |= {
                    c.value
                    for c in ast.walk(node.value)
                    if isinstance(c, ast.Constant) and isinstance(c.value, str)
                }
    return names


def dotted_problem(dotted: str) -> str | None:
    """Why ``promptdeck.x.y`` names nothing, or None when it resolves."""
    parts = dotted.split(".")[1:]
    here = ROOT / PACKAGES[parts[0]]
    for index, part in enumerate(parts[1:], start=1):
        if (here / part / "__init__.py").exists():
            here = here / part
            continue
        if (here / f"{part}.py").exists():
            here = here / f"{part}.py"
            rest = parts[index + 1 :]
            break
        init = here / "__init__.py"
        rest = parts[index:]
        here = init
        break
    else:
        return None
    if not rest:
        return None
    if here.name == "__init__.py" and not here.exists():
        return f"no package {here.parent.relative_to(ROOT)}"
    if rest[0] not in _top_level_names(here):
        return f"{relative(here)} has no {rest[0]!r}"
    return None


def source_problem(path: str) -> str | None:
    """Why a source path names nothing, or None when it exists."""
    return None if (ROOT / path).exists() else "no such file or folder"


def _problems(where: str, text: str) -> list[str]:
    problems = []
    for dotted in _DOTTED.findall(text):
        why = dotted_problem(dotted)
        if why is not None:
            problems.append(f"{where}: {dotted}: {why}")
    for path in _SOURCE.findall(text):
        why = source_problem(path)
        if why is not None:
            problems.append(f"{where}: {path}: {why}")
    return problems


def _module_name(source: Path) -> str:
    parts = list(source.relative_to(ROOT).with_suffix("").parts)
    return ".".join(["promptdeck", *parts[: -1 if parts[-1] == "__init__" else None]])


def relative_role_problem(source: Path, target: str) -> str | None:
    """Why a role's relative target (``.x.y``) in ``source``'s docstrings names nothing."""
    module = _module_name(source)
    package = module if source.name == "__init__.py" else module.rsplit(".", 1)[0]
    dots = len(target) - len(target.lstrip("."))
    base = package.rsplit(".", dots - 1)[0] if dots > 1 else package  # `..x`: one package up
    tried = [f"{base}.{target.lstrip('.')}", f"{module}.{target.lstrip('.')}"]
    if any(dotted_problem(dotted) is None for dotted in tried):
        return None
    return f"neither {tried[0]} nor {tried[1]}"


@pytest.mark.parametrize("source", _sources(), ids=relative)
def test_docstring_paths_resolve(source: Path) -> None:
    problems = []
    for line, text in _docstrings(source):
        where = f"{relative(source)}:{line}"
        problems += _problems(where, text)
        for target in _ROLE.findall(text):
            why = relative_role_problem(source, target)
            if why is not None:
                problems.append(f"{where}: {target}: {why}")
    assert problems == []


@pytest.mark.parametrize("page", pages(), ids=relative)
def test_page_paths_resolve(page: Path) -> None:
    problems = []
    for number, text in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1):
        problems += _problems(f"{relative(page)}:{number}", text)
    assert problems == []


def test_a_moved_module_is_caught() -> None:
    assert dotted_problem("promptdeck.core.tokens.counter") is None
    assert dotted_problem("promptdeck.core.demo.bundle.prepare_demo") is None
    assert dotted_problem("promptdeck.core.tokens.no_such_module") is not None
    assert dotted_problem("promptdeck.core.no_such_room.counter") is not None
    assert dotted_problem("promptdeck.core.tokens.counter.no_such_name") is not None
    choices = ROOT / "core" / "injection" / "builder.py"
    assert relative_role_problem(choices, ".choices") is None
    assert relative_role_problem(choices, ".file_choice") is not None
    model = ROOT / "core" / "stories" / "model.py"
    assert relative_role_problem(model, ".STATUSES") is None
    assert relative_role_problem(model, ".model.stories.STATUSES") is not None
    assert source_problem("core/tokens/counter.py") is None
    assert source_problem("core/counter.py") is not None
    assert _SOURCE.findall("see core/run/plan.py and tui/session/ but not core/<room>/x.py") == [
        "core/run/plan.py",
        "tui/session/",
    ]
