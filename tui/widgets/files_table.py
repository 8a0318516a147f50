"""The injected files of the preview: every candidate, included or not, and why."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from promptdeck.core.injection import InjectedFile
from promptdeck.core.textfit import shorten_paths
from rich.text import Text
from textual.message import Message

from ...core.terminal import printable_line
from ...core.units import human_bytes, human_tokens
from ..format import share_bar
from .fitted_table import Cell, ColumnSpec, FittedTable

BAR_WIDTH = 6

CATEGORY_LABELS = {
    "project-context": "project",
    "always-load": "always",
    "validation": "validate",
    "additional": "added",
}
"""Shorter names for the category column (the full ones are in the file view)."""
STATUS_LABELS = {"outside-project": "outside"}


class FilesTable(FittedTable):
    """Path, category, status, bytes, tokens, a share bar and why the file is there (own key,
    heading, category pattern, …); files left out are dimmed with their reason. Enter on a
    row asks to show the file's text."""

    DEFAULT_CSS = """
    FilesTable {
        height: 1fr;
        background: $surface;
        border-top: solid $panel;
    }
    """

    COLUMNS = (
        ColumnSpec("file", "path", None, minimum=16, weight=3),
        ColumnSpec("category", "category", 9, drop_below=120),
        ColumnSpec("status", "status", 10),
        ColumnSpec("bytes", "bytes", 9, right=True),
        ColumnSpec("tokens", "tokens", 6, right=True, drop_below=66),
        ColumnSpec("share", "bar", BAR_WIDTH, drop_below=88),
        ColumnSpec("why", "why", None, minimum=12, weight=2),
    )

    class FileChosen(Message):
        """The user asked to read one injected file."""

        def __init__(self, file: InjectedFile) -> None:
            super().__init__()
            self.file = file

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown_files: tuple[InjectedFile, ...] = ()

    @property
    def shown_files(self) -> tuple[InjectedFile, ...]:
        """The files shown, in injection order."""
        return self._shown_files

    def show_files(self, files: Sequence[InjectedFile], total_bytes: int) -> None:
        """Replace the rows; files left out are dimmed and say why."""
        self._shown_files = tuple(files)
        paths = _ShortPaths(tuple(printable_line(item.path) for item in self._shown_files))
        rows: list[tuple[str, tuple[Cell, ...]]] = []
        for index, item in enumerate(self._shown_files):
            dim = "" if item.included else "dim"
            flags = f" [{', '.join(item.flags)}]" if item.flags else ""
            secret = bool(item.secrets) and item.included
            if secret:
                # The visible mark: never the secret, only where and what kind.
                found = ", ".join(f"line {f.line} {f.kind}" for f in item.secrets)
                flags = f" ⚠ likely secrets: {found}"
            cells = (
                partial(_path_cell, paths, index, dim),
                Text(CATEGORY_LABELS.get(item.category, item.category), style=dim, no_wrap=True),
                Text(
                    "⚠ secret" if secret else STATUS_LABELS.get(item.status, item.status),
                    style="bold red" if secret else "" if item.included else "dim italic",
                    no_wrap=True,
                ),
                Text(human_bytes(item.bytes), style=dim, justify="right"),
                Text(
                    human_tokens(item.tokens) if item.included else "", style=dim, justify="right"
                ),
                Text(share_bar(item.bytes if item.included else 0, total_bytes, BAR_WIDTH)),
                Text(
                    # Why the file is a candidate (own key, heading, category pattern, …),
                    # then what became of it.
                    printable_line((f"{item.why}: " if item.why else "") + item.reason + flags),
                    style="red" if secret else dim,
                    overflow="ellipsis",
                    no_wrap=True,
                ),
            )
            rows.append((str(index), cells))
        self.set_rows(rows)

    def on_fitted_table_row_chosen(self, event: FittedTable.RowChosen) -> None:
        """Turn a chosen row into :class:`FileChosen`."""
        event.stop()
        if 0 <= event.index < len(self._shown_files):
            self.post_message(self.FileChosen(self._shown_files[event.index]))


class _ShortPaths:
    """The table's paths shortened together to a column width, once per width: every row's
    cell asks for its own, and shortening them all per row made a table of n files cost n²."""

    def __init__(self, paths: tuple[str, ...]) -> None:
        self.paths = paths
        self._by_width: dict[int, list[str]] = {}

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _ShortPaths) and other.paths == self.paths

    def __hash__(self) -> int:
        return hash(self.paths)

    def at(self, width: int) -> list[str]:
        """Every path in at most ``width`` cells, kept apart from each other."""
        shown = self._by_width.get(width)
        if shown is None:
            shown = self._by_width[width] = shorten_paths(self.paths, width)
        return shown


def _path_cell(paths: _ShortPaths, index: int, style: str, width: int) -> Text:
    # Cut from the middle, and never so that two rows read the same: the file name is what
    # tells files apart.
    return Text(paths.at(width)[index], style=style, no_wrap=True)
