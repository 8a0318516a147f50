"""Asked before quitting while a phase runs."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical
from textual.screen import ModalScreen
from textual.widgets import Button, Static


class QuitConfirmScreen(ModalScreen[bool]):
    """Quit and cancel the running phase (True), or stay (False)."""

    DEFAULT_CSS = """
    QuitConfirmScreen {
        align: center middle;
    }
    QuitConfirmScreen > Vertical {
        width: 60;
        max-width: 96%;
        height: auto;
        border: thick $warning;
        background: $surface;
        padding: 1 2;
    }
    QuitConfirmScreen Horizontal {
        height: auto;
        margin-top: 1;
        align-horizontal: right;
    }
    QuitConfirmScreen Button {
        margin-left: 2;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "y,enter",
            "confirm",
            "Quit",
            id="quit.confirm",
            tooltip="Cancel the running phase and quit",
        ),
        Binding("n,escape", "stay", "Stay", id="quit.stay", tooltip="Keep running"),
    ]

    def __init__(self, running: str) -> None:
        super().__init__()
        self._running_label = running

    def compose(self) -> ComposeResult:
        """The question and two buttons."""
        with Vertical():
            yield Static(
                Text.assemble((self._running_label, "bold"), " is running."), id="quit-state"
            )
            yield Static(
                "Quit and cancel it? Its record keeps everything printed so far.",
                id="quit-question",
                markup=False,
            )
            with Horizontal():
                yield Button("Stay (n)", id="stay")
                yield Button("Cancel and quit (y)", id="quit", variant="warning")

    def run_finished(self, summary: str) -> None:
        """The run ended while the question was open: say so; ``y`` now just quits."""
        self.query_one("#quit-state", Static).update(
            Text.assemble((self._running_label, "bold"), f" finished: {summary}.")
        )
        self.query_one("#quit-question", Static).update("Nothing is running now. Quit?")
        self.query_one("#quit", Button).label = "Quit (y)"

    def on_button_pressed(self, event: Button.Pressed) -> None:
        """Buttons answer like the keys."""
        self.dismiss(event.button.id == "quit")

    def action_confirm(self) -> None:
        """Quit."""
        self.dismiss(True)

    def action_stay(self) -> None:
        """Stay."""
        self.dismiss(False)
