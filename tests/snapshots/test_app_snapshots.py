"""What the app looks like: regenerate deliberately (``--snapshot-update``) and look at the
SVGs in ``__snapshots__/`` before accepting them."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from promptdeck.core.workspace import open_workspace
from promptdeck.tui.app import PromptdeckApp
from promptdeck.tui.screens.main import MainScreen
from promptdeck.tui.screens.run_history import RunHistoryScreen
from promptdeck.tui.settings import LoadedSettings, UserSettings
from textual.pilot import Pilot

WIDE = (160, 45)
NARROW = (80, 24)
WAIT_LIMIT_SECONDS = 60.0

SnapCompare = Callable[..., bool]


def _app(root: Path, theme: str | None = None) -> PromptdeckApp:
    settings = LoadedSettings(UserSettings(theme=theme), root.parent / "settings.toml")
    return PromptdeckApp(
        open_workspace(root), workspace_label=root.name, settings=settings, stable=True
    )


async def _until(pilot: Pilot[Any], condition: Callable[[], bool], what: str) -> None:
    waited = 0.0
    while not condition():
        await pilot.pause(0.05)
        waited += 0.05
        if waited > WAIT_LIMIT_SECONDS:
            raise AssertionError(f"gave up waiting for {what}")


def _main(pilot: Pilot[Any]) -> MainScreen:
    return next(s for s in pilot.app.screen_stack if isinstance(s, MainScreen))


async def _preview_ready(pilot: Pilot[Any], story_id: str | None = None) -> MainScreen:
    await _until(
        pilot,
        lambda: any(isinstance(s, MainScreen) for s in pilot.app.screen_stack),
        "the main screen",
    )
    screen = _main(pilot)

    def ready() -> bool:
        prompt = screen.prompt
        return (
            prompt is not None
            and screen.prompt_counted
            and (story_id is None or prompt.story.id == story_id)
            and prompt.request == screen.current_request()
        )

    await _until(pilot, ready, "the preview")
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    return screen


async def _finished_dev_run(pilot: Pilot[Any]) -> MainScreen:
    screen = await _preview_ready(pilot, "1-1")
    while screen.phase != "dev":
        await pilot.press("right_square_bracket")
    await _preview_ready(pilot, "1-1")
    await pilot.press("r")
    await _until(pilot, lambda: pilot.app.screen is not screen, "the confirmation")
    await pilot.press("enter")
    await _until(pilot, lambda: screen.last_result is not None, "the run to end")
    await _until(pilot, lambda: screen.phase == "review", "the flow to move to review")
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
        await _until(pilot, lambda: pilot.app.screen is not screen, "the confirmation")
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
        await _until(
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
