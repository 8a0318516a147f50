"""Running phases from the app: confirmation, streaming, signals, the flow moving on,
cancelling, refusing an oversized story, quitting mid-run, and the run history."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_helpers import (
    Toasts,
    main_screen,
    make_app,
    run_async,
    set_agent_settings,
    wait_for,
    wait_for_preview,
    workers_settled,
)
from promptdeck.core.cost.prediction import money
from promptdeck.core.cost.record import read_cost
from promptdeck.core.records.reader import list_runs
from promptdeck.tui.screens.confirm_run import ConfirmRunScreen
from promptdeck.tui.screens.main import MainScreen
from promptdeck.tui.screens.quit_confirm import QuitConfirmScreen
from promptdeck.tui.screens.run_detail import RunDetailScreen
from promptdeck.tui.screens.run_history import RunHistoryScreen
from promptdeck.tui.widgets.key_footer import KeyFooter
from promptdeck.tui.widgets.phase_panel import PhaseList, PhaseLog
from promptdeck.tui.widgets.signal_highlighter import SignalHighlighter
from textual.widgets import DataTable, Static


async def _select_phase(pilot, screen: MainScreen, phase: str) -> MainScreen:  # type: ignore[no-untyped-def]
    while screen.phase != phase:
        await pilot.press("right_square_bracket")
    return await wait_for_preview(pilot, screen.story.id if screen.story else None)


async def _run_dev(pilot, app, story: str, what: str) -> MainScreen:  # type: ignore[no-untyped-def]
    """Preview ``story``'s dev phase, confirm, start and wait for the run to end."""
    screen = await wait_for_preview(pilot, story)
    screen = await _select_phase(pilot, screen, "dev")
    await _confirm_and_start(pilot, app)
    await wait_for(pilot, lambda: screen.last_result is not None, what)
    return screen


async def _confirm_and_start(pilot, app) -> ConfirmRunScreen:  # type: ignore[no-untyped-def]
    await pilot.press("r")
    await wait_for(pilot, lambda: isinstance(app.screen, ConfirmRunScreen), "the confirmation")
    confirm = app.screen
    assert isinstance(confirm, ConfirmRunScreen)
    await pilot.press("enter")
    return confirm


@run_async
async def test_dev_run_streams_highlights_the_signal_and_suggests_review(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        screen = await _select_phase(pilot, screen, "dev")
        previewed = screen.prompt
        assert previewed is not None
        confirm = await _confirm_and_start(pilot, app)
        plan = confirm.plan
        assert (plan.story_id, plan.phase, plan.agent) == ("1-1", "dev", "replay (simulation)")
        assert plan.argv and not plan.blocked
        assert plan.system_bytes == previewed.system_meter.bytes

        await wait_for(pilot, lambda: screen.last_result is not None, "the end of the run")
        result = screen.last_result
        assert result is not None and result.outcome == "success"
        await pilot.pause()
        log = screen.query_one(PhaseLog)
        lines = list(log.lines)
        signal_line = "IMPLEMENTATION COMPLETE: 1-1"
        assert signal_line in lines
        assert len(lines) > 5
        highlighter = log.highlighter
        assert isinstance(highlighter, SignalHighlighter)
        assert highlighter.style_for(signal_line) == highlighter.success_style
        assert highlighter.style_for(lines[0]) is None
        # The rendered log line carries the highlight style.
        index = lines.index(signal_line)
        log.scroll_to(y=max(index - 2, 0), animate=False)
        await pilot.pause()
        strip = log.render_line(index - int(log.scroll_offset.y))
        styles = [segment.style for segment in strip if signal_line[:10] in segment.text]
        assert styles and all(style is not None and style.reverse for style in styles)

        await wait_for(
            pilot,
            lambda: (
                screen.phases.flow is not None
                and screen.phases.flow.suggestion is not None
                and screen.phases.flow.suggestion.phase == "review"
            ),
            "the flow to suggest review",
        )
        await wait_for(pilot, lambda: screen.phase == "review", "the review phase selected")
        rows = {row.name: row.state for row in screen.query_one(PhaseList).rows}
        assert rows["dev"] == "done" and rows["review"] == "suggested"
        status = str(screen.query_one("#run-status", Static).render())
        assert "success" in status and signal_line in status


def _offers_cancel(screen: MainScreen) -> bool:
    """Whether the footer shows ``c Cancel`` now."""
    footer = screen.query_one(KeyFooter)
    return any(b.action == "cancel_run" for item in footer.shown for b in item.bindings)


@run_async
async def test_cancel_stops_a_running_phase(demo_root: Path) -> None:
    set_agent_settings(demo_root, replay_script="dev=hang")
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        screen = await _select_phase(pilot, screen, "dev")
        assert not _offers_cancel(screen)  # nothing to cancel: the key is not offered
        await _confirm_and_start(pilot, app)
        await wait_for(pilot, lambda: screen.runs.handle is not None, "the run to start")
        await wait_for(pilot, lambda: len(screen.query_one(PhaseLog).lines) > 2, "output")
        rows = {row.name: row.state for row in screen.query_one(PhaseList).rows}
        assert rows["dev"] == "running"
        await wait_for(pilot, lambda: _offers_cancel(screen), "c Cancel in the footer")
        await pilot.press("c")
        await wait_for(pilot, lambda: screen.last_result is not None, "the cancelled run to end")
        assert screen.last_result is not None and screen.last_result.outcome == "cancelled"
        assert screen.runs.handle is None and screen.runs.running is None
        await wait_for(pilot, lambda: not _offers_cancel(screen), "c Cancel gone again")
        runs = list_runs(demo_root)
        assert [run.outcome for run in runs] == ["cancelled"]


@run_async
async def test_oversized_story_refuses_to_run_and_says_why(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        story = screen.catalog.find("2-2")  # type: ignore[union-attr]
        screen.select_story(story)
        screen = await wait_for_preview(pilot, "2-2")
        assert screen.prompt is not None and screen.prompt.injection.level == "error"
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmRunScreen), "the confirmation")
        confirm = app.screen
        assert isinstance(confirm, ConfirmRunScreen) and confirm.plan.blocked
        refusal = str(confirm.query_one("#confirm-refusal", Static).render())
        assert "Cannot run" in refusal and "over the" in refusal and "error line" in refusal
        assert "What would bring it under" in refusal or "too large" in refusal
        assert not confirm.query("#start")
        confirm.action_start()
        await pilot.pause()
        assert app.screen is confirm
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen), "back to main")
        assert screen.runs.running is None
        assert list_runs(demo_root) == []


@pytest.mark.parametrize("quit_key", ["q", "ctrl+q"])
@run_async
async def test_quitting_while_running_asks_and_cancels(demo_root: Path, quit_key: str) -> None:
    """``q`` and Textual's own ``ctrl+q`` both ask first and cancel: no agent is left behind."""
    set_agent_settings(demo_root, replay_script="dev=hang")
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        screen = await _select_phase(pilot, screen, "dev")
        await _confirm_and_start(pilot, app)
        await wait_for(pilot, lambda: screen.runs.handle is not None, "the run to start")
        await pilot.press(quit_key)
        await wait_for(pilot, lambda: isinstance(app.screen, QuitConfirmScreen), "the question")
        await pilot.press("n")
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen), "staying")
        assert screen.runs.handle is not None
        await pilot.press(quit_key)
        await wait_for(pilot, lambda: isinstance(app.screen, QuitConfirmScreen), "the question")
        await pilot.press("y")
        await wait_for(pilot, lambda: app.return_code is not None, "the app to exit")
    runs = list_runs(demo_root)
    assert [run.outcome for run in runs] == ["cancelled"]


@run_async
async def test_history_lists_runs_and_detail_shows_what_was_sent(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        screen = await _select_phase(pilot, screen, "dev")
        sent = screen.prompt
        assert sent is not None
        await _confirm_and_start(pilot, app)
        await wait_for(pilot, lambda: screen.last_result is not None, "the end of the run")
        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, RunHistoryScreen), "history")
        history = app.screen
        assert isinstance(history, RunHistoryScreen)
        await wait_for(pilot, lambda: len(history.runs) == 1, "the runs to load")
        row = history.runs[0].to_dict()
        assert (row["story"], row["phase"], row["attempt"], row["agent"], row["outcome"]) == (
            "1-1",
            "dev",
            1,
            "replay",
            "success",
        )
        # Predicted before the run and reported after, side by side, the miss named; the
        # replay is a simulation, so neither side is a dollar figure.
        record = read_cost(history.runs[0].dir, demo_root)
        assert record is not None and record.reported
        assert record.predicted is None and record.actual is None
        table = history.query_one("#history-table", DataTable)
        cells = [str(cell) for cell in table.get_row(history.runs[0].id)]
        assert cells[-3:] == [money(record.predicted), money(record.actual), "no_previous_run"]
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, RunDetailScreen), "the run detail")
        detail = app.screen
        texts = [viewer.text for viewer in detail.query("TextViewer")]  # type: ignore[attr-defined]
        result_text, raw, system, user, signal_lines = texts
        # The result reads as a summary first: the phase's outcome, then the process's end.
        assert result_text.startswith("phase outcome   success — IMPLEMENTATION COMPLETE")
        assert "process exit    0" in result_text
        assert system == sent.system and user == sent.user
        assert "IMPLEMENTATION COMPLETE: 1-1" in raw and raw.lstrip().startswith("{")
        signals = [json.loads(line) for line in signal_lines.splitlines()]
        assert signals[-1]["line"] == "IMPLEMENTATION COMPLETE: 1-1"
        # The stream reads like the live panel: parsed lines, not JSON, the signal marked.
        log = detail.query_one("#detail-log", PhaseLog)
        assert "IMPLEMENTATION COMPLETE: 1-1" in log.lines
        assert not any(line.lstrip().startswith('{"type"') for line in log.lines)
        highlighter = log.highlighter
        assert isinstance(highlighter, SignalHighlighter)
        await pilot.press("escape")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is main_screen(pilot), "back to main")


@run_async
async def test_the_argv_confirmed_is_the_argv_run_with_its_own_folder_and_attempt(
    demo_root: Path,
) -> None:
    set_agent_settings(demo_root, replay_script="dev=blocked")
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await _run_dev(pilot, app, "1-1", "the blocked run to end")
        assert screen.last_result is not None and screen.last_result.outcome == "failure"
        await workers_settled(app)
        # The phase's outcome and the process's own end are told apart.
        status = str(screen.query_one("#run-status", Static).render())
        assert "phase dev #1: failure" in status and "process exit 0" in status
        log_text = "\n".join(screen.query_one(PhaseLog).lines)
        assert "result: success" not in log_text

        # Back from a confirmation leaves no run folder behind.
        runs_folder = demo_root / ".promptdeck" / "runs"
        folders_before = sorted(p.name for p in runs_folder.iterdir() if p.is_dir())
        screen = await _select_phase(pilot, screen, "dev")
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmRunScreen), "the confirmation")
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen), "back to main")
        assert sorted(p.name for p in runs_folder.iterdir() if p.is_dir()) == folders_before

        screen = await _select_phase(pilot, screen, "dev")
        screen.runs.last_result = None
        confirm = await _confirm_and_start(pilot, app)
        plan = confirm.plan
        assert plan.attempt == 2
        assert "dry-run" not in " ".join(plan.argv)
        assert plan.run_folder and plan.run_folder in " ".join(plan.argv)
        await wait_for(pilot, lambda: screen.last_result is not None, "the second run to end")
        run = list_runs(demo_root)[-1]
        meta = json.loads((run.dir / "meta.json").read_text(encoding="utf-8"))
        assert tuple(meta["argv"]) == plan.argv
        assert meta["attempt"] == 2
        assert demo_root / plan.run_folder == run.dir


@run_async
async def test_the_quit_question_updates_when_the_run_ends_meanwhile(demo_root: Path) -> None:
    set_agent_settings(demo_root, replay_script="dev=hang")
    app = make_app(demo_root)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        screen = await _select_phase(pilot, screen, "dev")
        await _confirm_and_start(pilot, app)
        await wait_for(pilot, lambda: screen.runs.handle is not None, "the run to start")
        handle = screen.runs.handle
        await pilot.press("q")
        await wait_for(pilot, lambda: isinstance(app.screen, QuitConfirmScreen), "the question")
        question = app.screen
        assert "is running" in str(question.query_one("#quit-state", Static).render())
        # The run ends while the question is open (here: stopped from outside the dialog).
        assert handle is not None
        handle.cancel()
        await wait_for(pilot, lambda: screen.last_result is not None, "the run to end")
        await pilot.pause()
        state = str(question.query_one("#quit-state", Static).render())
        assert "finished: cancelled" in state and "is running" not in state
        await pilot.press("y")
        await wait_for(pilot, lambda: app.return_code is not None, "the app to exit")


@run_async
async def test_capital_d_shows_what_changed_since_the_last_run_of_the_phase(
    demo_root: Path,
) -> None:
    from promptdeck.tui.screens.text_view import TextViewScreen

    app = make_app(demo_root)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        screen = await _select_phase(pilot, screen, "dev")
        await pilot.press("D")
        await pilot.pause()
        assert not isinstance(app.screen, TextViewScreen)  # no run of dev yet: it says so
        await _confirm_and_start(pilot, app)
        await wait_for(pilot, lambda: screen.last_result is not None, "the run to end")
        await workers_settled(app)
        screen = await _select_phase(pilot, screen, "dev")
        await pilot.press("D")
        await wait_for(pilot, lambda: isinstance(app.screen, TextViewScreen), "the diff")
        await pilot.pause()
        title = str(app.screen.query_one("#text-view-title", Static).render())
        assert title.startswith("Diff · 1-1 · dev")
        body = app.screen.query_one("#text-view-body").text  # type: ignore[attr-defined]
        assert "1-1-parse-csv-statement-rows.md" in body and "\n+" in body


@run_async
async def test_history_shows_the_start_time_and_fits_80_columns(demo_root: Path) -> None:
    from textual.widgets import DataTable

    set_agent_settings(demo_root, replay_script="dev=blocked")
    app = make_app(demo_root)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        screen = await _select_phase(pilot, screen, "dev")
        await _confirm_and_start(pilot, app)
        await wait_for(pilot, lambda: screen.last_result is not None, "the run to end")
        await workers_settled(app)
        await pilot.press("h")
        await wait_for(pilot, lambda: isinstance(app.screen, RunHistoryScreen), "history")
        history = app.screen
        assert isinstance(history, RunHistoryScreen)
        await wait_for(pilot, lambda: len(history.runs) == 1, "the runs")
        await pilot.pause()
        assert history.columns[0] == "started"
        table = history.query_one(DataTable)
        assert table.virtual_size.width <= 80
        started = str(table.get_row_at(0)[0])
        assert len(started) == len("11-22 10:31") and started[2] == "-"


@run_async
async def test_a_status_write_back_that_cannot_be_done_is_a_toast_not_a_success(
    demo_root: Path,
) -> None:
    sprint = demo_root / "_bmad-output" / "implementation-artifacts" / "sprint-status.yaml"
    outside = demo_root.parent / "users-sprint-status.yaml"
    outside.write_bytes(sprint.read_bytes())
    sprint.unlink()
    sprint.symlink_to(outside)
    before = outside.read_bytes()
    # Discovery refuses the linked file too, so the story is known by its own file's key.
    app = make_app(demo_root)
    shown = Toasts(app)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await _run_dev(pilot, app, "1-1", "the end of the run")
        result = screen.last_result
        assert result is not None and result.outcome == "status-failed"
        failed = [
            (message, severity)
            for message, severity in zip(shown.messages, shown.severities, strict=True)
            if "status write-back failed" in message
        ]
        assert len(failed) == 1 and "sprint-status.yaml" in failed[0][0]
        assert failed[0][1] == "error"
    assert outside.read_bytes() == before
