"""``C`` opens the capture view: the client runs once against the loopback in a worker, a
progress line shows meanwhile, then the request part by part (the parts sum to it) — or one
line when there is no capture (the client is missing, it hangs). Escape closes."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import make_app, run_async, wait_for, wait_for_preview
from capture_client import (
    CLIENT_SYSTEM,
    HANGING_CLIENT,
    POSTING_CLIENT,
    client_program,
    close_capture,
    press_capture,
)
from promptdeck.core.capture import capture_summary, remembered_capture
from promptdeck.tui.screens.capture_view import CaptureScreen
from promptdeck.tui.widgets.capture_parts import CaptureParts
from promptdeck.tui.widgets.composition_chart import CompositionChart
from textual.widgets import Static


@pytest.fixture
def posting_client(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    program = client_program(tmp_path / "bin", POSTING_CLIENT)
    monkeypatch.setenv("PROMPTDECK_CLAUDE_BIN", str(program))
    return program


@run_async
async def test_c_captures_the_request_part_by_part(demo_root: Path, posting_client: Path) -> None:
    app = make_app(demo_root, stable=True, agent="claude")
    async with app.run_test(size=(120, 40)) as pilot:
        main = await wait_for_preview(pilot, "1-1")
        screen = await press_capture(pilot)
        assert not screen.failure, screen.failure
        capture = screen.capture
        assert capture is not None and main.prompt is not None
        parts = {part.name: part for part in capture.parts}
        # What the client sent is the preview's prompt, found by the real splitting code.
        ours = [part for part in capture.parts if part.kind == "promptdeck"]
        assert sum(part.bytes for part in ours) == len(main.prompt.system.encode("utf-8"))
        assert parts["Layer-0B Workspace rules"].text in main.prompt.system
        assert parts["client system"].text == CLIENT_SYSTEM
        assert parts["user turn"].text == main.prompt.user
        assert sum(part.bytes for part in capture.parts) == capture.request.size
        table = screen.query_one(CaptureParts).table
        assert table is not None and table.window == capture.window
        assert [row.name for row in table.rows] == [part.name for part in capture.parts]
        shown = str(screen.query_one(CaptureParts).render())
        assert "Layer-0B Workspace rules" in shown and "sum" in shown
        status = str(screen.query_one("#capture-status", Static).render())
        assert f"{capture.request.size:,} bytes" in status and "2.1.197" in status
        # Kept for the context-window view, as the CLI keeps it.
        kept = remembered_capture("claude")
        assert kept is not None and kept.request.size == capture.request.size
        await close_capture(pilot, main)


@run_async
async def test_rules_the_client_loads_and_layer_0b_repeats_are_flagged(
    demo_root: Path, posting_client: Path
) -> None:
    rules = (demo_root / ".promptdeck" / "rules.md").read_text(encoding="utf-8")
    (demo_root / "CLAUDE.md").write_text(rules, encoding="utf-8")
    app = make_app(demo_root, stable=True, agent="claude")
    async with app.run_test(size=(160, 40)) as pilot:
        await wait_for_preview(pilot, "1-1")
        screen = await press_capture(pilot)
        capture = screen.capture
        assert capture is not None, screen.failure
        assert any(part.name == "CLAUDE.md" and part.kind == "rules" for part in capture.parts)
        assert capture.duplicates
        table = screen.query_one(CaptureParts).table
        assert table is not None
        flagged = [row for row in table.rows if any(f.startswith("repeats ") for f in row.flags)]
        assert flagged
        duplicate = capture.duplicates[0]
        assert {row.name for row in flagged} >= {duplicate.second}
        assert f"repeats {duplicate.first}" in str(screen.query_one(CaptureParts).render())


@run_async
async def test_a_missing_client_is_one_line(
    demo_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROMPTDECK_CLAUDE_BIN", str(tmp_path / "no-such-claude"))
    app = make_app(demo_root, stable=True, agent="claude")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_preview(pilot, "1-1")
        screen = await press_capture(pilot)
        assert screen.capture is None
        status = screen.query_one("#capture-status", Static)
        line = str(status.render())
        assert "claude CLI was not found" in line
        assert len(line.strip().splitlines()) == 1
        assert status.has_class("-failed")
        assert screen.query_one(CaptureParts).table is None


@run_async
async def test_a_hanging_client_stops_at_its_bound(
    demo_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    program = client_program(tmp_path / "bin", HANGING_CLIENT)
    monkeypatch.setenv("PROMPTDECK_CLAUDE_BIN", str(program))
    app = make_app(demo_root, stable=True, agent="claude")
    async with app.run_test(size=(100, 30)) as pilot:
        main = await wait_for_preview(pilot, "1-1")
        assert main.prompt is not None
        screen = CaptureScreen(main.context, main.prompt, "claude", timeout=1.0)
        await pilot.app.push_screen(screen)
        status = screen.query_one("#capture-status", Static)
        # While the client runs, the progress line says so.
        assert "running claude once against 127.0.0.1" in str(status.render())
        await wait_for(pilot, lambda: screen.finished, "the bound")
        line = str(status.render())
        assert "did not finish within 1 s" in line and "capture stopped" in line
        await close_capture(pilot, main)


@run_async
async def test_the_replay_session_captures_with_the_first_known_client(
    demo_root: Path, posting_client: Path
) -> None:
    app = make_app(demo_root, stable=True, agent="replay")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_preview(pilot, "1-1")
        screen = await press_capture(pilot)
        assert screen.client == "claude" and screen.capture is not None


@run_async
async def test_a_kept_capture_is_the_client_overhead_in_the_context_view(
    demo_root: Path, posting_client: Path
) -> None:
    app = make_app(demo_root, stable=True, agent="claude")
    async with app.run_test(size=(120, 40)) as pilot:
        main = await wait_for_preview(pilot, "1-1")
        await pilot.press("b")
        chart = main.query_one(CompositionChart)
        await wait_for(pilot, lambda: chart.context is not None, "the context window")
        assert chart.context is not None and not chart.context.overhead_measured
        screen = await press_capture(pilot)
        assert screen.capture is not None
        summary = capture_summary(screen.capture)
        await close_capture(pilot, main)
        await wait_for(
            pilot, lambda: chart.context is not None and chart.context.overhead_measured, "it"
        )
        assert chart.context is not None
        assert chart.context.overhead == summary.overhead_tokens
        lines = chart.lines(100)
        assert f"client overhead {summary.overhead_tokens:,} (measured)" in lines[2]
        assert lines[3].strip().startswith("▒ measured, claude 2.1.197: client ")
        # The capture's own window, and what the client keeps back of it; the fit takes it.
        assert chart.context.window == screen.capture.window
        assert any(line.strip().startswith("▓ kept back ") for line in lines)
        assert main.preview.captured_window == screen.capture.window
    # The next session finds it kept: measured from the start, no client run.
    again = make_app(demo_root, stable=True, agent="claude")
    async with again.run_test(size=(120, 40)) as pilot:
        main = await wait_for_preview(pilot, "1-1")
        await pilot.press("b")
        chart = main.query_one(CompositionChart)
        await wait_for(
            pilot, lambda: chart.context is not None and chart.context.overhead_measured, "it"
        )
        assert chart.context is not None
        assert chart.context.overhead == summary.overhead_tokens
    # A session running another agent keeps its own estimate.
    replay = make_app(demo_root, stable=True, agent="replay")
    async with replay.run_test(size=(120, 40)) as pilot:
        main = await wait_for_preview(pilot, "1-1")
        await pilot.press("b")
        chart = main.query_one(CompositionChart)
        await wait_for(pilot, lambda: chart.context is not None, "the context window")
        await pilot.app.workers.wait_for_complete()
        assert chart.context is not None and not chart.context.overhead_measured
