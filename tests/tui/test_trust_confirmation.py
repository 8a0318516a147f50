"""In the app, a run that would start what the project's config chooses is confirmed twice:
the confirmation lists the settings, the first Start only arms it, the second records the
user's trust and starts the run."""

from __future__ import annotations

import sys
from pathlib import Path

from app_helpers import make_app, run_async, wait_for, wait_for_preview
from builders import commit_all, write_files
from promptdeck.core.project.trust import config_trust
from promptdeck.core.project.workspace import open_workspace
from promptdeck.tui.screens.confirm_run import ConfirmRunScreen
from promptdeck.tui.screens.main import MainScreen
from textual.pilot import Pilot
from textual.widgets import Button, Static

STORY_REL = "_bmad-output/implementation-artifacts/1-1-parse-rows.md"
STORY = "# Story 1.1: Parse rows\n\nStatus: ready-for-dev\n\n## Tasks / Subtasks\n\n- [ ] Parse\n"
AGENT = "print('IMPLEMENTATION COMPLETE: 1-1')\n"


def _project(tmp_path: Path) -> Path:
    """A committed project whose own config names the agent's argv, not yet trusted."""
    root = tmp_path / "project"
    config = f'[agent]\ncommand_argv = ["{sys.executable}", "agent.py"]\n'
    write_files(root, {STORY_REL: STORY, "agent.py": AGENT, ".promptdeck/config.toml": config})
    commit_all(root)
    return root


async def _confirmation(pilot: Pilot[None]) -> tuple[MainScreen, ConfirmRunScreen]:
    """Choose the dev phase of story 1.1, press r, and wait for the question."""
    app = pilot.app
    screen = await wait_for_preview(pilot, "1-1")
    while screen.phase != "dev":
        await pilot.press("right_square_bracket")
    await wait_for_preview(pilot, "1-1")
    await pilot.press("r")
    await wait_for(pilot, lambda: isinstance(app.screen, ConfirmRunScreen), "the question")
    confirm = app.screen
    assert isinstance(confirm, ConfirmRunScreen)
    return screen, confirm


@run_async
async def test_the_second_start_trusts_the_config_and_runs(tmp_path: Path) -> None:
    root = _project(tmp_path)
    assert config_trust(open_workspace(root), "command").needed
    app = make_app(root, agent="command", use_git=False)
    async with app.run_test(size=(160, 45)) as pilot:
        screen, confirm = await _confirmation(pilot)
        listed = str(confirm.query_one("#confirm-trust", Static).render())
        assert "chooses what this run starts" in listed and "agent.command_argv" in listed
        start = confirm.query_one("#start", Button)
        assert "Trust the config" in str(start.label)

        await pilot.press("enter")
        await pilot.pause()
        # One Enter never runs what the repository chose, and trusts nothing yet.
        assert app.screen is confirm and confirm.trust_confirmed
        assert "trust this config and start" in str(start.label)
        assert config_trust(open_workspace(root), "command").needed
        await wait_for(pilot, lambda: not start.has_class("-active"), "the button to settle")
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen), "the run to start")
        await wait_for(pilot, lambda: screen.last_result is not None, "the end of the run")
        result = screen.last_result
        assert result is not None and result.outcome == "success", result.message
        assert not config_trust(open_workspace(root), "command").needed
        await pilot.press("q")
        await wait_for(pilot, lambda: app.return_code is not None, "the app to exit")


@run_async
async def test_going_back_trusts_nothing(tmp_path: Path) -> None:
    root = _project(tmp_path)
    app = make_app(root, agent="command", use_git=False)
    async with app.run_test(size=(160, 45)) as pilot:
        await _confirmation(pilot)
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, MainScreen), "the main screen")
        assert config_trust(open_workspace(root), "command").needed
        assert not (root / ".promptdeck" / "runs").exists() or not any(
            p.is_dir() and p.name != "dry-run" for p in (root / ".promptdeck" / "runs").iterdir()
        )
        await pilot.press("q")
        await wait_for(pilot, lambda: app.return_code is not None, "the app to exit")
