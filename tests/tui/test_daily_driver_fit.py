"""On a short terminal the files table keeps rows of its own; the cache row keeps every part at
any width; the meter and the copy menu give the prompt's size as one labelled figure."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import make_app, run_async, wait_for_preview
from promptdeck.core.units import human_bytes
from promptdeck.tui.widgets.files_table import FilesTable
from promptdeck.tui.widgets.fitted_table import HEADER_LINES
from promptdeck.tui.widgets.meter_line import MeterLine
from textual.widgets import Static


async def _settled(pilot, story_id: str):  # type: ignore[no-untyped-def]
    screen = await wait_for_preview(pilot, story_id)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    return screen


def _file_rows(screen) -> int:  # type: ignore[no-untyped-def]
    table = screen.query_one(FilesTable)
    return min(table.size.height - HEADER_LINES, len(table.shown_files))


@run_async
async def test_three_file_rows_show_at_80_by_24_and_more_with_the_preview_alone(
    demo_root: Path,
) -> None:
    app = make_app(demo_root, stable=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await _settled(pilot, "1-1")
        shared = _file_rows(screen)
        assert shared >= 3
        await pilot.press("2")
        await pilot.pause()
        assert _file_rows(screen) > shared
        # Both measures stay on screen, on one row.
        meter = screen.query_one(MeterLine)
        assert meter.size.height == 1
        text = meter.render().plain
        assert "inj " in text and "sys " in text


@run_async
async def test_a_tall_terminal_keeps_every_row_under_the_tables(demo_root: Path) -> None:
    app = make_app(demo_root, stable=True)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _settled(pilot, "1-1")
        assert screen.query_one(MeterLine).size.height == 2
        assert screen.query_one("#cache-line", Static).display


@pytest.mark.parametrize("width", [80, 120, 160, 200, 230])
@run_async
async def test_the_cache_row_keeps_every_part(demo_root: Path, width: int) -> None:
    # A priced model, so the row has a dollar figure (an unpriced one says so instead).
    config = demo_root / ".promptdeck" / "config.toml"
    with config.open("a", encoding="utf-8") as handle:
        handle.write('\n[pricing]\nmodel = "claude-sonnet-4-6"\n')
    app = make_app(demo_root, stable=True)
    async with app.run_test(size=(width, 40)) as pilot:
        screen = await _settled(pilot, "1-1")
        row = screen.query_one("#cache-line", Static)
        shown = str(row.render())
        assert shown.startswith("cache") and "≈$" in shown and "⚠" in shown
        assert "lay" in shown  # the delivery, whole or short
        assert shown.count("→") == 3  # every pair of the sequence
        assert len(shown) <= row.content_region.width
        # The row whole on hover, then the model it prices and where that came from.
        tooltip = str(row.tooltip)
        assert tooltip.startswith(f"{screen.preview.cache_line}\nmodel claude-sonnet-4-6: from ")


@run_async
async def test_the_meter_and_the_copy_menu_give_one_sent_size(demo_root: Path) -> None:
    app = make_app(demo_root, stable=True)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await _settled(pilot, "1-1")
        assert screen.prompt is not None
        sent = f"{human_bytes(screen.prompt.system_meter.bytes)} sent"
        assert sent in screen.query_one(MeterLine).render().plain
        labels = dict(screen.copy_choices())
        assert labels["system"].endswith(sent)
