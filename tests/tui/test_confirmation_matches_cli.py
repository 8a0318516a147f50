"""``promptdeck run --dry-run`` prints, row by row, the confirmation the app shows for the same
story, phase and request: title, sizes, notes, the secret scan's findings, the refusal with what
would bring an oversized story under the line, the run folder and the argv."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from app_helpers import make_app, run_async, wait_for, wait_for_preview
from promptdeck.tui.screens.confirm_run import ArgvView, ConfirmRunScreen
from textual.widgets import Static

SECRET_NOTES = "_bmad-output/implementation-artifacts/1-1-ops-notes.md"
DRY_RUN_FOLDER = re.compile(r"\(run folder (?P<folder>[^)]*promptdeck-dry-run-[^)]*)\):")
"""The dry run's temporary folder, as its confirmation names it."""


def _commit(root: Path, message: str) -> None:
    subprocess.run(["git", "-C", str(root), "add", "-A"], check=True)
    subprocess.run(
        ["git", "-C", str(root), "commit", "-q", "--no-verify", "-m", message], check=True
    )


def _cli_dry_run(root: Path, story: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "HOME": str(root.parent / "home"),
        "XDG_CONFIG_HOME": str(root.parent / "xdg"),
        "COLUMNS": "100",
        "NO_COLOR": "1",
    }
    return subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from promptdeck.cli import main; sys.exit(main())",
            "run",
            story,
            "--phase",
            "dev",
            "--dry-run",
        ],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )


def _screen_rows(confirm: ConfirmRunScreen, root: Path, dry_folder: str) -> list[str]:
    """The confirmation's text as the CLI prints it: a blank row where the screen leaves a
    margin, the argv shell-quoted on one row, the app's run folder named as the dry run's."""
    rows = [
        str(confirm.query_one("#confirm-title", Static).content),
        str(confirm.query_one("#confirm-sizes", Static).content),
    ]
    for widget in confirm.query_one("#confirm-body").children:
        if widget.styles.margin.top:
            rows.append("")
        if isinstance(widget, ArgvView):
            rows.append(shlex.join(widget.argv))
        else:
            assert isinstance(widget, Static)
            rows.extend(str(widget.content).splitlines())
    folder = confirm.plan.run_folder
    if not folder:
        return rows
    # The app plans a numbered run folder, the dry run a temporary one: the one difference.
    same = {str(root / folder): dry_folder, folder: dry_folder}
    for old, new in same.items():
        rows = [row.replace(old, new) for row in rows]
    return rows


async def _app_rows(
    root: Path, story_id: str, dry_folder: str
) -> tuple[list[str], ConfirmRunScreen]:
    app = make_app(root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        if story_id != "1-1":
            assert screen.catalog is not None
            screen.select_story(screen.catalog.find(story_id))
            screen = await wait_for_preview(pilot, story_id)
        while screen.phase != "dev":
            await pilot.press("right_square_bracket")
        await wait_for_preview(pilot, story_id)
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmRunScreen), "the confirmation")
        confirm = app.screen
        assert isinstance(confirm, ConfirmRunScreen)
        await pilot.pause()
        rows = _screen_rows(confirm, root, dry_folder)
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen, "the main screen")
    return rows, confirm


@pytest.mark.parametrize(
    ("story_id", "budget"), [("1-1", None), ("1-1", 100), ("2-2", None)], ids=str
)
@run_async
async def test_dry_run_prints_the_apps_confirmation_row_by_row(
    demo_root: Path, story_id: str, budget: int | None
) -> None:
    # A likely credential next to story 1-1: the scan flags it on both faces.
    (demo_root / SECRET_NOTES).write_text("# Ops\n\naws: AKIAIOSFODNN7EXAMPLE\n")
    if budget is not None:
        with (demo_root / ".promptdeck" / "config.toml").open("a", encoding="utf-8") as config:
            config.write(f"\n[budget]\ndev = {budget}\n")
    _commit(demo_root, "ops notes")
    done = _cli_dry_run(demo_root, story_id)
    named = DRY_RUN_FOLDER.search(done.stdout)
    dry_folder = named.group("folder") if named else "(no run folder)"
    # A dry run writes nothing into the project.
    assert not (demo_root / ".promptdeck" / "runs" / "dry-run").exists()
    rows, confirm = await _app_rows(demo_root, story_id, dry_folder)
    plan = confirm.plan

    assert done.stdout.splitlines() == rows
    # What the rows hold, so equal rows cannot mean two empty confirmations.
    assert (
        rows[0]
        == f"Run dev for story {story_id} (create, attempt 1) with the replay (simulation) agent"
    )
    assert "AKIAIOSFODNN7EXAMPLE" not in done.stdout
    if budget is not None:
        # Over its budget: refused on both faces; the dry run warns and exits 0 (README).
        assert done.returncode == 0 and "a run would be refused (exit 9)" in done.stderr
        assert plan.blocked and plan.argv
        # The predicted cost comes right after the sizes, the same on both faces.
        assert rows[2].startswith("predicted cost (first request only) ")
        assert "estimate" in rows[2]
        assert rows[3].startswith("budget 100 tok: ") and "OVER" in rows[3]
        assert rows[-2].startswith("Cannot run: the dev prompt is ")
        assert not any("AWS Access Key" in row for row in rows)
    elif story_id == "1-1":
        assert done.returncode == 0, done.stderr
        assert f"  • {SECRET_NOTES}:3: AWS Access Key" in rows
        assert f"The command that will run (run folder {dry_folder}):" in rows
        assert "promptdeck.core.agents.replay_main" in rows[-1]
        assert not plan.blocked and plan.argv
    else:
        assert done.returncode == 3
        assert "over the 153,600-byte limit" in done.stderr
        assert plan.blocked and not plan.argv
        assert any(row.startswith("Cannot run: the injection is 164.1 KiB") for row in rows)
        # The story's own file alone is over: no advice names a drop that would not fit.
        assert any(row.startswith("  • no set of files it may leave out brings it") for row in rows)
        assert not any("leave out the project context" in row for row in rows)
        assert not (demo_root / ".promptdeck" / "runs" / "dry-run").exists()
