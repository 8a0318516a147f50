"""The epic plan screen: the key opens the selected story's epic, and its table holds the rows
``plan --epic`` computes, totals last."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import make_app, run_async, wait_for, wait_for_preview
from promptdeck.core.cost import forecast_model, money, plan_epic
from promptdeck.core.flight import epic_forecast
from promptdeck.core.project.workspace import open_workspace
from promptdeck.tui.screens import epic_plan
from promptdeck.tui.screens.epic_plan import EpicPlanScreen
from promptdeck.tui.screens.main import MainScreen
from textual.widgets import DataTable


@run_async
async def test_the_epic_plan_key_shows_the_cores_rows_and_totals(
    demo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No client says its version: the plan's model is what the settings name (none here).
    monkeypatch.setattr(epic_plan, "installed_client_version", lambda workspace, client: None)
    app = make_app(demo_root)
    async with app.run_test(size=(200, 45)) as pilot:
        await wait_for_preview(pilot, "1-1")
        await pilot.press("E")
        await wait_for(pilot, lambda: isinstance(app.screen, EpicPlanScreen), "the plan")
        screen = app.screen
        assert isinstance(screen, EpicPlanScreen)
        await wait_for(pilot, lambda: screen.view is not None, "the rows")
        workspace = open_workspace(demo_root)
        model = forecast_model(workspace, version=lambda client: None)
        expected = plan_epic(workspace, "1", model.model, model_source=model.source)
        wholes = epic_forecast(workspace.root, expected).rows
        table = screen.query_one("#plan-table", DataTable)
        assert table.row_count == len(expected.rows) + 1
        for index, row in enumerate(expected.rows):
            cells = [str(cell) for cell in table.get_row_at(index)]
            assert cells[:3] == [row.story_id, row.phase, f"{row.system_bytes:,}"]
            assert cells[5] == money(row.cost.dollars)
            assert cells[6] == wholes[index].cell()
        total = [str(cell) for cell in table.get_row_at(len(expected.rows))]
        assert total[0] == "(total)"
        assert total[2] == f"{expected.totals.system_bytes:,}"
        assert total[5] == money(expected.totals.dollars)
        note = str(screen.query_one("#plan-note").render())
        assert f"basis: {expected.basis}" in note
        assert "2 done story(ies) left out (1-1, 1-2)" in note
        await pilot.press("a")
        await wait_for(pilot, lambda: table.row_count > len(expected.rows) + 1, "done stories")
        assert "plan --epic 1 --all" in str(screen.query_one("#plan-note").render())
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen), "the main screen")
