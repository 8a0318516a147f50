"""The eight layers of the system prompt: id, title, source, bytes, tokens, share."""

from __future__ import annotations

from collections.abc import Sequence
from functools import partial

from promptdeck.core.layers import PromptLayer
from rich.text import Text
from textual.message import Message

from ...core.terminal import printable_line
from ...core.units import human_bytes, human_tokens
from ..format import share_bar
from .fitted_table import Cell, ColumnSpec, FittedTable, ellipsize_path

BAR_WIDTH = 8


class LayersTable(FittedTable):
    """One row per layer, in the fixed order; Enter on a row asks to show the layer's text."""

    DEFAULT_CSS = """
    LayersTable {
        height: 9;
        background: $surface;
    }
    """

    COLUMNS = (
        ColumnSpec("layer", "id", 8),
        ColumnSpec("title", "title", 16),
        ColumnSpec("source", "source", None, minimum=8, drop_below=60),
        ColumnSpec("bytes", "bytes", 9, right=True),
        ColumnSpec("tokens", "tokens", 6, right=True),
        ColumnSpec("share", "bar", BAR_WIDTH, drop_below=70),
    )

    class LayerChosen(Message):
        """The user asked to read one layer."""

        def __init__(self, layer: PromptLayer) -> None:
            super().__init__()
            self.layer = layer

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._shown_layers: tuple[PromptLayer, ...] = ()

    @property
    def shown_layers(self) -> tuple[PromptLayer, ...]:
        """The layers shown."""
        return self._shown_layers

    def show_layers(self, layers: Sequence[PromptLayer], total_bytes: int) -> None:
        """Replace the rows; token cells read ``…`` until the layers are counted."""
        self._shown_layers = tuple(layers)
        rows: list[tuple[str, tuple[Cell, ...]]] = []
        for layer in self._shown_layers:
            style = "dim" if layer.missing else ""
            title = printable_line(layer.title) + (f" ({layer.absence})" if layer.absence else "")
            cells = (
                Text(layer.layer_id, style="bold", no_wrap=True),
                Text(title, style=style, overflow="ellipsis", no_wrap=True),
                partial(_source_cell, layer.source or ""),
                Text(human_bytes(layer.bytes), style=style, justify="right"),
                Text(human_tokens(layer.tokens), style=style, justify="right"),
                Text(share_bar(layer.bytes, total_bytes, BAR_WIDTH)),
            )
            rows.append((layer.layer_id, cells))
        self.set_rows(rows)

    def on_fitted_table_row_chosen(self, event: FittedTable.RowChosen) -> None:
        """Turn a chosen row into :class:`LayerChosen`."""
        event.stop()
        if 0 <= event.index < len(self._shown_layers):
            self.post_message(self.LayerChosen(self._shown_layers[event.index]))


def _source_cell(source: str, width: int) -> Text:
    return Text(ellipsize_path(printable_line(source), width), style="dim", no_wrap=True)
