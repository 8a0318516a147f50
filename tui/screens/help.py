"""The help screen: every key of the main screen, with what it does."""

from __future__ import annotations

from collections.abc import Iterable
from typing import ClassVar

from rich.table import Table
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


def key_label(binding: Binding) -> str:
    """How a key reads: ``[``, ``?``, ``ctrl+p``."""
    return binding.key_display or binding.key


class HelpScreen(ModalScreen[None]):
    """A table of keys built from the bindings themselves, so it never drifts from them."""

    DEFAULT_CSS = """
    HelpScreen {
        align: center middle;
    }
    HelpScreen > VerticalScroll {
        width: 80;
        max-width: 96%;
        height: auto;
        max-height: 90%;
        border: round $primary;
        background: $surface;
        padding: 0 1;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape,q,question_mark", "dismiss", "Close", id="help.close", tooltip="Close the help"
        ),
    ]

    def __init__(self, bindings: Iterable[BindingType]) -> None:
        super().__init__()
        self._key_bindings = [b for b in bindings if isinstance(b, Binding)]

    def compose(self) -> ComposeResult:
        """The keys table and a few words on the regions."""
        table = Table(box=None, show_header=True, header_style="bold", expand=True)
        table.add_column("key", no_wrap=True)
        table.add_column("does")
        for binding in self._key_bindings:
            table.add_row(key_label(binding), binding.tooltip or binding.description)
        table.add_row("ctrl+p", "Command palette: every key, every theme, every story")
        table.add_row("Enter", "Select a story; show a layer's or a file's full text")
        table.add_row("Tab", "Move between the regions")
        with VerticalScroll():
            yield Static("[b]promptdeck keys[/b]")
            yield Static(table)
            yield Static(
                "Dimmed files are not injected; the reason column says why. The meter line "
                "compares the system prompt with the warning, argv (131,072 bytes) and error "
                "lines. Escape closes."
            )
            yield Static(
                "Phases: kickoff, failure analysis, UAT and retro are optional and never block "
                "— a failed kickoff goes on to dev, a failure analysis only advises (the retry "
                "goes ahead unless [flow] honour_analysis is set), a failed retro leaves the "
                "epic complete. v picks the standard or party variant of the selected phase "
                "(kickoff, review, failure, retro: a discussion between Winston, Amelia, Murat "
                "and Bob, personas overridable in .promptdeck/personas/). A [budget] in the "
                "config caps a phase's prompt tokens: the notes show it, the run confirmation "
                "refuses a prompt over it."
            )
