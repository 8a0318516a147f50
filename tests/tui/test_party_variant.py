"""The app: choosing the standard or party variant of a phase (``v``) before running it, and
the token budget shown in the preview and enforced by the run confirmation."""

from __future__ import annotations

from pathlib import Path

from app_helpers import Toasts, make_app, run_async, wait_for, wait_for_preview
from promptdeck.core.records.reader import list_runs
from promptdeck.tui.screens.confirm_run import ConfirmRunScreen
from promptdeck.tui.screens.main import MainScreen
from textual.widgets import Static


async def _select_phase(pilot, screen: MainScreen, phase: str) -> MainScreen:  # type: ignore[no-untyped-def]
    while screen.phase != phase:
        await pilot.press("right_square_bracket")
    return await wait_for_preview(pilot, screen.story.id if screen.story else None)


def _text(screen: MainScreen, selector: str) -> str:
    return str(screen.query_one(selector, Static).render())


@run_async
async def test_v_switches_the_selected_phase_between_standard_and_party(demo_root: Path) -> None:
    app = make_app(demo_root)
    toasts = Toasts(app)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await _select_phase(pilot, await wait_for_preview(pilot, "1-1"), "review")
        assert screen.prompt is not None and screen.prompt.variant == "standard"
        await pilot.press("v")
        screen = await wait_for_preview(pilot, "1-1")
        prompt = screen.prompt
        assert prompt is not None and prompt.variant == "party"
        assert prompt.layers[4].source == "template:layer-3-entry-party-review.md"
        assert _text(screen, "#preview-title").endswith("· party")
        assert "[v] party" in _text(screen, "#preview-notes")
        # The choice is per phase: the kickoff stays standard until chosen.
        screen = await _select_phase(pilot, screen, "kickoff")
        assert screen.prompt is not None and screen.prompt.variant == "standard"
        screen = await _select_phase(pilot, screen, "review")
        assert screen.prompt is not None and screen.prompt.variant == "party"
        await pilot.press("v")
        screen = await wait_for_preview(pilot, "1-1")
        assert screen.prompt is not None and screen.prompt.variant == "standard"
        screen = await _select_phase(pilot, screen, "dev")
        await pilot.press("v")
        await wait_for(
            pilot,
            lambda: bool(toasts.containing("no party variant")),
            "the notice that dev has no party variant",
        )
        assert screen.variant_of("dev") == "standard"


@run_async
async def test_party_kickoff_runs_from_the_app_and_appends_its_insights(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await _select_phase(pilot, await wait_for_preview(pilot, "1-1"), "kickoff")
        await pilot.press("v")
        screen = await wait_for_preview(pilot, "1-1")
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmRunScreen), "the confirmation")
        confirm = app.screen
        assert isinstance(confirm, ConfirmRunScreen) and confirm.plan.variant == "party"
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.last_result is not None, "the end of the run")
        assert screen.last_result is not None and screen.last_result.outcome == "success"
    story = demo_root / "_bmad-output/implementation-artifacts/1-1-parse-csv-statement-rows.md"
    text = story.read_text(encoding="utf-8")
    assert (
        "**Participants**: Winston (Architect), Amelia (Developer), Murat (Test Architect)" in text
    )
    system = (list_runs(demo_root)[-1].dir / "system.md").read_text(encoding="utf-8")
    assert "## Role: Party kickoff" in system


@run_async
async def test_a_prompt_over_its_budget_is_shown_and_refused(demo_root: Path) -> None:
    config = demo_root / ".promptdeck" / "config.toml"
    config.write_text(config.read_text(encoding="utf-8") + "\n[budget]\ndev = 500\n")
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await _select_phase(pilot, await wait_for_preview(pilot, "1-1"), "dev")
        assert "/500 tok OVER" in _text(screen, "#preview-notes")
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmRunScreen), "the confirmation")
        confirm = app.screen
        assert isinstance(confirm, ConfirmRunScreen)
        assert confirm.plan.blocked and "over its budget of 500" in confirm.plan.over_budget
        assert not confirm.query("#start")
        confirm.action_start()
        await pilot.pause()
        assert isinstance(app.screen, ConfirmRunScreen)
        await pilot.press("escape")
    assert list_runs(demo_root) == []
