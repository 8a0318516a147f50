"""What the app looks like: regenerate deliberately (``--snapshot-update``) and look at the
SVGs in ``__snapshots__/`` before accepting them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from app_helpers import make_app, wait_for, wait_for_preview
from promptdeck.tui.app import PromptdeckApp
from promptdeck.tui.screens.main import MainScreen
from promptdeck.tui.screens.run_history import RunHistoryScreen
from textual.pilot import Pilot

WIDE = (160, 45)
NARROW = (80, 24)

SnapCompare = Callable[..., bool]


def _app(root: Path, theme: str | None = None) -> PromptdeckApp:
    return make_app(root, theme=theme, stable=True)


async def _preview_ready(pilot: Pilot[Any], story_id: str | None = None) -> MainScreen:
    """The preview is current, and every worker has finished: nothing moves in the picture."""
    screen = await wait_for_preview(pilot, story_id)
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    return screen


async def _finished_dev_run(pilot: Pilot[Any]) -> MainScreen:
    screen = await _preview_ready(pilot, "1-1")
    while screen.phase != "dev":
        await pilot.press("right_square_bracket")
    await _preview_ready(pilot, "1-1")
    await pilot.press("r")
    await wait_for(pilot, lambda: pilot.app.screen is not screen, "the confirmation")
    await pilot.press("enter")
    await wait_for(pilot, lambda: screen.last_result is not None, "the run to end")
    await wait_for(pilot, lambda: screen.phase == "review", "the flow to move to review")
    await _preview_ready(pilot, "1-1")
    return screen


def test_main_screen_on_the_demo(snap_compare: SnapCompare, demo_root: Path) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await _preview_ready(pilot, "1-1")

    assert snap_compare(_app(demo_root), terminal_size=WIDE, run_before=run_before)


def test_main_screen_at_80_by_24(snap_compare: SnapCompare, demo_root: Path) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await _preview_ready(pilot, "1-1")

    assert snap_compare(_app(demo_root), terminal_size=NARROW, run_before=run_before)


def test_oversized_story(snap_compare: SnapCompare, demo_root: Path) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        screen = await _preview_ready(pilot, "1-1")
        assert screen.catalog is not None
        screen.select_story(screen.catalog.find("2-2"))
        await _preview_ready(pilot, "2-2")

    assert snap_compare(_app(demo_root), terminal_size=WIDE, run_before=run_before)


def test_oversized_story_refusal(snap_compare: SnapCompare, demo_root: Path) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        screen = await _preview_ready(pilot, "1-1")
        assert screen.catalog is not None
        screen.select_story(screen.catalog.find("2-2"))
        await _preview_ready(pilot, "2-2")
        await pilot.press("r")
        await wait_for(pilot, lambda: pilot.app.screen is not screen, "the confirmation")
        await pilot.app.workers.wait_for_complete()

    assert snap_compare(_app(demo_root), terminal_size=WIDE, run_before=run_before)


def test_finished_run(snap_compare: SnapCompare, demo_root: Path) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await _finished_dev_run(pilot)

    assert snap_compare(_app(demo_root), terminal_size=WIDE, run_before=run_before)


def test_run_history(snap_compare: SnapCompare, demo_root: Path) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await _finished_dev_run(pilot)
        await pilot.press("h")
        await wait_for(
            pilot,
            lambda: isinstance(pilot.app.screen, RunHistoryScreen) and bool(pilot.app.screen.runs),
            "the history",
        )

    assert snap_compare(_app(demo_root), terminal_size=WIDE, run_before=run_before)


def test_light_theme(snap_compare: SnapCompare, demo_root: Path) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await _preview_ready(pilot, "1-1")

    app = _app(demo_root, theme="promptdeck-light")
    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)


def test_high_contrast_theme(snap_compare: SnapCompare, demo_root: Path) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await _preview_ready(pilot, "1-1")

    app = _app(demo_root, theme="promptdeck-high-contrast")
    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)


def test_dark_theme(snap_compare: SnapCompare, demo_root: Path) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await _preview_ready(pilot, "1-1")

    app = _app(demo_root, theme="promptdeck-dark")
    assert snap_compare(app, terminal_size=(120, 36), run_before=run_before)


SIZES = {"80x24": (80, 24), "100x30": (100, 30), "160x45": (160, 45), "220x50": (220, 50)}


@pytest.mark.parametrize("size", list(SIZES))
def test_main_screen_at_every_size(snap_compare: SnapCompare, demo_root: Path, size: str) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await _preview_ready(pilot, "1-1")

    assert snap_compare(_app(demo_root), terminal_size=SIZES[size], run_before=run_before)


@pytest.mark.parametrize("size", list(SIZES))
def test_confirmation_at_every_size(snap_compare: SnapCompare, demo_root: Path, size: str) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        screen = await _preview_ready(pilot, "1-1")
        await pilot.press("r")
        await wait_for(pilot, lambda: pilot.app.screen is not screen, "the confirmation")
        await pilot.app.workers.wait_for_complete()
        await pilot.pause()

    assert snap_compare(_app(demo_root), terminal_size=SIZES[size], run_before=run_before)


@pytest.mark.parametrize("size", list(SIZES))
def test_phases_view_at_every_size(snap_compare: SnapCompare, demo_root: Path, size: str) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await _preview_ready(pilot, "1-1")
        await pilot.press("3")
        await pilot.pause()

    assert snap_compare(_app(demo_root), terminal_size=SIZES[size], run_before=run_before)


@pytest.mark.parametrize("size", list(SIZES))
def test_composition_view_at_every_size(
    snap_compare: SnapCompare, demo_root: Path, size: str
) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await _preview_ready(pilot, "1-1")
        await pilot.press("b")
        await pilot.pause()

    assert snap_compare(_app(demo_root), terminal_size=SIZES[size], run_before=run_before)
