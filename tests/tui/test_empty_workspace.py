"""An empty repository: the app says what promptdeck looks for and how to start, instead of
composing forever, and the header does not claim rules that are not there."""

from __future__ import annotations

import subprocess
from pathlib import Path

from app_helpers import make_app, run_async, wait_for
from promptdeck.tui.widgets.meter_line import MeterLine
from promptdeck.tui.widgets.workspace_header import WorkspaceHeader
from textual.widgets import Static


@run_async
async def test_an_empty_repository_says_where_stories_come_from(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    app = make_app(root)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for(pilot, lambda: app.screen.query("#preview-notes"), "the main screen")
        screen = app.screen
        await wait_for(pilot, lambda: screen.catalog is not None, "the catalog")
        await pilot.pause()
        notes = str(screen.query_one("#preview-notes", Static).render())
        assert "sprint-status.yaml" in notes and "openspec/changes" in notes
        assert "--root" in notes and "promptdeck demo" in notes
        assert "composing" not in str(screen.query_one(MeterLine).render())
        header = screen.query_one(WorkspaceHeader).info
        assert header is not None and header.rules_status == "missing"
        assert "rules ok" not in str(screen.query_one(WorkspaceHeader).render())
