"""Tables for people and for pipes, shared by the CLI commands.

On a terminal a table fits its width: columns are first shortened (the ones that may be, down
to their minimum): a cell given in shorter forms (:data:`Cell`: ``1,234,567`` and ``1.2M``)
shows the longest form that fits, an abbreviation rather than a cut; other text is cut, a path
from the middle keeping its file name, prose at its end with ``…``. Only when every column at
its shortest is still too wide are the least useful ones left out; a cell is never wrapped,
so a word is never split.
Piped or redirected, the same records print as plain lines, one record per line, fields
separated by a tab, without box drawing — so ``grep`` and ``cut -f`` work.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from typing import Any, TextIO, TypeAlias

from promptdeck.core.lean_dataclass import dataclass

from ..core.terminal import printable_line
from ..core.textfit import shorten_path

CELL_GAP = 2
"""Columns between two cells on a terminal."""

Cell: TypeAlias = str | tuple[str, ...]
"""A cell's text, or its forms longest first (the full text, then abbreviations): piped output
and a wide terminal show the first, a narrower one the longest that fits."""


@dataclass(frozen=True)
class Column:
    """One column of a record table.

    Attributes:
        name: the header.
        keep: how much the column matters; the lowest is dropped first when the table does
            not fit (0: never dropped).
        minimum: the width it may be shortened to (None: never shortened).
        path: shorten from the middle keeping the last path part, instead of at the end.
        right: right-aligned (numbers).
        piped_only: shown only in piped output (a record's kind, which a terminal's title
            already says).
        short_name: the header where the column is narrower than its name (``pred``).
    """

    name: str
    keep: int = 0
    minimum: int | None = None
    path: bool = False
    right: bool = False
    piped_only: bool = False
    short_name: str | None = None


def shorten(text: str, width: int, *, path: bool = False) -> str:
    """``text`` in at most ``width`` cells: cut at the end with ``…``, or for a path as
    :func:`~promptdeck.core.textfit.shorten_path` does (from the middle, never the name's
    ends)."""
    if len(text) <= width:
        return text
    if width <= 1:
        return text[:width]
    if path:
        return shorten_path(text, width)
    return text[: width - 1] + "…"


def fit_columns(
    columns: Sequence[Column],
    natural: Sequence[int],
    total: int,
    least: Sequence[int | None] | None = None,
) -> list[int | None]:
    """The width of each column in ``total`` cells, or None for a column left out.

    Args:
        natural: the widest cell (header included) of each column.
        least: the narrowest each column may be (None: not shortened); default each column's
            ``minimum``.
    """
    widths: list[int | None] = list(natural)
    floors = list(least) if least is not None else [column.minimum for column in columns]

    def used(candidate: Sequence[int | None]) -> int:
        shown = [w for w in candidate if w is not None]
        return sum(shown) + CELL_GAP * max(len(shown) - 1, 0)

    def shortest(candidate: Sequence[int | None]) -> list[int | None]:
        return [
            None if w is None else min(w, floor) if floor is not None else w
            for w, floor in zip(candidate, floors, strict=True)
        ]

    def importance(index: int) -> tuple[float, int]:
        keep = columns[index].keep
        return (keep if keep > 0 else float("inf"), -index)

    # Leave out the least useful columns until the rest fit at their shortest…
    for index in sorted((i for i, c in enumerate(columns) if c.keep > 0), key=importance):
        if used(shortest(widths)) <= total:
            break
        widths[index] = None
    # …then shorten, the column with the most to spare first (the longest prose before an
    # abbreviation), each only as much as needed.
    while (excess := used(widths) - total) > 0:
        spare = sorted(
            (
                (width - floor, index)
                for index, (width, floor) in enumerate(zip(widths, floors, strict=True))
                if width is not None and floor is not None and width > floor
            ),
            reverse=True,
        )
        if not spare:
            break
        most, index = spare[0]
        step = min(excess, max(most - (spare[1][0] if len(spare) > 1 else 0), 1))
        widths[index] = (widths[index] or 0) - step
    return widths


def _forms(value: object) -> tuple[str, ...]:
    """A cell's forms, longest first, each made printable (controls shown, one line)."""
    forms = value if isinstance(value, tuple) else (value,)
    return tuple(printable_line(str(form)) for form in forms) or ("",)


def _least(column: Column, cells: Sequence[tuple[str, ...]]) -> int | None:
    """The narrowest ``column`` may be: its ``minimum``; else, when its cells or header have
    shorter forms, the widest of their shortest forms; else None (never shortened)."""
    if column.minimum is not None:
        return column.minimum
    if column.short_name is None and all(len(cell) == 1 for cell in cells):
        return None
    header = column.short_name or column.name
    return max([len(header), *(len(cell[-1]) for cell in cells)])


def _fitted(forms: tuple[str, ...], width: int, column: Column) -> str:
    """The longest form of a cell that fits ``width``; else its shortest, cut to fit."""
    for form in forms:
        if len(form) <= width:
            return form
    return shorten(forms[-1], width, path=column.path)


def is_terminal(stream: TextIO | None = None) -> bool:
    """True when ``stream`` (default stdout) is a terminal a person reads."""
    stream = stream or sys.stdout
    return bool(getattr(stream, "isatty", lambda: False)())


def print_records(
    columns: Sequence[Column],
    rows: Sequence[Sequence[Cell]],
    *,
    title: str | None = None,
    console: Any = None,
    width: int | None = None,
    plain: bool | None = None,
) -> None:
    """Print ``rows`` as a fitted table on a terminal, else as tab-separated lines.

    Args:
        rows: the records; a cell may carry shorter forms of itself (:data:`Cell`).
        console: the Rich console for terminals (default: a new one).
        width: the terminal width (default: the console's).
        plain: force plain lines (True) or a table (False); default: plain unless stdout is a
            terminal.
    """
    if plain is None:
        plain = not is_terminal()
    # Workspace and agent text: controls made visible, one line a field (never a raw escape).
    cells = [[_forms(value) for value in row] for row in rows]
    if plain:
        out = sys.stdout
        for row in cells:
            # One record a line: tabs and newlines inside a field would break that.
            fields = (" ".join(cell[0].split()) for cell in row)
            out.write("\t".join(fields) + "\n")
        return
    from rich.console import Console
    from rich.text import Text

    console = console or Console()
    total = width or console.width
    visible = [i for i, column in enumerate(columns) if not column.piped_only]
    natural = [max([len(columns[i].name), *(len(row[i][0]) for row in cells)]) for i in visible]
    least = [_least(columns[i], [row[i] for row in cells]) for i in visible]
    fitted = fit_columns([columns[i] for i in visible], natural, total, least)
    widths: list[int | None] = [None] * len(columns)
    for i, width in zip(visible, fitted, strict=True):
        widths[i] = width
    shown = [i for i, w in enumerate(widths) if w is not None]

    def line(row: Sequence[tuple[str, ...]], style: str = "") -> Text:
        text = Text(no_wrap=True, overflow="ellipsis", style=style)
        for position, i in enumerate(shown):
            w = widths[i] or 0
            cell = _fitted(row[i], w, columns[i])
            text.append(cell.rjust(w) if columns[i].right else cell.ljust(w))
            if position < len(shown) - 1:
                text.append(" " * CELL_GAP)
        text.rstrip()
        return text

    if title:
        console.print(Text(title, style="bold"), soft_wrap=True)
    headers = [
        (column.name, column.short_name) if column.short_name else (column.name,)
        for column in columns
    ]
    console.print(line(headers, "bold"), soft_wrap=True)
    for row in cells:
        console.print(line(row), soft_wrap=True)
    dropped = [
        c.name for c, w in zip(columns, widths, strict=True) if w is None and not c.piped_only
    ]
    if dropped:
        import textwrap

        note = f"(not shown at this width: {', '.join(dropped)}; --json has every field)"
        # The note wraps between words at the table's width, like the rows above it.
        for part in textwrap.wrap(note, max(total, 20)):
            console.print(Text(part, style="dim"), soft_wrap=True)
