"""The meter's system figure is the composed prompt across the 150 KiB error line: a toggle
that takes the injection over it leaves a file unread (too large), and its size on disk is
named apart, never added to the system prompt's bytes, so the bytes and the token count beside
them are always the same prompt's; toggled back, the figures return. And the first paint of a
prompt waits for its counted pass (fast when counts are remembered) rather than showing ``…``."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from app_helpers import make_app, run_async, wait_for, wait_for_preview
from builders import write_files
from promptdeck.core.injection.model import Selection
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.units import human_bytes
from promptdeck.tui.widgets.meter_line import MeterLine, MeterReading

BODY = "The sync engine keeps a journal of edits and replays it on reconnect.\n"


def _workspace(root: Path) -> None:
    write_files(
        root,
        {
            "_bmad-output/implementation-artifacts/sprint-status.yaml": (
                "development_status:\n  1-1-sync: ready-for-dev\n"
            ),
            "_bmad-output/implementation-artifacts/1-1-sync.md": (
                "# Story 1.1: Sync\n\nStatus: ready-for-dev\n\n" + BODY * 900
            ),
            "_bmad-output/implementation-artifacts/1-1-review-notes.md": "# Notes\n\n" + BODY * 900,
            "_bmad-output/planning-artifacts/sprint-project-context.md": (
                "# Project context\n\n" + BODY * 420
            ),
            ".promptdeck/rules.md": "Be careful.\n",
        },
    )


@run_async
async def test_crossing_the_error_line_both_ways_never_shows_a_stale_token_figure(
    tmp_path: Path,
) -> None:
    root = tmp_path / "ws"
    _workspace(root)
    workspace = open_workspace(root)
    catalog = load_catalog(workspace)

    app = make_app(root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        # The app's own request (its phase and mode), composed apart, both sides of the line.
        request = screen.current_request()
        assert request is not None and request.selection.project_context
        over = compose_prompt(workspace, catalog, request)
        under_request = replace(request, selection=Selection(project_context=False))
        under = compose_prompt(workspace, catalog, under_request)
        assert over.injection.level == "error" and under.injection.level != "error"
        unread = [f for f in over.injection.files if f.status == "too-large"]
        assert unread
        assert all(f.status != "too-large" for f in under.injection.files)
        meter = screen.query_one(MeterLine)
        seen: list[MeterReading] = []
        screen.watch(meter, "reading", lambda reading: seen.append(reading), init=True)

        def settled(context: bool) -> bool:
            prompt = screen.prompt
            return (
                prompt is not None
                and screen.prompt_counted
                and prompt.request.selection.project_context is context
                and prompt.request == screen.current_request()
            )

        for context in (False, True, False, True):
            await pilot.press("p")
            await wait_for(pilot, lambda context=context: settled(context), f"context={context}")
            await pilot.pause()
            reading = meter.reading
            assert reading is not None
            shown = over if context else under
            # The composed prompt's bytes and tokens, the same ones ``inspect`` gives.
            assert (reading.system_bytes, reading.system_tokens) == (
                shown.system_meter.bytes,
                shown.system_meter.tokens,
            )
            system_line = str(meter.render()).splitlines()[1]
            if context:  # over the line: the unread file's size on disk, named apart
                assert reading.unread_bytes == sum(f.bytes for f in unread)
                disk = human_bytes(reading.unread_bytes)
                # The full words, or the compact ones where the bar needs the room.
                assert f"{disk} on disk, not read" in system_line or f"{disk} unread" in system_line
                assert f" {human_bytes(over.system_meter.bytes)} " in system_line.split("tok")[0]
            else:
                assert reading.unread_bytes == 0 and "not read" not in system_line

        # Every figure that was on screen at any moment belonged to the bytes beside it.
        shown_readings = [r for r in seen if r is not None and r.system_tokens is not None]
        assert shown_readings
        pairs = {(p.system_meter.bytes, p.system_meter.tokens) for p in (over, under)}
        for reading in shown_readings:
            assert (reading.system_bytes, reading.system_tokens) in pairs


@run_async
async def test_the_first_paint_holds_the_byte_pass_back_for_the_counted_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from promptdeck.tui.session import preview_composer
    from promptdeck.tui.widgets.preview_pane import PreviewPane

    root = tmp_path / "ws"
    _workspace(root)
    painted: list[bool] = []
    original = PreviewPane.watch_prompt

    def recording(pane: PreviewPane, prompt: object) -> None:
        if prompt is not None:
            painted.append(pane.counted)
        original(pane, prompt)  # type: ignore[arg-type]

    monkeypatch.setattr(PreviewPane, "watch_prompt", recording)
    # The byte-only pass waits for the counted one as long as it takes: what is checked is that
    # it is held back, not how fast a loaded test machine counts.
    monkeypatch.setattr(preview_composer, "COUNTED_GRACE_SECONDS", 60.0)
    async with make_app(root).run_test(size=(160, 45)) as pilot:
        await wait_for_preview(pilot, "1-1")
    assert painted and painted[0] is True
