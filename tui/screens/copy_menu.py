"""``y``: what to copy — a file path, a layer's text, the user message or the whole system
prompt — as a small menu; the screen that asked does the copying."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option


class CopyMenuScreen(ModalScreen[str | None]):
    """Pick one of ``choices`` (id, label); dismissed with its id, or None on Escape.

    Args:
        choices: what can be copied now, in the menu's order; the first is highlighted.
    """

    DEFAULT_CSS = """
    CopyMenuScreen {
        align: center middle;
    }
    CopyMenuScreen > Vertical {
        width: 64;
        max-width: 96%;
        height: auto;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    CopyMenuScreen OptionList {
        height: auto;
        max-height: 10;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,y", "dismiss_menu", "Close", id="copy.close", tooltip="Copy nothing"),
    ]

    def __init__(self, choices: list[tuple[str, str]]) -> None:
        super().__init__()
        self.choices = choices

    def compose(self) -> ComposeResult:
        """The title, then one line per choice."""
        with Vertical():
            yield Static(Text("Copy to the clipboard", style="bold"))
            yield OptionList(
                *(Option(label, id=choice) for choice, label in self.choices), id="copy-choices"
            )

    @on(OptionList.OptionSelected, "#copy-choices")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        self.dismiss(event.option.id)

    def action_dismiss_menu(self) -> None:
        """Close without copying."""
        self.dismiss(None)
