"""The file the cursor points at, and what ``o`` (open it in the editor) and ``y`` (copy)
do with it and with the prompt — decided apart from any screen.

The screen says what the cursor is on (:class:`Pointed`); :class:`FileActions` answers with the
project file meant (or one line saying why there is none), the copy menu's choices, the text a
choice copies and the editor's command. Sizes are the composed bytes the agent receives, in
the words every surface of the app uses (:func:`~promptdeck.tui.format.sent_size`).
"""

from __future__ import annotations

import subprocess
from collections.abc import Callable
from contextlib import AbstractContextManager
from pathlib import Path
from typing import TYPE_CHECKING

from promptdeck.core.lean_dataclass import dataclass

from ..format import sent_size

if TYPE_CHECKING:
    from promptdeck.core.injection import InjectedFile
    from promptdeck.core.layers import PromptLayer
    from promptdeck.core.project import Workspace
    from promptdeck.core.prompt import ComposedPrompt
    from promptdeck.core.stories import Story

REFUSAL = "! "
"""How :meth:`FileActions.selected_file` marks a line that says why there is no file."""


@dataclass(frozen=True)
class Pointed:
    """What the cursor is on.

    Attributes:
        story: the story previewed.
        file: the files table's row, when that table has the focus.
        layer: the layers table's row, when that table has the focus.
    """

    story: Story | None
    file: InjectedFile | None = None
    layer: PromptLayer | None = None


@dataclass(frozen=True)
class Copied:
    """What a copy choice puts on the clipboard, and the toast's words for it."""

    text: str
    what: str


class FileActions:
    """``o`` and ``y`` in the project of ``workspace``."""

    def __init__(self, workspace: Workspace) -> None:
        self._workspace = workspace

    def _project_file(self, relpath: str) -> bool:
        path = self._workspace.path(relpath)
        return self._workspace.contains(path) and path.is_file()

    def selected_file(self, pointed: Pointed) -> str:
        """The project file the cursor points at (relative to the root), or one line starting
        with :data:`REFUSAL` saying why there is none: the files table's row, the layer's
        source, else the story's own file."""
        if pointed.file is not None:
            if pointed.file.status == "outside-project":
                return f"{REFUSAL}{pointed.file.path} lies outside the project: not opened"
            return pointed.file.path
        layer = pointed.layer
        if layer is not None:
            if layer.source and self._project_file(layer.source):
                return layer.source
            return (
                f"{REFUSAL}{layer.layer_id} comes from {layer.source or 'no file'}, not a "
                "project file (a template is overridden by a copy in .promptdeck/templates/)"
            )
        story = pointed.story
        if story is None:
            return f"{REFUSAL}no story selected"
        if story.path is None:
            return f"{REFUSAL}story {story.id} has no file of its own"
        return story.path

    def copy_choices(
        self, pointed: Pointed, layer: PromptLayer | None, prompt: ComposedPrompt | None
    ) -> list[tuple[str, str]]:
        """What ``y`` offers, as (choice, label): the file pointed at, the layer under the
        layers table's cursor (``layer``), the user message and the system prompt."""
        choices: list[tuple[str, str]] = []
        target = self.selected_file(pointed)
        if not target.startswith(REFUSAL):
            choices.append(("path", f"file path   {target}"))
        if layer is not None:
            choices.append(("layer", f"layer text  {layer.layer_id} · {layer.title}"))
        if prompt is not None:
            choices.append(("user", f"user message   {sent_size(prompt.user_meter.bytes)}"))
            choices.append(("system", f"system prompt  {sent_size(prompt.system_meter.bytes)}"))
        return choices

    def copied(
        self,
        choice: str | None,
        pointed: Pointed,
        layer: PromptLayer | None,
        prompt: ComposedPrompt | None,
    ) -> Copied | None:
        """What ``choice`` (an id of :meth:`copy_choices`) copies; None for nothing."""
        if choice == "path":
            target = self.selected_file(pointed)
            return Copied(target, f"path {target}")
        if choice == "layer" and layer is not None:
            return Copied(layer.content, f"{layer.layer_id} text ({layer.bytes:,} bytes)")
        if choice == "user" and prompt is not None:
            return Copied(prompt.user, f"user message ({sent_size(prompt.user_meter.bytes)})")
        if choice == "system" and prompt is not None:
            size = sent_size(prompt.system_meter.bytes)
            return Copied(prompt.system, f"system prompt ({size})")
        return None

    def open_in_editor(
        self,
        target: str,
        suspend: Callable[[], AbstractContextManager[object]],
        unsuspendable: type[Exception],
    ) -> str | None:
        """Open ``target`` (a :meth:`selected_file` answer) in ``$EDITOR`` and wait for it
        (see :func:`run_editor`); None when it ended well, else one line saying why not."""
        argv = self.editor_command(target)
        return argv if isinstance(argv, str) else run_editor(argv, suspend, unsuspendable)

    def editor_command(self, target: str) -> list[str] | str:
        """The argv opening ``target`` (a :meth:`selected_file` answer) in ``$EDITOR``, or one
        line saying why there is none."""
        if target.startswith(REFUSAL):
            return target[len(REFUSAL) :]
        from promptdeck.core.project import editor_argv

        workspace = self._workspace
        return editor_argv(workspace.path(target), root=workspace.root)


def run_editor(
    argv: list[str],
    suspend: Callable[[], AbstractContextManager[object]],
    unsuspendable: type[Exception],
) -> str | None:
    """Run the editor ``argv`` to its end; None when it ended well, else one line saying how
    it did not.

    Args:
        argv: the editor's command.
        suspend: suspends the app while the editor owns the terminal.
        unsuspendable: what ``suspend`` raises where the app cannot suspend (no real terminal:
            a test, a web session); the editor then still gets the file, with no terminal.
    """
    name = Path(argv[0]).name
    try:
        try:
            with suspend():
                code = subprocess.run(argv, check=False).returncode
        except unsuspendable:
            code = subprocess.run(
                argv, check=False, stdin=subprocess.DEVNULL, capture_output=True
            ).returncode
    except OSError as exc:
        return f"the editor {name} could not start: {exc.strerror or exc}"
    if code != 0:
        return f"the editor {name} exited with status {code}"
    return None
