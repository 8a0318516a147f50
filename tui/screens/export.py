"""Export the composed prompt's files to a folder the user picks.

Writes ``system.md``, ``user.md``, ``messages.json``, ``injection.xml`` and ``layers.json`` —
byte for byte what the preview shows. An existing file is never overwritten: if any of the
five exists in the folder, nothing is written and the screen says which.
"""

from __future__ import annotations

from pathlib import Path
from typing import ClassVar

from promptdeck.core.errors import PromptdeckError
from promptdeck.core.project import Workspace
from promptdeck.core.prompt import (
    EXPORT_NAMES,
    EXPORTS_RELPATH,
    ComposedPrompt,
    default_export_dir,
    export_files,
    write_export,
)
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

__all__ = [
    "EXPORTS_RELPATH",
    "EXPORT_NAMES",
    "ExportScreen",
    "default_export_dir",
    "export_files",
    "write_export",
]


class ExportScreen(ModalScreen[Path | None]):
    """Asks for the folder (a default under the workspace's exports) and writes the files."""

    DEFAULT_CSS = """
    ExportScreen {
        align: center middle;
    }
    ExportScreen > Vertical {
        width: 90;
        max-width: 96%;
        height: auto;
        border: round $primary;
        background: $surface;
        padding: 1 2;
    }
    ExportScreen #export-error {
        color: $error;
        height: auto;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "cancel", "Cancel", id="export.cancel", tooltip="Close without writing"),
    ]

    def __init__(self, workspace: Workspace, prompt: ComposedPrompt) -> None:
        super().__init__()
        self._workspace = workspace
        self._composed = prompt

    def compose(self) -> ComposeResult:
        """The folder input and the list of files."""
        folder = default_export_dir(self._workspace, self._composed)
        try:
            shown = folder.relative_to(self._workspace.root).as_posix()
        except ValueError:
            shown = str(folder)
        with Vertical():
            yield Static("[b]Export the composed prompt[/b]")
            yield Static(f"Writes {', '.join(EXPORT_NAMES)} into (relative to the root):")
            yield Input(shown, id="export-folder")
            yield Static("", id="export-error")
            yield Static(
                "Enter writes · Escape cancels · existing files are never replaced", classes="dim"
            )

    def on_input_submitted(self, event: Input.Submitted) -> None:
        """Write the files, or say why not."""
        raw = event.value.strip()
        if not raw:
            return
        folder = Path(raw).expanduser()
        if not folder.is_absolute():
            folder = self._workspace.root / folder
        try:
            written = write_export(folder, export_files(self._composed), root=self._workspace.root)
        except (OSError, PromptdeckError) as exc:
            self.query_one("#export-error", Static).update(str(exc))
            return
        self.notify(f"exported {len(written)} files to {raw}")
        self.dismiss(folder)

    def action_cancel(self) -> None:
        """Close without writing."""
        self.dismiss(None)
