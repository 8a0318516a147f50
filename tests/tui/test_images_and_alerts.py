"""The app's side of seed 004: an attached image shown in the confirmation and recorded in the
run, the rules alert marked in the header, and the injection's events shown as notices."""

from __future__ import annotations

import base64
import json
from pathlib import Path

from app_helpers import make_app, run_async, wait_for, wait_for_preview
from promptdeck.core.records.reader import list_runs
from promptdeck.tui.screens.confirm_run import ConfirmRunScreen
from promptdeck.tui.screens.file_picker import FilePickerScreen
from promptdeck.tui.session.run_confirmation import injection_notices
from promptdeck.tui.widgets.workspace_header import WorkspaceHeader
from textual.widgets import Button, Static

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)


@run_async
async def test_an_attached_image_is_confirmed_and_recorded(demo_root: Path) -> None:
    (demo_root / "docs").mkdir(exist_ok=True)
    (demo_root / "docs" / "screen.png").write_bytes(PNG)
    (demo_root / "docs" / "fake.png").write_text("not an image")
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        for path in ("docs/fake.png", "docs/screen.png"):
            await pilot.press("i")
            await wait_for(pilot, lambda: isinstance(app.screen, FilePickerScreen), "the picker")
            await app.screen.dismiss(path)
            await wait_for(pilot, lambda: app.screen is screen, "the main screen again")
        assert [i.path for i in screen.runs.images] == ["docs/screen.png"]  # the fake was refused
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmRunScreen), "the confirmation")
        confirm = app.screen
        assert isinstance(confirm, ConfirmRunScreen)
        shown = str(confirm.query_one("#confirm-images", Static).render())
        assert "docs/screen.png (image/png, 70 B)" in shown
        start = confirm.query_one("#start", Button)
        await wait_for(pilot, lambda: start.has_focus, "the start button")
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.last_result is not None, "the end of the run")
    run = list_runs(demo_root)[-1]
    meta = json.loads((run.dir / "meta.json").read_text())
    assert meta["images"] == [{"path": "docs/screen.png", "type": "image/png", "bytes": len(PNG)}]


@run_async
async def test_the_header_marks_a_rules_alert(demo_root: Path) -> None:
    runs = demo_root / ".promptdeck" / "runs"
    runs.mkdir(parents=True, exist_ok=True)
    (runs / "rules-health.json").write_text(
        json.dumps({"path": ".promptdeck/rules.md", "status": "missing", "consecutive": 3})
    )
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        header = screen.query_one(WorkspaceHeader)
        await wait_for(pilot, lambda: header.info is not None and header.info.rules_alert, "alert")
        assert "check the workspace" in str(header.render())


def test_injection_events_become_notices() -> None:
    events = [
        ("injection:warning", {"message": "Injection size (120000 bytes) exceeds warning"}),
        ("injection:empty", {"story_keys": ["1-2"]}),
        ("injection:skipped", {"path": "a.md", "status": "missing", "reason": "no such file"}),
        ("injection:skipped", {"path": "b.bin", "status": "binary", "reason": ""}),
    ]
    assert injection_notices(events) == [
        ("injection: Injection size (120000 bytes) exceeds warning", "warning"),
        ("injection: no file injected for 1-2", "warning"),
        ("injection: 2 file(s) skipped: a.md (no such file); b.bin (binary)", "information"),
    ]
