"""The app on a cloned real project with no agent named and none found: the header says so,
``r`` and ``n`` refuse in one line, and nothing runs or is written."""

from __future__ import annotations

from pathlib import Path

import pytest
from _run_helpers import STORY, STORY_REL, cloned_workspace, git, run_folders
from app_helpers import Toasts, make_app, run_async, wait_for, wait_for_preview
from promptdeck.tui.screens.confirm_run import ConfirmRunScreen
from promptdeck.tui.widgets.workspace_header import WorkspaceHeader


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("PROMPTDECK_CLAUDE_BIN", str(tmp_path / "no-such-claude"))
    return cloned_workspace(tmp_path, {STORY_REL: STORY, "package.json": "{}\n"})


@run_async
async def test_r_and_n_refuse_without_an_agent(project: Path) -> None:
    app = make_app(project)
    toasts = Toasts(app)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        header = screen.query_one(WorkspaceHeader).info
        assert header is not None and header.agent == "none"
        for key in ("r", "n"):
            before = len(toasts.messages)
            await pilot.press(key)
            await wait_for(pilot, lambda n=before: len(toasts.messages) > n, f"{key}'s answer")
            message = toasts.messages[-1]
            # One line says it all, ending with the key that reads every notice.
            assert "\n" not in message
            assert "no agent to run" in message and "--agent" in message
            assert message.endswith("· w to read")
            assert not isinstance(app.screen, ConfirmRunScreen)
    assert run_folders(project) == []
    assert git(project, "status", "--porcelain", "--untracked-files=all") == ""
