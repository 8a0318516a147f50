"""A modal showing one text in full: a layer, an injected file, a part of a run."""

from __future__ import annotations

from typing import ClassVar

from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Footer, Static

from ..widgets.text_viewer import TextViewer


class TextViewScreen(ModalScreen[None]):
    """Read-only, scrollable text with a title; Escape closes it."""

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
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "dismiss", "Close", id="text-view.close", tooltip="Close this view"),
    ]

    def __init__(self, title: str, text: str, subtitle: str = "") -> None:
        super().__init__()
        self._view_title = title
        self._view_text = text
        self._view_subtitle = subtitle

    def compose(self) -> ComposeResult:
        """Title, subtitle, the text."""
        with Vertical():
            yield Static(self._view_title, id="text-view-title", markup=False)
            if self._view_subtitle:
                yield Static(self._view_subtitle, id="text-view-subtitle", markup=False)
            yield TextViewer(self._view_text, id="text-view-body")
        yield Footer()

    def on_mount(self) -> None:
        """Focus the text so it scrolls with the keys."""
        self.query_one(TextViewer).focus()
