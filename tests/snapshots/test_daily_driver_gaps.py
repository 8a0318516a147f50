"""The daily driver's gaps, closed, at the sizes people use: the files table keeps rows of its
own on a short terminal (more with the preview alone), the app reopens where it was left, the
cache row keeps every part at any width, and the prompt's size is one figure, labelled, on
the meter and in the copy menu. Regenerate deliberately (``--snapshot-update``) and look at
the SVGs before accepting them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from app_helpers import make_app, settled_preview, wait_for
from promptdeck.tui.session.last_place import LastPlace, remember_last_place
from textual.pilot import Pilot

SIZES = {"80x24": (80, 24), "120x40": (120, 40), "200x50": (200, 50)}
CACHE_WIDTHS = {"80": (80, 30), "120": (120, 40), "160": (160, 40), "200": (200, 50)}
CACHE_WIDTHS["230"] = (230, 50)

SnapCompare = Callable[..., bool]


@pytest.mark.parametrize("size", list(SIZES))
def test_the_files_table_keeps_rows(snap_compare: SnapCompare, demo_root: Path, size: str) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await settled_preview(pilot, "1-1")

    app = make_app(demo_root, stable=True)
    assert snap_compare(app, terminal_size=SIZES[size], run_before=run_before)


@pytest.mark.parametrize("size", list(SIZES))
def test_the_preview_alone_shows_more_files(
    snap_compare: SnapCompare, demo_root: Path, size: str
) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await settled_preview(pilot, "1-1")
        await pilot.press("2")
        await pilot.pause()

    app = make_app(demo_root, stable=True)
    assert snap_compare(app, terminal_size=SIZES[size], run_before=run_before)


@pytest.mark.parametrize("size", list(SIZES))
def test_the_app_reopens_where_it_was_left(
    snap_compare: SnapCompare, demo_root: Path, size: str
) -> None:
    remember_last_place(demo_root, LastPlace("2-1", "review"))

    async def run_before(pilot: Pilot[Any]) -> None:
        screen = await settled_preview(pilot, "2-1")
        await wait_for(pilot, lambda: screen.phase == "review", "the phase left")
        await settled_preview(pilot, "2-1")

    app = make_app(demo_root, stable=True)
    assert snap_compare(app, terminal_size=SIZES[size], run_before=run_before)


@pytest.mark.parametrize("width", list(CACHE_WIDTHS))
def test_the_cache_row_keeps_every_part(
    snap_compare: SnapCompare, demo_root: Path, width: str
) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await settled_preview(pilot, "1-1")

    app = make_app(demo_root, stable=True)
    assert snap_compare(app, terminal_size=CACHE_WIDTHS[width], run_before=run_before)
