"""A story opens on the phase the user wants: the next one for unfinished work, the last run's
for done work, or the ``open_phase`` setting; the preview's title says which and why."""

from __future__ import annotations

import json
from pathlib import Path

from app_helpers import make_app, run_async, wait_for, wait_for_preview
from promptdeck.core.records.writer import runs_dir
from promptdeck.tui.settings import UserSettings


def write_run(root: Path, n: int, story: str, phase: str, outcome: str = "success") -> None:
    """A finished run record, as the runner leaves it (only what the flow reads)."""
    folder = runs_dir(root) / f"20240101-00000{n}-{story}-{phase}"
    folder.mkdir(parents=True)
    meta = {"run_id": folder.name, "story": story, "phase": phase, "started_ts": 1000.0 + n}
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    (folder / "result.json").write_text(json.dumps({"outcome": outcome}), encoding="utf-8")


def _title(app: object) -> str:
    from promptdeck.tui.screens.main import MainScreen

    screen = app.screen  # type: ignore[attr-defined]
    assert isinstance(screen, MainScreen)
    return str(screen.query_one("#preview-title").render())


@run_async
async def test_a_done_story_opens_on_its_last_runs_phase(demo_root: Path) -> None:
    # 1-1 is done in sprint-status.yaml; its last run was a review.
    write_run(demo_root, 1, "1-1", "dev")
    write_run(demo_root, 2, "1-1", "review")
    app = make_app(demo_root, stable=True)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        assert screen.phase == "review"
        assert _title(app).startswith("Preview · review (last run) · 1-1")


@run_async
async def test_a_done_story_without_runs_opens_on_dev_and_says_so(demo_root: Path) -> None:
    app = make_app(demo_root, stable=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        assert screen.phase == "dev"
        assert "dev (done)" in _title(app)
        # Moving to another phase: the title says the user chose it.
        await pilot.press("right_square_bracket")
        await wait_for_preview(pilot, "1-1")
        assert "review (chosen)" in _title(app)


@run_async
async def test_an_unfinished_story_opens_on_its_next_phase(demo_root: Path) -> None:
    write_run(demo_root, 1, "1-4", "kickoff")
    write_run(demo_root, 2, "1-4", "dev")
    app = make_app(demo_root, stable=True)
    async with app.run_test(size=(200, 50)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        assert screen.catalog is not None
        screen.select_story(next(s for s in screen.catalog.stories if s.id == "1-4"))
        await wait_for(pilot, lambda: screen.phases.choice.reading is not None, "the flow")
        screen = await wait_for_preview(pilot, "1-4")
        assert screen.phase == "review"
        assert "review (next) · 1-4" in _title(app)


@run_async
async def test_the_open_phase_setting_opens_every_story_there(demo_root: Path) -> None:
    write_run(demo_root, 1, "1-1", "review")
    app = make_app(demo_root, stable=True, user_settings=UserSettings(open_phase="kickoff"))
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        assert screen.phase == "kickoff"
        assert "kickoff (setting)" in _title(app)
