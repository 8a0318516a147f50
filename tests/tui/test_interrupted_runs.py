"""Interrupted runs in the app: one notice at start naming ``promptdeck resume``, each one's
agent session in the run history; and the models the client reported beside the actual cost."""

from __future__ import annotations

import json
from pathlib import Path

from app_helpers import make_app, run_async, wait_for, wait_for_preview
from promptdeck.core.records.launched import note_launched
from promptdeck.core.records.reader import list_runs
from promptdeck.core.records.writer import RunRecord
from promptdeck.tui.screens.run_history import RunHistoryScreen
from promptdeck.tui.session.interrupted import interrupted_line, interrupted_sessions
from textual.widgets import DataTable

SESSION = "5f0c7e2a-1111-4222-8333-944455556666"
GONE_PID = 2**22 + 1
"""A process id no process has (pid_max is at most 2**22): the run's promptdeck is gone."""


def _run(root: Path, story: str, *, session: str | None = None, **meta: object) -> RunRecord:
    record = RunRecord.create(root, story, "dev")
    record.write_meta({"story": story, "phase": "dev", "attempt": 1, "pid": GONE_PID, **meta})
    if session is not None:
        (record.dir / "resume.json").write_text(json.dumps({"session_id": session}))
    record.close()
    note_launched(record.id)  # as the runner notes each run it launches (outside the project)
    return record


def test_an_interrupted_runs_session_and_what_continues_it_are_said(demo_root: Path) -> None:
    waiting = _run(demo_root, "1-3", session=SESSION)
    resumed = _run(demo_root, "1-4")
    _run(demo_root, "1-4", continues=resumed.id).write_result({"outcome": "success"})
    shown = interrupted_sessions(list_runs(demo_root))
    assert shown[waiting.id] == f"session {SESSION} · promptdeck resume {waiting.id}"
    assert shown[resumed.id].startswith("no session recorded · resumed by ")
    line = interrupted_line(demo_root)
    assert line is not None and f"promptdeck resume {waiting.id}" in line


def test_no_interrupted_run_is_no_line(demo_root: Path) -> None:
    assert interrupted_line(demo_root) is None


@run_async
async def test_the_app_says_once_that_runs_wait_and_the_history_shows_the_session(
    demo_root: Path,
) -> None:
    waiting = _run(demo_root, "1-3", session=SESSION)
    app = make_app(demo_root)
    async with app.run_test(size=(200, 45)) as pilot:
        await wait_for_preview(pilot, "1-1")
        await wait_for(
            pilot,
            lambda: any(n.source == "interrupted runs" for n in app.notices),
            "the interrupted runs' notice",
        )
        said = [n.text for n in app.notices if n.source == "interrupted runs"]
        assert len(said) == 1 and f"promptdeck resume {waiting.id}" in said[0]
        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, RunHistoryScreen), "history")
        history = app.screen
        assert isinstance(history, RunHistoryScreen)
        await wait_for(pilot, lambda: len(history.runs) == 1, "the runs to load")
        table = history.query_one("#history-table", DataTable)
        signal = str(table.get_cell(waiting.id, "signal"))
        assert signal == f"session {SESSION} · promptdeck resume {waiting.id}"


@run_async
async def test_the_history_shows_the_models_the_client_reported_beside_the_actual_cost(
    demo_root: Path,
) -> None:
    record = _run(demo_root, "1-3")
    record.write_result({"outcome": "success"})
    cost = {
        "model": "claude-opus-4-8",
        "predicted": {"dollars": 0.0412},
        "actual": {"dollars": 0.0388, "models": ["claude-opus-4-8", "claude-haiku-4-5"]},
        "miss_cause": [],
    }
    (record.dir / "cost.json").write_text(json.dumps(cost))
    app = make_app(demo_root)
    async with app.run_test(size=(200, 45)) as pilot:
        await wait_for_preview(pilot, "1-1")
        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, RunHistoryScreen), "history")
        history = app.screen
        assert isinstance(history, RunHistoryScreen)
        await wait_for(pilot, lambda: len(history.runs) == 1, "the runs to load")
        table = history.query_one("#history-table", DataTable)
        actual = str(table.get_cell(record.id, "actual"))
        assert actual == "$0.0388 (claude-opus-4-8, claude-haiku-4-5)"
