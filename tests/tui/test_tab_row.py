"""The preview's tab row: one widget that draws the labels and the bar under them, opens a tab on
a click or on left/right, and says which tab opened."""

from __future__ import annotations

import pytest
from app_helpers import run_async
from promptdeck.tui.widgets.tab_row import TabRow
from textual.app import App, ComposeResult
from textual.widgets import Static

TABS = (("one", "One"), ("two", "Second tab"), ("three", "Three"))


class _Host(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.opened: list[str] = []

    def compose(self) -> ComposeResult:
        yield TabRow(TABS, id="tabs")
        yield Static("below", id="below")

    def on_tab_row_activated(self, event: TabRow.Activated) -> None:
        assert event.control is self.query_one(TabRow)
        self.opened.append(event.tab)


@run_async
async def test_a_click_opens_the_tab_under_it_and_says_so() -> None:
    app = _Host()
    async with app.run_test(size=(60, 6)) as pilot:
        row = app.query_one(TabRow)
        assert row.active == "one" and app.opened == []
        labels = row.render_line(0).text
        assert labels.startswith(" One  Second tab  Three ") and len(labels) == 60
        await pilot.click(TabRow, offset=(8, 0))  # inside " Second tab "
        await pilot.pause()
        assert row.active == "two" and app.opened == ["two"]
        await pilot.click(TabRow, offset=(40, 0))  # past the last label: nothing
        await pilot.click(TabRow, offset=(20, 1))  # under " Three ", on the bar
        await pilot.pause()
        assert app.opened == ["two", "three"]


@run_async
async def test_left_and_right_step_along_the_row_and_wrap() -> None:
    app = _Host()
    async with app.run_test(size=(60, 6)) as pilot:
        row = app.query_one(TabRow)
        row.focus()
        await pilot.press("left")
        assert row.active == "three"
        await pilot.press("right", "right")
        await pilot.pause()
        assert row.active == "two" and app.opened == ["three", "one", "two"]
        row.active = "no such tab"
        assert row.active == "two"


@run_async
async def test_the_bar_marks_the_open_tab_and_the_open_label_stands_out() -> None:
    app = _Host()
    async with app.run_test(size=(60, 6)) as pilot:
        row = app.query_one(TabRow)

        def looks() -> tuple[list[object], list[object]]:
            labels = [s.style for s in row.render_line(0) if s.text.strip()]
            bar: list[object] = []  # the style of each cell of the bar
            for segment in row.render_line(1):
                bar += [segment.style] * segment.cell_length
            return labels, bar

        labels, bar = looks()
        assert labels[0] != labels[1] == labels[2]  # the open one differs
        assert len(bar) == 60 and bar[2] != bar[21] == bar[50]  # marked under " One "
        row.active = "three"  # " Three " spans cells 18-24
        await pilot.pause()
        labels, bar = looks()
        assert labels[2] != labels[0] == labels[1]
        assert bar[21] != bar[2] == bar[50]
        assert set(row.render_line(1).text) <= set("━╸╺")


def test_a_row_needs_tabs_and_opens_on_one_of_them() -> None:
    with pytest.raises(ValueError):
        TabRow(())
    assert TabRow(TABS, "no such tab").active == "one"
    assert TabRow(TABS, "three").active == "three"


@run_async
async def test_a_narrow_row_shows_the_open_tab() -> None:
    app = _Host()
    async with app.run_test(size=(20, 6)) as pilot:
        row = app.query_one(TabRow)
        assert row.render_line(0).text.startswith(" One  Second tab ")
        row.active = "three"  # " Three " spans cells 18-24, past the 20 shown
        await pilot.pause()
        labels = row.render_line(0).text
        assert len(labels) == 20 and labels.endswith(" Three ")
        await pilot.click(TabRow, offset=(1, 0))  # now under " Second tab "
        await pilot.pause()
        assert row.active == "two"
