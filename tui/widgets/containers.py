"""Containers drawn one line for all: the main screen, its panes, the regions row and the
preview's tab bodies.

Textual draws every line of a widget apart, a container's too, though a container with no
border above or below draws the same line top to bottom (its background, its side borders):
at 160×45 the main screen's containers were 12 of the 32 ms of a full frame, for lines their
children then cover. These draw one line and hand it on for every row; the frame is the same,
cell for cell (``tests/tui/test_containers.py`` compares it with Textual's own drawing).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.containers import Horizontal, Vertical
from textual.widget import Widget

if TYPE_CHECKING:
    from textual.geometry import Region
    from textual.strip import Strip

_NO_EDGE = ("", "none")


class SameEveryLine(Widget):
    """A widget whose lines are all alike while nothing is drawn above or below them (no top
    or bottom border or outline, no hatch or keyline): it draws the first and repeats it."""

    def _lines_alike(self) -> bool:
        styles = self.styles
        edges = (styles.border_top, styles.border_bottom, styles.outline_top, styles.outline_bottom)
        return (
            all(kind in _NO_EDGE for kind, _ in edges)
            and styles.keyline[0] in _NO_EDGE
            and styles.hatch in (None, "none")
        )

    def render_lines(self, crop: Region) -> list[Strip]:
        """The first line of ``crop`` for each of its rows, when all lines are alike."""
        if crop.height < 2 or not self._lines_alike():
            return super().render_lines(crop)
        return super().render_lines(crop._replace(height=1)) * crop.height


# Textual's container first: Textual takes a widget's CSS type and default CSS along the chain
# of first bases, so each stays a ``Vertical`` or ``Horizontal`` to its stylesheets.
class Column(Vertical, SameEveryLine):
    """Textual's ``Vertical``, drawn one line for all."""


class Row(Horizontal, SameEveryLine):
    """Textual's ``Horizontal``, drawn one line for all."""
