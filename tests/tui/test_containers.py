"""Containers drawn one line for all draw the frame Textual draws, cell for cell: the main
screen at three sizes and in each one-region view, and containers with borders above and below
(drawn Textual's way, line by line)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from app_helpers import make_app, run_async, settled_preview
from promptdeck.tui.widgets.containers import Column, Row, SameEveryLine
from textual.app import App, ComposeResult
from textual.widgets import Static


def _frame(app: App[Any]) -> list[list[tuple[str, str]]]:
    """Every cell run of a full frame of the app's screen, drawn afresh."""
    screen = app.screen
    for widget in screen.walk_children(with_self=True):
        widget._styles_cache.clear()
    update = screen._compositor.render_full_update()
    return [
        [(segment.text, str(segment.style)) for segment in strip]
        for strips in update.strips
        for strip in strips
    ]


def _both_ways(app: App[Any], monkeypatch: pytest.MonkeyPatch) -> tuple[list[Any], list[Any]]:
    """The frame drawn one line for all, then line by line as Textual draws it."""
    alike = _frame(app)
    with monkeypatch.context() as patched:
        patched.setattr(SameEveryLine, "_lines_alike", lambda self: False)
        apart = _frame(app)
    return alike, apart


@pytest.mark.parametrize("size", [(80, 24), (120, 40), (200, 50)])
@run_async
async def test_the_main_screen_is_drawn_as_textual_draws_it(
    demo_root: Path, size: tuple[int, int], monkeypatch: pytest.MonkeyPatch
) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=size) as pilot:
        await settled_preview(pilot, "1-1")
        drawn_once = {
            w.id
            for w in app.screen.walk_children()
            if isinstance(w, SameEveryLine) and w._lines_alike()
        }
        assert {"regions", "stories", "preview", "phases", "phase-panel"} <= drawn_once
        alike, apart = _both_ways(app, monkeypatch)
        assert alike == apart
        for key in ("1", "1", "2", "2", "3"):  # each region alone, and all again
            await pilot.press(key)
            await pilot.pause()
            alike, apart = _both_ways(app, monkeypatch)
            assert alike == apart, f"after {key}"


class _Boxes(App[None]):
    CSS = """
    #boxed { border: round $accent; height: 6; }
    #outlined { outline: heavy $error; height: 5; }
    #titled { border-top: solid $primary; height: 4; }
    #hatched { hatch: right $primary; height: 4; }
    """

    def compose(self) -> ComposeResult:
        with Row():
            with Column(id="boxed"):
                yield Static("in a box")
            yield Column(id="outlined")
        yield Column(id="titled")
        yield Column(id="hatched")


@run_async
async def test_containers_with_lines_above_or_below_are_drawn_line_by_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = _Boxes()
    async with app.run_test(size=(60, 24)) as pilot:
        await pilot.pause()
        columns = [w for w in app.screen.walk_children() if isinstance(w, Column)]
        assert len(columns) == 4 and not any(column._lines_alike() for column in columns)
        # Still Textual's containers to their stylesheets: a row lays its children side by side.
        boxed, outlined = next(w for w in app.screen.walk_children() if isinstance(w, Row)).children
        assert boxed.region.y == outlined.region.y and boxed.region.right <= outlined.region.x
        assert Column._css_type_names >= {"Column", "Vertical"}
        alike, apart = _both_ways(app, monkeypatch)
        assert alike == apart
