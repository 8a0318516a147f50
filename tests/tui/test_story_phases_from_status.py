"""The app's phase choice for the demo's stories with no run: the tracked status decides the
next phase (``in-progress`` → dev, ``review`` → review), the status line and the preview's
title say why, and kickoff is still a phase the user can pick, never the default."""

from __future__ import annotations

from pathlib import Path

from app_helpers import make_app, run_async, wait_for, wait_for_preview
from promptdeck.core.injection.model import Selection
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.prompt.request import PromptRequest
from promptdeck.tui.session.story_phases import PhaseChoice, read_flow

STATUS = "_bmad-output/implementation-artifacts/sprint-status.yaml"


def test_an_in_progress_story_is_offered_dev_and_kickoff_stays_one_key_away(
    demo_root: Path,
) -> None:
    workspace = open_workspace(demo_root)
    catalog = load_catalog(workspace)
    choice = PhaseChoice(workspace.config)
    choice.reading = read_flow(workspace, catalog, catalog.find("1-3"))
    suggestion = choice.suggestion
    assert suggestion is not None and (suggestion.phase, suggestion.mode) == ("dev", "create")
    assert choice.note() == f"next: dev — status 'in-progress' ({STATUS}:35): the work is under way"
    assert choice.why_shown("dev", "create") == "next: status 'in-progress', sprint-status.yaml:35"
    rows = {row.name: row.state for row in choice.rows()}
    assert (rows["kickoff"], rows["dev"]) == ("skipped", "suggested")
    # Kickoff chosen by hand: a plain kickoff request, shown as chosen.
    selection = Selection()
    assert choice.request("1-3", "kickoff", "create", selection) == PromptRequest(
        "1-3", phase="kickoff", selection=selection, variant="standard"
    )
    assert choice.why_shown("kickoff", "create") == "chosen"


def test_a_review_story_opens_on_review(demo_root: Path) -> None:
    workspace = open_workspace(demo_root)
    catalog = load_catalog(workspace)
    reading = read_flow(workspace, catalog, catalog.find("2-1"))
    assert (reading.opening.phase, reading.opening.why) == (
        "review",
        "next: status 'review', sprint-status.yaml:40",
    )
    assert reading.flow.suggestion is not None
    assert reading.flow.suggestion.why == f"status 'review' ({STATUS}:40): the work is implemented"


@run_async
async def test_the_title_and_n_say_why_an_in_progress_story_goes_to_dev(demo_root: Path) -> None:
    from promptdeck.tui.screens.confirm_run import ConfirmRunScreen

    app = make_app(demo_root, stable=True)
    async with app.run_test(size=(200, 50)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        assert screen.catalog is not None
        screen.select_story(screen.catalog.find("1-3"))
        await wait_for(pilot, lambda: screen.phases.choice.reading is not None, "the flow")
        screen = await wait_for_preview(pilot, "1-3")
        assert screen.phase == "dev"
        title = str(screen.query_one("#preview-title").render())
        assert "dev (next: status 'in-progress', sprint-status.yaml:35) · 1-3" in title
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmRunScreen), "the confirmation")
        await app.workers.wait_for_complete()
        why = str(app.screen.query_one("#confirm-why").render())
        assert why == f"next: dev — status 'in-progress' ({STATUS}:35): the work is under way"
        await pilot.press("escape")
