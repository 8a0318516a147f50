"""What the app's launch holds back until its first frame is painted: the encoder process
(forked, held) and the cyclic garbage collector, both let go once the frame is on screen."""

from __future__ import annotations

import gc
from collections.abc import Iterator
from pathlib import Path

import pytest
from app_helpers import make_app, run_async, wait_for, wait_for_preview
from promptdeck.core.tokens import encoder_process
from promptdeck.tui import startup
from promptdeck.tui.screens.main import MainScreen
from promptdeck.tui.widgets.story_tree import StoryTree
from textual.color import Color


@pytest.fixture
def collector_restored() -> Iterator[None]:
    """Whatever a test does, the collector is on again after it."""
    try:
        yield
    finally:
        gc.enable()
        encoder_process.stop_encoder_processes()


def test_the_launch_forks_the_encoder_held_and_turns_the_collector_off(
    monkeypatch: pytest.MonkeyPatch, collector_restored: None
) -> None:
    started: list[tuple[str, bool, bool]] = []

    def start(encoding: str, *, first_run_only: bool = True, held: bool = False) -> bool:
        started.append((encoding, first_run_only, held))
        return True

    monkeypatch.setattr(startup, "start_encoder_process", start)
    startup.hold_for_first_frame("cl100k_base")
    assert started == [("cl100k_base", False, True)]
    assert not gc.isenabled()


def test_the_first_frame_lets_go_of_both_and_freezes_the_start(
    monkeypatch: pytest.MonkeyPatch, collector_restored: None
) -> None:
    steps: list[str] = []
    monkeypatch.setattr(startup, "release_encoder_processes", lambda: steps.append("release"))
    monkeypatch.setattr(gc, "freeze", lambda: steps.append("freeze"))
    gc.disable()
    startup.first_frame_painted()
    assert steps == ["release", "freeze"]
    assert gc.isenabled()
    # Without a held start (an app made in a test), nothing is frozen.
    steps.clear()
    startup.first_frame_painted()
    assert steps == ["release"]


@run_async
async def test_the_main_screen_lets_go_once_its_first_frame_is_drawn(
    demo_root: Path, monkeypatch: pytest.MonkeyPatch, collector_restored: None
) -> None:
    frames: list[int] = []
    painted: list[int] = []
    monkeypatch.setattr(startup, "first_frame_painted", lambda: painted.append(len(frames)))
    app = make_app(demo_root)
    real_display = app._display

    def display(screen: object, renderable: object) -> None:
        real_display(screen, renderable)  # type: ignore[arg-type]
        if renderable is not None and isinstance(screen, MainScreen):
            frames.append(1)

    monkeypatch.setattr(app, "_display", display)
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(pilot, lambda: bool(painted), "the first frame's step")
        assert painted[0] >= 1, "let go before the main screen drew a frame"
        await pilot.pause()
        assert len(painted) == 1, "once per screen"


@run_async
async def test_the_first_resume_keeps_the_mounted_styles_and_later_ones_restyle(
    demo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from textual import events

    restyled: list[bool] = []
    real = MainScreen.update_node_styles

    def spy(self: MainScreen, animate: bool = True) -> None:
        restyled.append(animate)
        real(self, animate)

    monkeypatch.setattr(MainScreen, "update_node_styles", spy)
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        assert restyled == [], "the first resume restyled what had just mounted"
        # Back on top later (a theme may have changed meanwhile): restyled as Textual does.
        screen.post_message(events.ScreenResume())
        await pilot.pause()
        assert restyled == [False]


@run_async
async def test_the_stylesheet_is_parsed_once_at_start_with_the_chosen_theme(
    demo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from textual.css import stylesheet

    parsed: list[tuple[str, str]] = []
    real_parse = stylesheet.parse

    def spy(scope: str, css: str, read_from: tuple[str, str], **kwargs: object) -> object:
        parsed.append(read_from)
        return real_parse(scope, css, read_from, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(stylesheet, "parse", spy)
    app = make_app(demo_root, theme="promptdeck-light")
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for_preview(pilot, "1-1")
        ours = [where for where in parsed if where[0].endswith("app.tcss")]
        assert len(ours) == 1, f"the app's stylesheet was parsed {len(ours)} times at start"
        # Styled with the light theme's variables ($surface is the story tree's background).
        tree = app.screen.query_one(StoryTree)
        assert tree.styles.background == Color.parse(app.get_css_variables()["surface"])
        light_surface = tree.styles.background
        # A theme chosen later still restyles everything (Textual's own pass).
        parsed.clear()
        app.theme = "promptdeck-dark"
        await pilot.pause()
        assert any(where[0].endswith("app.tcss") for where in parsed), "not parsed again"
        assert tree.styles.background == Color.parse(app.get_css_variables()["surface"])
        assert tree.styles.background != light_surface
