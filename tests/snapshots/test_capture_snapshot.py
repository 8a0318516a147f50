"""The capture view, on a deterministic capture: a stand-in client posts a fixed request to the
loopback, and the real capture code records and splits it (regenerate deliberately)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from app_helpers import make_app, wait_for_preview
from capture_client import POSTING_CLIENT, client_program, press_capture
from promptdeck.tui.screens.capture_view import CaptureScreen
from textual.pilot import Pilot

SnapCompare = Callable[..., bool]


async def open_capture(pilot: Pilot[Any]) -> CaptureScreen:
    """Press ``C`` on story 1-1 and wait until the capture is shown and nothing moves."""
    await wait_for_preview(pilot, "1-1")
    await pilot.app.workers.wait_for_complete()
    # The startup toast belongs to the main screen's rack: cleared while it is on top.
    pilot.app.clear_notifications()
    await pilot.pause()
    screen = await press_capture(pilot)
    assert screen.capture is not None, screen.failure
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()
    return screen


def test_the_capture_view(
    snap_compare: SnapCompare, demo_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(
        "PROMPTDECK_CLAUDE_BIN", str(client_program(tmp_path / "bin", POSTING_CLIENT))
    )
    # The project's CLAUDE.md holds the workspace rules too: the view flags the repeat.
    rules = (demo_root / ".promptdeck" / "rules.md").read_text(encoding="utf-8")
    (demo_root / "CLAUDE.md").write_text(rules, encoding="utf-8")
    app = make_app(demo_root, stable=True, agent="claude")
    assert snap_compare(app, terminal_size=(120, 32), run_before=open_capture)
