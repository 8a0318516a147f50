"""Export the composed prompt's files to a folder the user picks.

Writes ``system.md``, ``user.md``, ``messages.json``, ``injection.xml`` and ``layers.json`` —
byte for byte what the preview shows. An existing file is never overwritten: if any of the
five exists in the folder, nothing is written and the screen says which.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import ClassVar

from promptdeck.core.prompt import ComposedPrompt
from promptdeck.core.workspace import Workspace
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Input, Static

EXPORTS_RELPATH = ".promptdeck/exports"
EXPORT_NAMES = ("system.md", "user.md", "messages.json", "injection.xml", "layers.json")


def export_files(prompt: ComposedPrompt) -> dict[str, str]:
    """The five files' names and exact contents."""
    layers = [layer.to_dict() for layer in prompt.layers]
    return {
        "system.md": prompt.system,
        "user.md": prompt.user,
        "messages.json": json.dumps(list(prompt.messages), indent=2, ensure_ascii=False) + "\n",
        "injection.xml": prompt.injection.text,
        "layers.json": json.dumps(layers, indent=2, ensure_ascii=False) + "\n",
    }


def default_export_dir(workspace: Workspace, prompt: ComposedPrompt) -> Path:
    """``.promptdeck/exports/<story>-<phase>-<mode>``, numbered when that folder exists."""
    request = prompt.request
    stem = re.sub(r"[^A-Za-z0-9._-]+", "-", f"{request.story_id}-{request.phase}-{request.mode}")
    base = workspace.path(EXPORTS_RELPATH) / stem
    candidate, number = base, 2
    while candidate.exists():
        candidate = base.with_name(f"{stem}-{number}")
        number += 1
    return candidate


def write_export(folder: Path, files: dict[str, str]) -> list[Path]:
    """Write ``files`` into ``folder`` (created if needed), never over an existing file.

    Returns:
        The paths written.

    Raises:
        FileExistsError: one of the files already exists (nothing is written).
        OSError: the folder cannot be created or written.
    """
    existing = [name for name in files if (folder / name).exists()]
    if existing:
        raise FileExistsError(f"{folder}: already holds {', '.join(existing)}")
    folder.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    for name, text in files.items():
        target = folder / name
        # "x" mode refuses a file that appeared since the check above.
        with target.open("x", encoding="utf-8", newline="") as handle:
            handle.write(text)
        written.append(target)
    return written


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
            written = write_export(folder, export_files(self._composed))
        except OSError as exc:
            self.query_one("#export-error", Static).update(str(exc))
            return
        self.notify(f"exported {len(written)} files to {raw}")
        self.dismiss(folder)

    def action_cancel(self) -> None:
        """Close without writing."""
        self.dismiss(None)
