"""A light table whose columns fit its width: fixed columns keep their size, flexible ones
share what is left, and optional columns step aside on narrow screens, so the preview never
needs a horizontal scrollbar.

It draws each row as one line of text (cached per row, width and cursor), so a new preview
repaints a few dozen lines rather than re-measuring every cell: DataTable rebuilds a whole
row's cells for each cell it renders, which cost tens of milliseconds per preview here.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from functools import partial
from typing import ClassVar

from promptdeck.core.lean_dataclass import dataclass
from promptdeck.core.textfit import shorten_path
from rich.segment import Segment
from rich.style import Style
from rich.text import Span, Text
from textual import events
from textual.binding import Binding, BindingType
from textual.geometry import Region, Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip

CELL_PADDING = 1
SCROLLBAR_ALLOWANCE = 2
"""Cells kept free for a vertical scrollbar, so a long list never needs a horizontal one."""
HARD_MINIMUM = 4
HEADER_LINES = 1

Cell = Text | Callable[[int], Text]
"""A cell: its text, or a function of the column's width giving it (e.g. a path shortened
from the left)."""


@dataclass(frozen=True)
class ColumnSpec:
    """One column.

    Attributes:
        label: the header.
        key: the column key.
        width: fixed width, or None for a flexible column.
        minimum: the width a flexible column would like at least.
        weight: a flexible column's share of the spare width.
        right: right-aligned header.
        drop_below: the column is left out when the table is narrower than this.
    """

    label: str
    key: str
    width: int | None = None
    minimum: int = 6
    weight: int = 1
    right: bool = False
    drop_below: int = 0


def ellipsize_left(text: str, width: int) -> str:
    """``text`` cut from the left to ``width`` cells, e.g. ``…/stories/1-2-meters.md``."""
    if len(text) <= width:
        return text
    return "…" + text[-(width - 1) :] if width > 1 else text[-width:]


def ellipsize_path(path: str, width: int) -> str:
    """``path`` shortened to ``width`` cells from the middle, never its file name's ends
    (the engine's :func:`~promptdeck.core.textfit.shorten_path`, shared with the CLI)."""
    return shorten_path(path, width)


def cell_signature(cell: Cell) -> Hashable:
    """What a cell draws, as a value two cells drawing the same compare equal by: its text and
    styles, or the function and arguments that make it at a column's width."""
    if isinstance(cell, Text):
        return (cell.plain, cell.style, cell.justify, cell.overflow, cell.no_wrap, *cell.spans)
    if isinstance(cell, partial):
        return (cell.func, cell.args, tuple(sorted(cell.keywords.items())))
    return cell


def visible_columns(specs: Sequence[ColumnSpec], total: int) -> list[int]:
    """Indexes of the columns shown at a table width of ``total``."""
    return [index for index, spec in enumerate(specs) if total >= spec.drop_below]


def fit_widths(
    specs: Sequence[ColumnSpec],
    total: int,
    padding: int = CELL_PADDING,
    natural: Sequence[int] | None = None,
) -> list[int]:
    """Widths for ``specs`` in ``total`` cells: fixed columns as given; flexible ones share the
    rest by weight, and shrink (largest first, never under :data:`HARD_MINIMUM`) to fit.

    With ``natural`` (the widest content of each column), a flexible column whose content is
    narrower than its share gives the rest to the others, so a full path and a full reason
    both show when the room is there.
    """
    fixed = sum(spec.width or 0 for spec in specs)
    spare = total - fixed - 2 * padding * len(specs) - SCROLLBAR_ALLOWANCE
    flexible = [index for index, spec in enumerate(specs) if spec.width is None]
    widths = [spec.width or 0 for spec in specs]
    open_columns = list(flexible)
    room = spare
    if natural is not None:
        # Columns whose content fits in their share take just that; repeat, as what they
        # leave enlarges the others' shares.
        changed = True
        while changed and open_columns:
            changed = False
            weights = sum(specs[index].weight for index in open_columns) or 1
            for index in list(open_columns):
                share = room * specs[index].weight // weights
                want = max(natural[index], specs[index].minimum)
                if want <= share:
                    widths[index] = want
                    room -= want
                    open_columns.remove(index)
                    changed = True
                    break
    weights = sum(specs[index].weight for index in open_columns) or 1
    for index in open_columns:
        spec = specs[index]
        widths[index] = max(room * spec.weight // weights, spec.minimum)
    while flexible and sum(widths[index] for index in flexible) > spare:
        widest = max(flexible, key=lambda index: widths[index])
        if widths[widest] <= HARD_MINIMUM:
            break
        widths[widest] -= 1
    return widths


class FittedTable(ScrollView, can_focus=True):
    """Rows of cells under a fixed header line, a row cursor, Enter to choose a row."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "fitted-table--header",
        "fitted-table--cursor",
    }

    DEFAULT_CSS = """
    FittedTable {
        background: $surface;
        overflow-x: hidden;
        overflow-y: auto;
        scrollbar-size-vertical: 1;
        & > .fitted-table--header { text-style: bold; background: $panel; }
        & > .fitted-table--cursor { background: $panel-lighten-1; }
        &:focus > .fitted-table--cursor { background: $block-cursor-background;
                                          color: $block-cursor-foreground;
                                          text-style: $block-cursor-text-style; }
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("up", "cursor_up", "Up", show=False),
        Binding("down", "cursor_down", "Down", show=False),
        Binding("pageup", "page_up", "Page up", show=False),
        Binding("pagedown", "page_down", "Page down", show=False),
        Binding("home", "first", "First", show=False),
        Binding("end", "last", "Last", show=False),
        Binding("enter", "choose", "Show text", show=False),
    ]

    COLUMNS: Sequence[ColumnSpec] = ()

    cursor_row: reactive[int] = reactive(0)
    """The row under the cursor."""

    class RowChosen(Message):
        """Enter (or a click) on a row."""

        def __init__(self, table: FittedTable, index: int) -> None:
            super().__init__()
            self.table = table
            self.index = index

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._cell_rows: list[tuple[str, tuple[Cell, ...]]] = []
        self._line_cache: dict[tuple[int, int, bool, bool], Strip] = {}
        self._layouts: dict[int, tuple[list[int], list[int]]] = {}
        self._styles: dict[str, Style] = {}
        self._cell_styles: dict[str | Style, Style] = {}
        self._natural: list[int] = []
        self._signatures: list[tuple[str, tuple[Hashable, ...]]] = []

    @property
    def row_count(self) -> int:
        """How many rows the table holds."""
        return len(self._cell_rows)

    def set_rows(self, rows: Sequence[tuple[str, tuple[Cell, ...]]]) -> None:
        """Replace the rows (key, one cell per column of :attr:`COLUMNS`), keeping the
        cursor's row number.

        Only the lines of rows that read differently are drawn again: a toggle changes a few
        rows of the preview's tables, and the rest keep their drawn lines."""
        before = self._signatures
        self._cell_rows = list(rows)
        self._signatures = [(key, tuple(map(cell_signature, cells))) for key, cells in rows]
        # The widest content of each column, in one pass over the cells.
        natural = [0] * len(self.COLUMNS)
        for _key, cells in rows:
            for column, cell in enumerate(cells):
                length = (cell(10_000) if callable(cell) else cell).cell_len
                if length > natural[column]:
                    natural[column] = length
        self.virtual_size = Size(self.size.width, len(self._cell_rows) + HEADER_LINES)
        self.cursor_row = min(self.cursor_row, max(len(self._cell_rows) - 1, 0))
        if natural != self._natural:
            # The widest contents moved (a toggle changes a reason or a size): the columns
            # are fitted again, and the drawn lines kept only if they fit the same at this width.
            width = self.size.width
            drawn = self._layouts.get(width)
            self._natural = natural
            self._layouts.clear()
            if drawn is None or self._layout() != drawn:
                self._line_cache.clear()
            else:
                self._line_cache = {
                    key: strip for key, strip in self._line_cache.items() if key[1] == width
                }
        if len(before) != len(self._signatures) or not self._line_cache:
            self._line_cache.clear()
            self.refresh()
            return
        changed = {
            index
            for index, (old, new) in enumerate(zip(before, self._signatures, strict=True))
            if old != new
        }
        if not changed:
            return
        self._line_cache = {
            key: strip for key, strip in self._line_cache.items() if key[0] not in changed
        }
        top = int(self.scroll_offset.y)
        width, height = self.size
        lines = (HEADER_LINES + index - top for index in changed)
        shown = [Region(0, y, width, 1) for y in lines if HEADER_LINES <= y < height]
        if shown:
            self.refresh(*shown)

    def move_cursor(self, *, row: int) -> None:
        """Put the cursor on ``row`` (clamped) and scroll it into view."""
        self.cursor_row = min(max(row, 0), max(len(self._cell_rows) - 1, 0))

    def watch_cursor_row(self) -> None:
        """Keep the cursor row visible."""
        top = int(self.scroll_offset.y)
        visible = max(self.size.height - HEADER_LINES, 1)
        if self.cursor_row < top:
            self.scroll_to(y=self.cursor_row, animate=False)
        elif self.cursor_row >= top + visible:
            self.scroll_to(y=self.cursor_row - visible + 1, animate=False)
        self.refresh()

    def on_resize(self) -> None:
        """Fit the columns to the new width."""
        self._line_cache.clear()
        self.virtual_size = Size(self.size.width, len(self._cell_rows) + HEADER_LINES)

    def notify_style_update(self) -> None:
        """The theme changed: redraw with the new colours."""
        super().notify_style_update()
        self._line_cache.clear()
        self._styles.clear()
        self._cell_styles.clear()

    def _style(self, name: str) -> Style:
        # Resolving styles walks the DOM: once per theme and focus state, not once per line.
        style = self._styles.get(name)
        if style is None:
            style = self.rich_style if name == "base" else self.get_component_rich_style(name)
            self._styles[name] = style
        return style

    def _layout(self) -> tuple[list[int], list[int]]:
        width = self.size.width
        cached = self._layouts.get(width)
        if cached is None:
            shown = visible_columns(self.COLUMNS, width)
            natural = [self._natural[index] for index in shown] if self._natural else None
            widths = fit_widths([self.COLUMNS[index] for index in shown], width, natural=natural)
            cached = self._layouts[width] = (shown, widths)
        return cached

    def _line(self, cells: Sequence[Text], widths: Sequence[int]) -> Text:
        # One string and one list of spans for the whole line: a copy of every cell, cut and
        # appended span by span, cost more than drawing the line.
        plain: list[str] = []
        spans: list[Span] = []
        offset = 0
        pad = " " * CELL_PADDING
        for cell, width in zip(cells, widths, strict=True):
            text, cell_spans, length = cell.plain, cell.spans, cell.cell_len
            if length > width:
                piece = cell.copy()
                piece.truncate(width, overflow="ellipsis", pad=False)
                text, cell_spans, length = piece.plain, piece.spans, piece.cell_len
            room = " " * (width - length)
            lead = pad + room if cell.justify == "right" else pad
            start = offset + len(lead)
            if cell.style:
                spans.append(Span(start, start + len(text), cell.style))
            spans.extend(
                Span(start + span.start, start + span.end, span.style) for span in cell_spans
            )
            chunk = lead + text + ("" if cell.justify == "right" else room) + pad
            plain.append(chunk)
            offset += len(chunk)
        return Text("".join(plain), no_wrap=True, end="", spans=spans)

    def render_line(self, y: int) -> Strip:
        """The header on the first line, then the rows from the scroll offset."""
        width = self.size.width
        shown, widths = self._layout()
        if y < HEADER_LINES:
            header_key = (-1, width, False, False)
            header = self._line_cache.get(header_key)
            if header is None:
                labels = [
                    Text(
                        self.COLUMNS[index].label,
                        justify="right" if self.COLUMNS[index].right else "left",
                    )
                    for index in shown
                ]
                style = self._style("fitted-table--header")
                header = self._line_cache[header_key] = self._row_strip(
                    labels, widths, width, style
                )
            return header
        index = y - HEADER_LINES + int(self.scroll_offset.y)
        if index >= len(self._cell_rows):
            return Strip.blank(width, self._style("base"))
        cursor = index == self.cursor_row
        key = (index, width, cursor, self.has_focus)
        cached = self._line_cache.get(key)
        if cached is not None:
            return cached
        _key, cells = self._cell_rows[index]
        texts = [
            cell(column) if callable(cell) else cell
            for cell, column in zip((cells[i] for i in shown), widths, strict=True)
        ]
        style = self._style("base")
        if cursor:
            style += self._style("fitted-table--cursor")
        strip = self._row_strip(texts, widths, width, style, meta_row=index)
        self._line_cache[key] = strip
        return strip

    def _row_strip(
        self,
        cells: Sequence[Text],
        widths: Sequence[int],
        width: int,
        style: Style,
        meta_row: int | None = None,
    ) -> Strip:
        """One row's line as drawn: its cells fitted to ``widths``, ``width`` cells long.

        The segments are made here, as rich would render the line's text (a segment per
        styled cell, the padding and plain cells between them joined), without building that
        text first: a table's new rows are drawn on every toggle."""
        if any(cell.spans for cell in cells):
            return self._strip(self._line(cells, widths), width, style, meta_row)
        pad = " " * CELL_PADDING
        plain: Style | None = None
        segments: list[Segment] = []
        run: list[str] = []
        for cell, column in zip(cells, widths, strict=True):
            text, length = cell.plain, cell.cell_len
            if length > column:
                piece = cell.copy()
                piece.truncate(column, overflow="ellipsis", pad=False)
                text, length = piece.plain, piece.cell_len
            room = " " * (column - length)
            right = cell.justify == "right"
            run.append(pad + room if right else pad)
            if cell.style:
                plain = self._cell_style("")
                if joined := "".join(run):
                    segments.append(Segment(joined, plain))
                run = []
                if text:
                    segments.append(Segment(text, self._cell_style(cell.style)))
            else:
                run.append(text)
            run.append(pad if right else room + pad)
        if joined := "".join(run):
            segments.append(Segment(joined, plain))
        return self._styled(Strip(segments).adjust_cell_length(width), style, meta_row)

    def _cell_style(self, name: str | Style) -> Style:
        # A cell's style as rich resolves a span's (under the line's own, empty style).
        style = self._cell_styles.get(name)
        if style is None:
            console = self.app.console
            null = Style.null()
            line = console.get_style("", default=null)
            styles = (line,) if name == "" else (line, console.get_style(name, default=null))
            style = self._cell_styles[name] = Style.combine(styles)
        return style

    def _strip(self, text: Text, width: int, style: Style, meta_row: int | None = None) -> Strip:
        return self._styled(
            Strip(text.render(self.app.console)).adjust_cell_length(width), style, meta_row
        )

    @staticmethod
    def _styled(strip: Strip, style: Style, meta_row: int | None) -> Strip:
        # The row's style and its meta in one pass: one meta style per row, not one per
        # segment (building a Style is most of the cost of a row line).
        meta = Style.from_meta({"row": meta_row}) if meta_row is not None else None
        drawn = []
        for segment in strip:
            shown = style + segment.style if style else segment.style
            if meta is not None:
                shown = shown + meta if shown else meta
            drawn.append(Segment(segment.text, shown))
        return Strip(drawn)

    def on_focus(self) -> None:
        """Show the focused cursor style."""
        self._styles.clear()
        self.refresh()

    def on_blur(self) -> None:
        """Show the unfocused cursor style."""
        self._styles.clear()
        self.refresh()

    def on_click(self, event: events.Click) -> None:
        """A click puts the cursor on a row; a second click on it chooses it."""
        row = event.style.meta.get("row") if event.style else None
        if not isinstance(row, int):
            return
        if row == self.cursor_row:
            self.action_choose()
        self.move_cursor(row=row)

    def action_cursor_up(self) -> None:
        """One row up."""
        self.move_cursor(row=self.cursor_row - 1)

    def action_cursor_down(self) -> None:
        """One row down."""
        self.move_cursor(row=self.cursor_row + 1)

    def action_page_up(self) -> None:
        """One screenful up."""
        self.move_cursor(row=self.cursor_row - max(self.size.height - HEADER_LINES, 1))

    def action_page_down(self) -> None:
        """One screenful down."""
        self.move_cursor(row=self.cursor_row + max(self.size.height - HEADER_LINES, 1))

    def action_first(self) -> None:
        """The first row."""
        self.move_cursor(row=0)

    def action_last(self) -> None:
        """The last row."""
        self.move_cursor(row=len(self._cell_rows) - 1)

    def action_choose(self) -> None:
        """Choose the row under the cursor."""
        if 0 <= self.cursor_row < len(self._cell_rows):
            self.post_message(self.RowChosen(self, self.cursor_row))
