"""DeckContext: what the app hands its screens, and the screens' independence from the app."""

from __future__ import annotations

import ast
from pathlib import Path

import promptdeck.tui.screens as screens_package
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.tokens.counter import get_counter
from promptdeck.tui.context import DeckContext
from promptdeck.tui.notices import Notice


class Board:
    def __init__(self) -> None:
        self.notices: list[Notice] = []

    def add_notices(
        self, source: str, messages: list[str] | tuple[str, ...], severity: str = "warning"
    ) -> None:
        self.notices.extend(Notice(source, m, severity) for m in messages)

    def acknowledge_notices(self) -> None:
        self.notices.clear()


def context(root: Path, *, stable: bool) -> DeckContext:
    return DeckContext(
        workspace=open_workspace(root),
        counter=get_counter("o200k_base"),
        agent="replay",
        encoding="o200k_base",
        workspace_label="demo",
        stable=stable,
        use_git=False,
        board=Board(),
    )


def test_a_stable_context_hides_durations_and_run_ids(demo_root: Path) -> None:
    stable = context(demo_root, stable=True)
    assert stable.duration(12.5) == "—"
    assert stable.run_label("20260101-120000-1-1-dev") == ""
    live = context(demo_root, stable=False)
    assert live.duration(12.5) != "—"
    assert live.run_label("20260101-120000-1-1-dev") == "20260101-120000-1-1-dev"


def test_no_screen_imports_the_app_nor_reads_it_by_name() -> None:
    folder = Path(screens_package.__file__).parent
    for path in sorted(folder.glob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom):
                module = node.module or ""
                assert module not in {"app", "promptdeck.tui.app"}, f"{path.name} imports the app"
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "getattr":
                target = node.args[0] if node.args else None
                assert not (isinstance(target, ast.Attribute) and target.attr == "app"), (
                    f"{path.name} duck-types the app"
                )
