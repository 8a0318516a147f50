"""The faces (the CLI, the app, the themes) reach the engine through the rooms' faces.

Every name ``cli/``, ``tui/`` and ``themes/`` import from the engine comes from
``promptdeck.core``, from a room (``promptdeck.core.<room>``, listed in its ``__all__``) or from
a shared word at the top of ``core/`` (``promptdeck.core.errors``), never from a module behind
a room; and every name a face lists exists. A room's ``__init__.py`` says what it does.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
CORE = ROOT / "core"
FACES = {"promptdeck.cli": "cli", "promptdeck.tui": "tui", "promptdeck.themes": "themes"}
ROOMS = sorted(p.parent.name for p in CORE.glob("*/__init__.py"))
ROOM_SIZE_LIMIT = 13


def _engine_imports() -> list[tuple[str, int, str, str]]:
    """(file, line, module, name) for every engine import in the faces, relative ones resolved."""
    found: list[tuple[str, int, str, str]] = []
    for package, folder in FACES.items():
        for path in sorted((ROOT / folder).rglob("*.py")):
            rel = path.relative_to(ROOT / folder)
            anchor = [*package.split("."), *rel.parent.parts]
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
            for node in ast.walk(tree):
                if isinstance(node, ast.ImportFrom):
                    if node.level:
                        base = anchor[: len(anchor) - (node.level - 1)]
                        module = ".".join([*base, node.module] if node.module else base)
                    else:
                        module = node.module or ""
                    for alias in node.names:
                        found.append((str(path.relative_to(ROOT)), node.lineno, module, alias.name))
                elif isinstance(node, ast.Import):
                    for alias in node.names:
                        found.append((str(path.relative_to(ROOT)), node.lineno, alias.name, ""))
    return [f for f in found if f[2] == "promptdeck.core" or f[2].startswith("promptdeck.core.")]


def test_the_walk_finds_the_faces_engine_imports() -> None:
    modules = {module for _, _, module, _ in _engine_imports()}
    # The app and the CLI both use the run room and the shared errors.
    assert "promptdeck.core.run" in modules
    assert "promptdeck.core.errors" in modules


def test_no_face_imports_a_module_behind_a_room() -> None:
    behind = [
        f"{file}:{line}: {module}"
        for file, line, module, _ in _engine_imports()
        if len(module.split(".")) > 3
    ]
    assert behind == []


def test_every_name_the_faces_use_resolves_through_a_face() -> None:
    missing = []
    for file, line, module, name in _engine_imports():
        if not name:
            continue  # ``import promptdeck.core``: no name to resolve
        parts = module.split(".")
        if (len(parts) == 3 and parts[2] in ROOMS) or module == "promptdeck.core":
            face = importlib.import_module(module)
            if name not in face.__all__:
                missing.append(f"{file}:{line}: {name} is not in {module}.__all__")
        else:
            # a shared word at the top of core/: the name is the module's own
            shared = importlib.import_module(module)
            if not hasattr(shared, name):
                missing.append(f"{file}:{line}: {module} has no {name}")
    assert missing == []


@pytest.mark.parametrize("room", ROOMS)
def test_every_name_a_room_lists_exists(room: str) -> None:
    face = importlib.import_module(f"promptdeck.core.{room}")
    assert face.__all__, f"{room} lists no public name"
    assert [name for name in face.__all__ if not hasattr(face, name)] == []
    assert len(set(face.__all__)) == len(face.__all__)


def test_every_name_the_engine_lists_exists() -> None:
    core = importlib.import_module("promptdeck.core")
    assert [name for name in core.__all__ if not hasattr(core, name)] == []


@pytest.mark.parametrize("room", ROOMS)
def test_a_room_says_what_it_does_and_stays_small(room: str) -> None:
    face = importlib.import_module(f"promptdeck.core.{room}")
    assert face.__doc__ and len(face.__doc__.strip()) > 40
    modules = [
        p
        for p in (CORE / room).rglob("*.py")
        if p.name != "__init__.py" and "workspace" not in p.relative_to(CORE / room).parts
    ]
    assert 0 < len(modules) <= ROOM_SIZE_LIMIT, sorted(p.name for p in modules)
