"""Pick a file of the project to add to the injection; nothing outside the root is offered."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import ClassVar

from promptdeck.core.project import Workspace
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import DirectoryTree, Footer, Static

HIDDEN_NAMES = frozenset({".git", "__pycache__", "node_modules", ".venv", "runs"})


class ProjectTree(DirectoryTree):
    """A directory tree of the workspace that hides VCS and cache folders and anything a
    symlink would take outside the project."""

    def __init__(self, workspace: Workspace, *, id: str | None = None) -> None:
        super().__init__(workspace.root, id=id)
        self._workspace = workspace

    def filter_paths(self, paths: Iterable[Path]) -> Iterable[Path]:
        """Leave out hidden tool folders and paths resolving outside the root."""
        return [
            path
            for path in paths
            if path.name not in HIDDEN_NAMES and self._workspace.contains(path)
        ]


class FilePickerScreen(ModalScreen[str | None]):
    """Returns the chosen file's root-relative path, or None."""

    DEFAULT_CSS = """
    FilePickerScreen {
        align: center middle;
    }
    FilePickerScreen > Vertical {
        width: 80%;
        height: 80%;
        border: round $primary;
        background: $surface;
    }
    FilePickerScreen #picker-title {
        padding: 0 1;
        background: $panel;
        text-style: bold;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape",
            "dismiss_none",
            "Cancel",
            id="picker.cancel",
            tooltip="Close without adding a file",
        ),
    ]

    def __init__(self, workspace: Workspace) -> None:
        super().__init__()
        self._workspace = workspace

    def compose(self) -> ComposeResult:
        """A title and the project tree."""
        with Vertical():
            yield Static(
                "Add a file of the project (Enter picks, Escape cancels)", id="picker-title"
            )
            yield ProjectTree(self._workspace, id="picker-tree")
        yield Footer()

    def on_mount(self) -> None:
        """Focus the tree."""
        self.query_one(ProjectTree).focus()

    def on_directory_tree_file_selected(self, event: DirectoryTree.FileSelected) -> None:
        """Return the picked file, root-relative."""
        event.stop()
        if not self._workspace.contains(event.path):
            self.notify("that file lies outside the project", severity="error")
            return
        self.dismiss(self._workspace.relative(event.path))

    def action_dismiss_none(self) -> None:
        """Cancel."""
        self.dismiss(None)
