"""Space used where the content is: the tree widens to its titles on a wide terminal (up to a
share), the meter keeps a compact bar at 80 columns, and a crossed argv or error line is
marked."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from app_helpers import make_app, run_async, wait_for_preview
from promptdeck.core.tokens.counter import ARGV_LIMIT_BYTES
from promptdeck.tui.widgets.meter_line import MeterLine
from promptdeck.tui.widgets.stories_pane import STORIES_SHARE, StoriesPane


@pytest.mark.parametrize("size", [(120, 40), (200, 50)])
@run_async
async def test_the_tree_widens_to_its_titles_up_to_a_share(
    demo_root: Path, size: tuple[int, int]
) -> None:
    app = make_app(demo_root, stable=True)
    async with app.run_test(size=size) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        await pilot.pause()
        width = screen.query_one(StoriesPane).outer_size.width
        if size[0] < 130:
            assert width <= 34  # the narrow layout's own limit holds
        else:
            least, most = (round(size[0] * share) for share in STORIES_SHARE)
            assert least < width <= most  # wider than the old 21 %, never past the share


@run_async
async def test_a_short_plan_keeps_the_least_share(demo_root: Path) -> None:
    app = make_app(demo_root, stable=True)
    async with app.run_test(size=(200, 50)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        pane = screen.query_one(StoriesPane)
        short = tuple(replace(s, title=s.title[:8]) for s in pane.stories or ())
        pane.stories = short
        screen.on_resize()
        await pilot.pause()
        assert pane.outer_size.width == round(200 * STORIES_SHARE[0])


@run_async
async def test_at_80_columns_the_meter_keeps_its_bars_and_marks_a_crossed_line(
    demo_root: Path,
) -> None:
    app = make_app(demo_root, stable=True)
    # Tall enough to keep the meter's two rows (a short terminal folds them into one).
    async with app.run_test(size=(80, 30)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        meter = screen.query_one(MeterLine)
        injection, system = str(meter.render()).splitlines()
        assert "░" in injection and "░" in system
        assert injection.startswith("inj ") and system.startswith("sys ")
        assert "over argv" not in system and "┃" not in system
        reading = meter.reading
        assert reading is not None
        meter.reading = replace(reading, system_bytes=ARGV_LIMIT_BYTES + 50_000)
        await pilot.pause()
        system = str(meter.render()).splitlines()[1]
        assert "over argv" in system and "┃" in system
