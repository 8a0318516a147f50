"""A read-only, scrollable view of one text: a layer, a file, the system prompt."""

from __future__ import annotations

from textual.widgets import TextArea


class TextViewer(TextArea):
    """:class:`TextArea` set up for reading: read-only, soft-wrapped, line numbers on."""

    DEFAULT_CSS = """
    TextViewer {
        background: $surface;
        border: none;
        padding: 0 1;
        &:focus { border: none; }
    }
    """

    def __init__(
        self, text: str = "", *, language: str | None = None, id: str | None = None
    ) -> None:
        super().__init__(
            text,
            language=language,
            read_only=True,
            soft_wrap=True,
            show_line_numbers=True,
            id=id,
        )
        self.cursor_blink = False

    def show(self, text: str) -> None:
        """Replace the text, keeping the scroll position when the text is unchanged."""
        if text != self.text:
            self.load_text(text)
