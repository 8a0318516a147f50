"""A read-only, scrollable view of one text: a layer, a file, the system prompt; with line
numbers, search (``/``, ``n``, ``N`` in :class:`~promptdeck.tui.screens.text_view.TextViewScreen`)
and jumps to the start and the end."""

from __future__ import annotations

from collections.abc import Sequence

from textual.widgets import TextArea
from textual.widgets.text_area import Document, Selection


def find_matches(lines: Sequence[str], query: str) -> list[tuple[int, int]]:
    """Every ``(row, column)`` where ``query`` starts, in reading order.

    Smart case: a query in lower case matches any case; one with a capital matches exactly.
    """
    if not query:
        return []
    exact = query != query.lower()
    needle = query if exact else query.lower()
    found: list[tuple[int, int]] = []
    for row, line in enumerate(lines):
        haystack = line if exact else line.lower()
        column = haystack.find(needle)
        while column >= 0:
            found.append((row, column))
            column = haystack.find(needle, column + max(len(needle), 1))
    return found


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
        self.query_text = ""
        """The last search."""
        self.matches: list[tuple[int, int]] = []
        """Where it matched."""
        self.match_index = -1
        """The match selected now (-1: none)."""

    def show(self, text: str) -> None:
        """Replace the text, keeping the scroll position when the text is unchanged.

        A new text that keeps the first or the last lines of the one shown replaces only the
        lines between (a toggle changes one stretch of a 150 KiB system prompt): the lines
        kept are not wrapped again, which is most of the cost of loading the whole text."""
        if text == self.text:
            return
        if not self._replace_changed_lines(text):
            self.load_text(text)
        self.matches = []
        self.match_index = -1

    def _replace_changed_lines(self, text: str) -> bool:
        fresh = Document(text)
        old, new = self.document.lines, fresh.lines
        if not old or not new or self.document.newline != fresh.newline:
            return False
        limit = min(len(old), len(new))
        first = 0
        while first < limit and old[first] == new[first]:
            first += 1
        tail = 0
        while tail < limit - first and old[-1 - tail] == new[-1 - tail]:
            tail += 1
        if first == 0 and tail == 0:
            return False
        newline = self.document.newline
        if tail:
            # Whole lines from ``first`` up to the first line kept at the end.
            start, end = (first, 0), (len(old) - tail, 0)
            insert = "".join(line + newline for line in new[first : len(new) - tail])
        else:
            # Everything after the end of the last line kept at the start.
            start = (first - 1, len(old[first - 1]))
            end = (len(old) - 1, len(old[-1]))
            insert = "".join(newline + line for line in new[first:])
        self.replace(insert, start, end, maintain_selection_offset=False)
        # As a load does: no edit history, the cursor back at the start.
        self.history.clear()
        self.move_cursor((0, 0))
        if self.text != text:
            # Never a text other than the one given: load it whole.
            self.load_text(text)
        return True

    def search(self, query: str) -> int:
        """Find ``query``, select the first match at or after the cursor; the match count."""
        self.query_text = query
        self.matches = find_matches(self.document.lines, query)
        self.match_index = -1
        if not self.matches:
            return 0
        here = self.cursor_location
        after = [i for i, spot in enumerate(self.matches) if spot >= here]
        self._select(after[0] if after else 0)
        return len(self.matches)

    def next_match(self, forward: bool = True) -> bool:
        """Select the next (or previous) match, wrapping around; False when there is none."""
        if not self.matches:
            return False
        step = 1 if forward else -1
        self._select((self.match_index + step) % len(self.matches))
        return True

    def _select(self, index: int) -> None:
        self.match_index = index
        row, column = self.matches[index]
        self.selection = Selection((row, column), (row, column + len(self.query_text)))
        self.scroll_cursor_visible(center=True, animate=False)

    def jump(self, end: bool) -> None:
        """To the first line, or to the last."""
        if end:
            last = self.document.line_count - 1
            self.move_cursor((last, len(self.document.get_line(last))))
        else:
            self.move_cursor((0, 0))
        self.scroll_cursor_visible(animate=False)
