"""The help screen: every key of the main screen, with what it does."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import ClassVar

from promptdeck.core.stories import status_legend
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ..widgets.phase_panel import STATE_MARKS


def as_bound_now(table: Sequence[Binding], active: Iterable[Binding]) -> list[Binding]:
    """The bindings of ``table`` as a screen has them now (``active``: Textual applies the
    user's keymap per lookup), in ``table``'s order."""
    order = {binding.id: index for index, binding in enumerate(table)}
    current = [binding for binding in active if binding.id in order]
    return sorted(current, key=lambda binding: order[binding.id])


def legend_text() -> Text:
    """The status marks of the story tree and of the phase list, and what each means."""
    text = Text()
    text.append("Story marks  ", style="bold")
    text.append(status_legend("   "))
    text.append("\nPhase marks  ", style="bold")
    text.append("   ".join(f"{mark} {state}" for state, mark in STATE_MARKS.items()))
    return text


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
        rows: dict[str, tuple[list[str], str]] = {}
        for binding in self._key_bindings:
            # The key as the user's keymap made it, the way the footer shows it; a binding
            # given several keys reads as one row.
            keys, does = rows.setdefault(
                binding.id or binding.action, ([], binding.tooltip or binding.description)
            )
            keys.append(self.app.get_key_display(binding))
        self.key_rows = [(", ".join(keys), does) for keys, does in rows.values()]
        """The rows shown: (keys, what they do)."""
        for keys_shown, does in self.key_rows:
            table.add_row(keys_shown, does)
        table.add_row("ctrl+p", "Command palette: every key, every theme, every story")
        table.add_row("Enter", "Select a story; show a layer's or a file's full text")
        table.add_row("Tab", "Move between the regions")
        with VerticalScroll():
            yield Static(Text("promptdeck keys", style="bold"))
            yield Static(table)
            yield Static(legend_text(), id="help-legend")
            yield Static(
                "Dimmed files are not injected; the reason column says why. The meter has one "
                "bar per measure: 'injection' is the injected files' bytes against the warning "
                "and error lines (they decide ok, over warn, cannot run); 'system' is the "
                "composed system prompt, the bytes the agent receives, against the argv line "
                "(131,072 bytes), with its tokens and the Δ of the last change; a file too "
                "large to read is named apart with its size on disk. Escape closes.",
                markup=False,
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
