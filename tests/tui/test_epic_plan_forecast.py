"""The plan screen's controller: the epic priced as the client will run it, with each phase's
whole-phase forecast and what the figures rest on."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from promptdeck.core.project import Workspace, open_workspace
from promptdeck.tui.session.client_models import ClientModels
from promptdeck.tui.session.epic_forecast import epic_notes, forecast_epic


def _installed(workspace: object, client: str) -> str:
    return "2.1.197"


def test_the_epic_is_priced_as_the_model_the_client_will_request(demo_root: Path) -> None:
    view = forecast_epic(open_workspace(demo_root), "1", "", ClientModels(_installed))
    plan = view.plan
    assert plan.model == "claude-opus-4-8"
    assert "2.1.197" in plan.model_source
    assert len(view.forecast.rows) == len(plan.rows)
    notes = epic_notes(view)
    assert notes[0] == f"model claude-opus-4-8: from {plan.model_source}"
    assert notes[1] == f"basis: {plan.basis}"
    assert notes[2] == view.forecast.describe()
    # The demo has no recorded real run: no whole-phase range for the total.
    assert view.total_range == ""


def test_done_stories_are_left_out_and_counted_until_asked_for(demo_root: Path) -> None:
    workspace = open_workspace(demo_root)
    view = forecast_epic(workspace, "1", "", ClientModels(None))
    assert view.plan.done_left_out == ("1-1", "1-2")
    assert "2 done story(ies) left out (1-1, 1-2); a includes them" in epic_notes(view)
    every = forecast_epic(workspace, "1", "", ClientModels(None), all_stories=True)
    assert every.plan.done_left_out == ()
    assert {"1-1", "1-2"} <= {row.story_id for row in every.plan.rows}
    assert not any("done story" in line for line in epic_notes(every))


def test_a_model_without_a_price_and_rows_too_large_are_said(demo_root: Path) -> None:
    opened = open_workspace(demo_root)
    config = replace(opened.config, injection_warn_bytes=50_000, injection_error_bytes=100_000)
    view = forecast_epic(Workspace(opened.root, config), "1", "", ClientModels(None))
    notes = epic_notes(view)
    large = [row for row in view.plan.rows if row.too_large]
    assert large and view.plan.totals.left_out == len(large)
    assert (
        f"too-large: {len(large)} row(s) over the injection's error line cannot be sent: "
        "outside the total"
    ) in notes
    assert any(line.endswith(": no dollar figure") and "model unknown" in line for line in notes)
