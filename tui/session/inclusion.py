"""What is included in the prompt beyond the story's own files: the three toggles, the files
added by hand, a file of the injection left out or taken back in, and the workspace rules
layer left out — each key's decision, apart from any screen.

:class:`InclusionChoices` is told the current selection and what the cursor is on, and answers
with an :class:`Answer`: the new selection (when it changed), a toast, and whether the preview
recomposes. Choices remembered per story are written through core (``toggle_remembered``,
``toggle_layer_remembered``), in the state folder core keeps them in.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from promptdeck.core.injection import Selection
from promptdeck.core.lean_dataclass import dataclass
from promptdeck.core.vocabulary import RULES_LAYER

if TYPE_CHECKING:
    from promptdeck.core.injection import InjectedFile
    from promptdeck.core.layers import PromptLayer
    from promptdeck.core.prompt import ComposedPrompt

TOGGLES = ("project_context", "discovery", "tech_spec")
"""The parts of the injection a key switches on and off (``p``, ``d``, ``t``)."""

COMPOSING = "the prompt is still being composed"
"""What a key that needs the prompt says before there is one."""

Severity = Literal["information", "warning", "error"]
"""How serious a toast is (the app's notification levels)."""


@dataclass(frozen=True)
class Answer:
    """What a key decided.

    Attributes:
        message: a toast to show (empty: none).
        severity: the toast's severity (``information``, ``warning``, ``error``).
        recompose: the preview composes again (a choice was made and remembered).
        selection: the new selection, when the key changed it.
        timeout: how long the toast stays (None: Textual's default).
    """

    message: str = ""
    severity: Severity = "information"
    recompose: bool = False
    selection: Selection | None = None
    timeout: float | None = None


def _warn(message: str) -> Answer:
    return Answer(message, "warning")


class InclusionChoices:
    """The inclusion keys' decisions for the project at ``root``.

    Args:
        root: the project root (the remembered choices are filed under it).
    """

    def __init__(self, root: Path) -> None:
        self._root = root

    def toggled(self, selection: Selection, part: str) -> Answer:
        """``part`` (one of :data:`TOGGLES`) switched on or off."""
        if part not in TOGGLES:
            raise ValueError(f"not a toggle of the injection: {part}")
        if part == "project_context":
            flipped = replace(selection, project_context=not selection.project_context)
        elif part == "discovery":
            flipped = replace(selection, discovery=not selection.discovery)
        else:
            flipped = replace(selection, tech_spec=not selection.tech_spec)
        return Answer(recompose=True, selection=flipped)

    def added(self, selection: Selection, path: str | None) -> Answer:
        """The file at ``path`` (chosen in the picker; None: nothing chosen) added."""
        files = selection.additional_files
        if not path or path in files:
            return Answer()
        return Answer(recompose=True, selection=replace(selection, additional_files=(*files, path)))

    def removed(self, selection: Selection, target: str | None) -> Answer:
        """The added file ``target`` removed (None: there is none to remove)."""
        files = selection.additional_files
        if not files or target is None:
            return _warn("no added files to remove")
        kept = tuple(path for path in files if path != target)
        return Answer(recompose=True, selection=replace(selection, additional_files=kept))

    def rules_layer(self, prompt: ComposedPrompt | None) -> Answer:
        """The workspace rules layer (Layer-0B) left out of the story's prompt, or put back;
        remembered per story."""
        if prompt is None:
            return _warn(COMPOSING)
        layer = next((item for item in prompt.layers if item.layer_id == RULES_LAYER), None)
        if layer is None or (layer.missing and not layer.left_out):
            return _warn("there are no workspace rules to leave out")
        from promptdeck.core.injection import toggle_layer_remembered

        try:
            toggle_layer_remembered(self._root, prompt.story.id, RULES_LAYER)
        except OSError as exc:
            return Answer(f"the choice could not be remembered: {exc}", "error")
        back = "back in" if layer.left_out else "left out"
        return Answer(f"{RULES_LAYER} (workspace rules): {back}", recompose=True, timeout=3)

    def file_choice(
        self,
        prompt: ComposedPrompt | None,
        row: InjectedFile | None,
        layer: PromptLayer | None = None,
    ) -> Answer:
        """``space``: the file ``row`` left out, or taken back in; remembered per story. With
        ``layer`` (the cursor is on the layers table), that layer instead: the rules layer
        goes as :meth:`rules_layer`, any other is required."""
        if layer is not None:
            if layer.layer_id == RULES_LAYER:
                return self.rules_layer(prompt)
            return _warn(f"{layer.layer_id} is required: it stays in")
        if row is None or prompt is None:
            return _warn("no file under the cursor")
        if row.own_story_file and row.included:
            return _warn(f"{row.path} is the story's own file: it stays in")
        from promptdeck.core.injection import toggle_remembered

        try:
            toggle_remembered(self._root, prompt.story.id, row.path, row.included)
        except OSError as exc:
            return Answer(f"the choice could not be remembered: {exc}", "error")
        return Answer(recompose=True)
