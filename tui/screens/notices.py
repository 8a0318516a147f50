"""Every notice of the session (startup warnings, run warnings, errors), kept to be read
again: a toast says how many there are, this screen says what they are."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static


@dataclass(frozen=True)
class Notice:
    """One message worth reading again.

    Attributes:
        source: where it came from (``stories``, ``run 1-1 dev``, ``settings``).
        text: the message, as plain text.
        severity: ``information``, ``warning`` or ``error``.
    """

    source: str
    text: str
    severity: str = "warning"


SEVERITY_MARKS = {"information": "·", "warning": "⚠", "error": "✗"}


def notices_text(notices: list[Notice]) -> Text:
    """The notices grouped by source, in the order they came (plain text, never markup)."""
    if not notices:
        return Text("No notices in this session.", style="dim")
    text = Text()
    source = None
    for notice in notices:
        if notice.source != source:
            if source is not None:
                text.append("\n")
            source = notice.source
            text.append(f"{source}\n", style="bold")
        text.append(f"  {SEVERITY_MARKS.get(notice.severity, '·')} {notice.text}\n")
    text.rstrip()
    return text


class NoticesScreen(ModalScreen[None]):
    """The session's notices, newest group last; Escape closes."""

    DEFAULT_CSS = """
    NoticesScreen {
        align: center middle;
    }
    NoticesScreen > Vertical {
        width: 110;
        max-width: 96%;
        height: auto;
        max-height: 90%;
        border: round $warning;
        background: $surface;
        padding: 0 1;
    }
    NoticesScreen #notices-title {
        text-style: bold;
    }
    NoticesScreen VerticalScroll {
        height: auto;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,w", "dismiss", "Close", id="notices.close", tooltip="Close"),
    ]

    def __init__(self, notices: list[Notice]) -> None:
        super().__init__()
        self.notices = list(notices)

    def compose(self) -> ComposeResult:
        """A title with the count, then every notice."""
        with Vertical():
            count = len(self.notices)
            yield Static(
                Text(f"Notices of this session ({count})", style="bold"), id="notices-title"
            )
            with VerticalScroll():
                yield Static(notices_text(self.notices), id="notices-body")
