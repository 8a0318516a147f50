"""A modal showing one text in full: a layer, an injected file, a part of a run; with line
numbers, search (``/`` then ``n`` / ``N``) and jumps to the start (``g``) and end (``G``)."""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Input, Static

from ..widgets.text_viewer import TextViewer


class TextViewScreen(ModalScreen[None]):
    """Read-only, scrollable, searchable text with a title; Escape closes it."""

    DEFAULT_CSS = """
    TextViewScreen {
        align: center middle;
    }
    TextViewScreen > Vertical {
        width: 94%;
        height: 92%;
        border: round $primary;
        background: $surface;
    }
    TextViewScreen #text-view-title {
        height: auto;
        padding: 0 1;
        background: $panel;
        text-style: bold;
    }
    TextViewScreen #text-view-subtitle {
        height: auto;
        padding: 0 1;
        color: $text-muted;
    }
    TextViewScreen #text-view-search {
        display: none;
        height: 1;
        border: none;
        padding: 0 1;
    }
    TextViewScreen #text-view-search.-open {
        display: block;
    }
    TextViewScreen #text-view-status {
        height: 1;
        padding: 0 1;
        color: $text-muted;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close", id="text-view.close", tooltip="Close this view"),
        Binding("slash", "search", "Search", id="text-view.search", key_display="/"),
        Binding("n", "next_match", "Next", id="text-view.next", tooltip="The next match"),
        Binding("N", "previous_match", "Prev", id="text-view.previous", key_display="N"),
        Binding("g", "jump(False)", "Start", id="text-view.start", tooltip="The first line"),
        Binding("G", "jump(True)", "End", id="text-view.end", key_display="G"),
    ]

    def __init__(self, title: str, text: str, subtitle: str = "") -> None:
        super().__init__()
        self._view_title = title
        self._view_text = text
        self._view_subtitle = subtitle

    def compose(self) -> ComposeResult:
        """Title, subtitle, the text, the search box and the status line."""
        with Vertical():
            yield Static(self._view_title, id="text-view-title", markup=False)
            if self._view_subtitle:
                yield Static(self._view_subtitle, id="text-view-subtitle", markup=False)
            yield TextViewer(self._view_text, id="text-view-body")
            yield Input(placeholder="search…", id="text-view-search", compact=True)
            yield Static("", id="text-view-status", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        """Focus the text so it scrolls with the keys; say how long it is."""
        viewer = self.query_one(TextViewer)
        viewer.focus()
        self._status(f"{viewer.document.line_count:,} lines · / search · g/G start/end")

    def _status(self, text: str) -> None:
        self.query_one("#text-view-status", Static).update(Text(text))

    def action_close(self) -> None:
        """Escape closes the search box first, then the view."""
        box = self.query_one("#text-view-search", Input)
        if box.has_class("-open"):
            box.remove_class("-open")
            self.query_one(TextViewer).focus()
            return
        self.dismiss(None)

    def action_search(self) -> None:
        """Open the search box."""
        box = self.query_one("#text-view-search", Input)
        box.add_class("-open")
        box.focus()

    @on(Input.Submitted, "#text-view-search")
    def _search_submitted(self, event: Input.Submitted) -> None:
        box = event.input
        box.remove_class("-open")
        viewer = self.query_one(TextViewer)
        viewer.focus()
        count = viewer.search(event.value)
        self._report(viewer, count)

    def _report(self, viewer: TextViewer, count: int) -> None:
        query = viewer.query_text
        if not query:
            self._status("")
        elif not count:
            self._status(f"no match for {query!r}")
        else:
            row = viewer.matches[viewer.match_index][0] + 1
            self._status(
                f"match {viewer.match_index + 1}/{count} for {query!r} · line {row:,}"
                " · n next · N previous"
            )

    def action_next_match(self) -> None:
        """The next match."""
        viewer = self.query_one(TextViewer)
        viewer.next_match(True)
        self._report(viewer, len(viewer.matches))

    def action_previous_match(self) -> None:
        """The previous match."""
        viewer = self.query_one(TextViewer)
        viewer.next_match(False)
        self._report(viewer, len(viewer.matches))

    def action_jump(self, end: bool) -> None:
        """The start or the end of the text."""
        self.query_one(TextViewer).jump(end)
