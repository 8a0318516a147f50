"""Every notice of the session (startup warnings, run warnings, errors), kept to be read
again: a one-line toast says how many are new, this screen says what they are — the newest
source first (the last run's warnings above the startup notes), notes of one kind together
under a line with their count."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from ..notices import KindedNote, Notice, as_notices

__all__ = ["SEVERITY_MARKS", "KindedNote", "Notice", "NoticesScreen", "as_notices", "notices_text"]


SEVERITY_MARKS = {"information": "·", "warning": "⚠", "error": "✗"}


def notices_text(notices: list[Notice]) -> Text:
    """The notices grouped by source, the newest source first (plain text, never markup);
    within a source, notes of one kind follow a line naming the kind and its count."""
    if not notices:
        return Text("No notices in this session.", style="dim")
    groups: dict[str, list[Notice]] = {}
    for notice in notices:
        groups.setdefault(notice.source, []).append(notice)
    text = Text()
    for source, group in reversed(groups.items()):
        if text:
            text.append("\n")
        text.append(f"{source}\n", style="bold")
        kinds: dict[str, list[Notice]] = {}
        for notice in group:
            kinds.setdefault(notice.kind, []).append(notice)
        for kind, members in kinds.items():
            indent = "  "
            if kind:
                text.append(f"  {kind} ({len(members)})\n", style="italic")
                indent = "    "
            for notice in members:
                mark = SEVERITY_MARKS.get(notice.severity, "·")
                text.append(f"{indent}{mark} {notice.text}\n")
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
