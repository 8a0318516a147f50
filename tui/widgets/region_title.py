"""The one-line title over each region of the main screen."""

from __future__ import annotations

from textual.widgets import Static


class RegionTitle(Static):
    """A region's name (and what it shows), bold on the panel colour, one line high."""

    DEFAULT_CSS = """
    RegionTitle {
        height: 1;
        padding: 0 1;
        background: $panel;
        color: $text-muted;
        text-style: bold;
    }
    """
