"""A DataTable whose columns fit its width: fixed columns keep their size, flexible ones
share what is left, and optional columns step aside on narrow screens, so the preview never
needs a horizontal scrollbar."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual.widgets import DataTable

CELL_PADDING = 1
SCROLLBAR_ALLOWANCE = 2
"""Cells kept free for a vertical scrollbar, so a long list never needs a horizontal one."""
HARD_MINIMUM = 4

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


def visible_columns(specs: Sequence[ColumnSpec], total: int) -> list[int]:
    """Indexes of the columns shown at a table width of ``total``."""
    return [index for index, spec in enumerate(specs) if total >= spec.drop_below]


def fit_widths(specs: Sequence[ColumnSpec], total: int, padding: int = CELL_PADDING) -> list[int]:
    """Widths for ``specs`` in ``total`` cells: fixed columns as given; flexible ones share the
    rest by weight, and shrink (largest first, never under :data:`HARD_MINIMUM`) to fit."""
    fixed = sum(spec.width or 0 for spec in specs)
    spare = total - fixed - 2 * padding * len(specs) - SCROLLBAR_ALLOWANCE
    flexible = [index for index, spec in enumerate(specs) if spec.width is None]
    weights = sum(specs[index].weight for index in flexible) or 1
    widths = [spec.width or 0 for spec in specs]
    for index in flexible:
        spec = specs[index]
        widths[index] = max(spare * spec.weight // weights, spec.minimum)
    while flexible and sum(widths[index] for index in flexible) > spare:
        widest = max(flexible, key=lambda index: widths[index])
        if widths[widest] <= HARD_MINIMUM:
            break
        widths[widest] -= 1
    return widths


class FittedTable(DataTable[Text]):
    """Rows are given as cells; columns are rebuilt to fit whenever the width changes."""

    DEFAULT_CSS = """
    FittedTable {
        overflow-x: hidden;
    }
    """

    COLUMNS: Sequence[ColumnSpec] = ()

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id, cursor_type="row", cell_padding=CELL_PADDING)
        self._rows: list[tuple[str, tuple[Cell, ...]]] = []
        self._fitted_width = -1

    def set_rows(self, rows: Sequence[tuple[str, tuple[Cell, ...]]]) -> None:
        """Replace the rows (key, one cell per column of :attr:`COLUMNS`), keeping the
        cursor's row number."""
        self._rows = list(rows)
        self._render_rows()

    def _render_rows(self) -> None:
        row = self.cursor_row
        width = self.size.width or 100
        shown = visible_columns(self.COLUMNS, width)
        specs = [self.COLUMNS[index] for index in shown]
        widths = fit_widths(specs, width)
        if width != self._fitted_width:
            self.clear(columns=True)
            for spec, cells in zip(specs, widths, strict=True):
                label = Text(spec.label, justify="right" if spec.right else "left")
                self.add_column(label, key=spec.key, width=cells)
            self._fitted_width = width
        else:
            self.clear()
        for key, cells in self._rows:
            picked = [cells[index] for index in shown]
            self.add_row(
                *(
                    cell(column) if callable(cell) else cell
                    for cell, column in zip(picked, widths, strict=True)
                ),
                key=key,
            )
        if self._rows:
            self.move_cursor(row=min(max(row, 0), len(self._rows) - 1), scroll=False)

    def on_resize(self) -> None:
        """Fit the columns to the new width."""
        if self.size.width != self._fitted_width:
            self._render_rows()
