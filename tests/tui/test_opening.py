"""The app's opening read beside its start: a forked helper reads the catalog, the first
story's flow and its prompt, and the screen shows them in its first frame — the same prompt the
screen composes itself, or, when the helper fails, what the screen reads on its own."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from app_helpers import make_app, run_async, wait_for, wait_for_preview
from promptdeck.core.project import open_workspace
from promptdeck.core.prompt import compose_prompt
from promptdeck.tui.screens import main as main_screen
from promptdeck.tui.screens.main import MainScreen
from promptdeck.tui.session.opening import OpeningHelper, read_opening


def _helper(root: Path) -> OpeningHelper:
    workspace = open_workspace(root)
    config = workspace.config
    helper = OpeningHelper.start(workspace, config.tokens_encoding, None, config.delivery)
    assert helper is not None, "this platform forks"
    return helper


def test_the_helper_answers_what_reading_in_process_gives(demo_root: Path) -> None:
    workspace = open_workspace(demo_root)
    config = workspace.config
    here = read_opening(workspace, config.tokens_encoding, None, config.delivery)
    helper = _helper(demo_root)
    opening = helper.take_catalog()
    assert opening is not None and opening.prompt is None  # the catalog comes first
    prompt = helper.take_prompt(None)
    assert opening.catalog == here.catalog
    assert opening.plan == here.plan
    assert opening.reading == here.reading
    assert here.prompt is not None and prompt is not None
    assert prompt.request == here.prompt.request
    assert (prompt.system, prompt.user) == (here.prompt.system, here.prompt.user)
    assert prompt.system_meter == here.prompt.system_meter  # counted, the same counts
    assert prompt.story is opening.catalog.stories[0]
    # Composed as the screen composes it.
    again = compose_prompt(workspace, opening.catalog, prompt.request)
    assert again.system == prompt.system
    assert helper.pid is None  # stopped and reaped once its answer was taken


def _killed(helper: OpeningHelper) -> OpeningHelper:
    assert helper.pid is not None
    os.kill(helper.pid, signal.SIGKILL)
    return helper


def test_a_helper_that_dies_answers_nothing(demo_root: Path) -> None:
    helper = _killed(_helper(demo_root))
    assert helper.take_catalog() is None
    assert helper.take_prompt(0.1) is None


@run_async
async def test_the_first_frame_has_the_helpers_tree_and_counted_prompt(
    demo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # However slow the machine running the test, the screen waits for the helper.
    monkeypatch.setattr(main_screen, "OPENING_WAIT_SECONDS", 60.0)
    monkeypatch.setattr(main_screen, "PROMPT_WAIT_SECONDS", 60.0)
    app = make_app(demo_root, opening=_helper(demo_root))
    async with app.run_test(size=(160, 45)) as pilot:
        await wait_for(
            pilot,
            lambda: any(isinstance(s, MainScreen) and s.is_mounted for s in app.screen_stack),
            "the main screen",
        )
        screen = next(s for s in app.screen_stack if isinstance(s, MainScreen))
        # Mounted with them: nothing was read or composed after the screen was built.
        assert screen.catalog is not None and screen.prompt is not None
        assert screen.prompt_counted and screen.prompt.request == screen.current_request()
        assert not [w for w in app.workers if w.group in ("catalog", "compose")]
        shown = screen.prompt
        workspace = open_workspace(demo_root)
        composed = compose_prompt(workspace, screen.catalog, shown.request)
        assert composed.system == shown.system
        # The flow's change does not compose it again; a change of inclusion does.
        await pilot.pause()
        assert screen.prompt is shown
        await pilot.press("p")

        def left_out() -> bool:
            return screen.prompt is not None and not screen.prompt.request.selection.project_context

        await wait_for(pilot, left_out, "the project context left out")


@run_async
async def test_without_the_helpers_answer_the_screen_reads_the_catalog_itself(
    demo_root: Path,
) -> None:
    app = make_app(demo_root, opening=_killed(_helper(demo_root)))
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        assert screen.catalog is not None and screen.catalog.stories[0].id == "1-1"
