"""A row of tabs drawn by one widget: the labels, and under them a bar that marks the open one.

It draws what Textual's ``Tabs`` draws (the same colours, the same bar), for the preview's five
tabs. ``Tabs`` builds each tab, its scroll container, its rows and its bar as widgets of their
own — ten widgets to style, lay out and render before the app's first frame, about 50 ms of a
fresh start on a 2-core machine. Here the row is one widget and its two lines are strips.

Click a label to open its tab; with the row focused, ``left`` and ``right`` move along it.
Setting :attr:`TabRow.active` (from code, or by the user) posts :class:`TabRow.Activated`. A row
narrower than its labels shows the part that holds the open tab, as Textual's tabs scroll.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import ClassVar

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual import events
from textual.binding import Binding, BindingType
from textual.message import Message
from textual.reactive import reactive
from textual.renderables.bar import Bar
from textual.strip import Strip
from textual.widget import Widget


class TabRow(Widget, can_focus=True):
    """Tabs given as ``(id, label)`` pairs; :attr:`active` is the open tab's id.

    Args:
        tabs: the tabs, left to right (at least one).
        active: the tab open at first (default, or when it is none of them: the first).
        id: the widget's id.

    Raises:
        ValueError: no tabs.
    """

    DEFAULT_CSS = """
    TabRow {
        width: 1fr;
        height: 2;
        & > .tab-row--tab { color: $foreground 50%; }
        & > .tab-row--hover { color: $foreground; }
        & > .tab-row--active { color: $foreground; }
        & > .tab-row--bar {
            color: $block-cursor-background;
            background: $foreground 10%;
        }
        &:focus {
            & > .tab-row--bar { background: $foreground 30%; }
            & > .tab-row--active {
                text-style: $block-cursor-text-style;
                color: $block-cursor-foreground;
                background: $block-cursor-background;
            }
        }
        &:ansi {
            & > .tab-row--tab { text-style: dim; }
            & > .tab-row--active { text-style: not dim bold; }
            & > .tab-row--bar { background: $border-blurred; }
        }
    }
    """

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "tab-row--tab",
        "tab-row--hover",
        "tab-row--active",
        "tab-row--bar",
    }

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("left", "step(-1)", "Previous tab", show=False),
        Binding("right", "step(1)", "Next tab", show=False),
    ]

    ALLOW_SELECT = False

    active: reactive[str] = reactive("", init=False)
    """The open tab's id."""
    hovered: reactive[int] = reactive(-1, init=False)
    """The index of the tab under the mouse (-1: none)."""

    class Activated(Message):
        """A tab was opened."""

        def __init__(self, tab_row: TabRow, tab: str) -> None:
            super().__init__()
            self.tab_row = tab_row
            self.tab = tab
            """Its id."""

        @property
        def control(self) -> TabRow:
            """The row (for ``@on(TabRow.Activated, "#id")``)."""
            return self.tab_row

    def __init__(
        self, tabs: Sequence[tuple[str, str]], active: str = "", *, id: str | None = None
    ) -> None:
        super().__init__(id=id)
        if not tabs:
            raise ValueError("a tab row needs at least one tab")
        self._tabs = tuple(tabs)
        ids = self.tab_ids
        self.set_reactive(TabRow.active, active if active in ids else ids[0])

    @property
    def tab_ids(self) -> tuple[str, ...]:
        """The tabs' ids, left to right."""
        return tuple(tab for tab, _ in self._tabs)

    def _spans(self) -> list[tuple[int, int]]:
        """Each tab's first cell and width (its label with one cell of padding each side)."""
        spans: list[tuple[int, int]] = []
        x = 0
        for _, label in self._tabs:
            width = cell_len(label) + 2
            spans.append((x, width))
            x += width
        return spans

    def _open_span(self) -> tuple[int, int]:
        return self._spans()[self.tab_ids.index(self.active)]

    def _offset(self) -> int:
        """The first cell of the labels shown: 0 unless the open tab would end past the row."""
        start, span = self._open_span()
        width = self.size.width
        return start if span > width else max(0, start + span - width)

    def _tab_at(self, x: int) -> int:
        x += self._offset()
        for index, (start, width) in enumerate(self._spans()):
            if start <= x < start + width:
                return index
        return -1

    def validate_active(self, active: str) -> str:
        return active if active in self.tab_ids else self.active

    def watch_active(self) -> None:
        self.refresh()
        self.post_message(self.Activated(self, self.active))

    def watch_hovered(self) -> None:
        self.refresh()

    def action_step(self, step: int) -> None:
        """Open the tab ``step`` places along (wrapping round)."""
        ids = self.tab_ids
        self.active = ids[(ids.index(self.active) + step) % len(ids)]

    def on_click(self, event: events.Click) -> None:
        index = self._tab_at(event.x)
        if index >= 0:
            self.active = self._tabs[index][0]

    def on_mouse_move(self, event: events.MouseMove) -> None:
        self.hovered = self._tab_at(event.x) if event.y == 0 else -1

    def on_leave(self, _event: events.Leave) -> None:
        self.hovered = -1

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        if y == 0:
            return self._labels(width)
        if y == 1:
            return self._bar(width)
        return Strip.blank(width, self.rich_style)

    def _labels(self, width: int) -> Strip:
        segments: list[Segment] = []
        for index, (tab, label) in enumerate(self._tabs):
            component = (
                "tab-row--active"
                if tab == self.active
                else "tab-row--hover"
                if index == self.hovered
                else "tab-row--tab"
            )
            segments.append(Segment(f" {label} ", self.get_component_rich_style(component)))
        offset = self._offset()
        strip = Strip(segments).crop(offset, offset + width)
        return strip.extend_cell_length(width, self.rich_style)

    def _bar(self, width: int) -> Strip:
        start, span = self._open_span()
        start -= self._offset()
        style = self.get_component_rich_style("tab-row--bar")
        bar = Bar(
            highlight_range=(start, start + span),
            highlight_style=Style.from_color(style.color),
            background_style=Style.from_color(style.bgcolor),
            width=width,
        )
        lines = self.app.console.render_lines(bar, self.app.console.options.update_width(width))
        return Strip(lines[0], width).apply_style(self.rich_style)
