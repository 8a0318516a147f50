"""Highlights, in the phase log, the lines the signal parser in core counted as signals."""

from __future__ import annotations

from rich.highlighter import Highlighter
from rich.style import Style
from rich.text import Text


class SignalHighlighter(Highlighter):
    """Styles a log line when the runner reported it as a signal.

    The UI does not parse signals itself: the runner's parser decides (a signal quoted inside
    a sentence or echoed from the prompt does not count), and the panel hands the lines it
    reported to :meth:`add`.
    """

    def __init__(
        self,
        success_style: Style | None = None,
        failure_style: Style | None = None,
    ) -> None:
        self._success: set[str] = set()
        self._failure: set[str] = set()
        self.success_style = success_style or Style(color="green", bold=True, reverse=True)
        self.failure_style = failure_style or Style(color="red", bold=True, reverse=True)

    def add(self, line: str, success: bool) -> None:
        """Highlight ``line`` (its stripped text) from now on."""
        (self._success if success else self._failure).add(_key(line))

    def forget(self) -> None:
        """Highlight nothing (a new run starts)."""
        self._success.clear()
        self._failure.clear()

    def style_for(self, line: str) -> Style | None:
        """The style ``line`` is drawn in, or None when it is not a signal."""
        key = _key(line)
        if key in self._failure:
            return self.failure_style
        if key in self._success:
            return self.success_style
        return None

    def highlight(self, text: Text) -> None:
        """Stylize the whole line when it is a signal line."""
        if not (self._success or self._failure):
            return
        style = self.style_for(text.plain)
        if style is not None:
            text.stylize(style)


def _key(line: str) -> str:
    # The parser reports a signal without the emphasis that may wrap it (``**…**``).
    return line.strip().strip("*_").strip()
