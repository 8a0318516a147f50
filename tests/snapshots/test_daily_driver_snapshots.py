"""The app as a daily driver, at the three sizes people use: the phase a story opens on, and a
tree that follows the plan files. Regenerate deliberately (``--snapshot-update``) and look at
the SVGs before accepting them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from app_helpers import make_app, settled_preview, wait_for
from promptdeck.core.records.writer import runs_dir
from promptdeck.tui.screens.copy_menu import CopyMenuScreen
from promptdeck.tui.screens.run_history import RunHistoryScreen
from promptdeck.tui.widgets.composition_chart import CompositionChart
from textual.pilot import Pilot

SIZES = {"80x24": (80, 24), "120x40": (120, 40), "200x50": (200, 50)}
SPRINT = "_bmad-output/implementation-artifacts/sprint-status.yaml"

SnapCompare = Callable[..., bool]


def _write_run(root: Path, n: int, story: str, phase: str) -> None:
    folder = runs_dir(root) / f"20240101-00000{n}-{story}-{phase}"
    folder.mkdir(parents=True)
    meta = {"run_id": folder.name, "story": story, "phase": phase, "started_ts": 1000.0 + n}
    (folder / "meta.json").write_text(json.dumps(meta), encoding="utf-8")
    (folder / "result.json").write_text(json.dumps({"outcome": "success"}), encoding="utf-8")


@pytest.mark.parametrize("size", list(SIZES))
def test_a_done_story_opens_on_its_last_run(
    snap_compare: SnapCompare, demo_root: Path, size: str
) -> None:
    _write_run(demo_root, 1, "1-1", "dev")
    _write_run(demo_root, 2, "1-1", "review")

    async def run_before(pilot: Pilot[Any]) -> None:
        await settled_preview(pilot, "1-1")

    app = make_app(demo_root, stable=True)
    assert snap_compare(app, terminal_size=SIZES[size], run_before=run_before)


@pytest.mark.parametrize("size", list(SIZES))
def test_the_tree_follows_an_outside_edit(
    snap_compare: SnapCompare, demo_root: Path, size: str
) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        screen = await settled_preview(pilot, "1-1")
        await pilot.press("down", "down")
        await settled_preview(pilot, "1-3")
        sprint = demo_root / SPRINT
        text = sprint.read_text(encoding="utf-8")
        sprint.write_text(
            text.replace(
                "detect-duplicate-transactions: in-progress",
                "detect-duplicate-transactions: review",
            ),
            encoding="utf-8",
        )
        catalog = screen.catalog
        await wait_for(pilot, lambda: screen.catalog is not catalog, "the reload")
        await settled_preview(pilot, "1-3")

    app = make_app(demo_root, stable=True)
    assert snap_compare(app, terminal_size=SIZES[size], run_before=run_before)


@pytest.mark.parametrize("size", list(SIZES))
def test_the_copy_menu(snap_compare: SnapCompare, demo_root: Path, size: str) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        await settled_preview(pilot, "1-1")
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, CopyMenuScreen), "the menu")
        await pilot.pause()

    app = make_app(demo_root, stable=True)
    assert snap_compare(app, terminal_size=SIZES[size], run_before=run_before)


@pytest.mark.parametrize("size", list(SIZES))
def test_the_history_footer(snap_compare: SnapCompare, demo_root: Path, size: str) -> None:
    _write_run(demo_root, 1, "1-1", "dev")

    async def run_before(pilot: Pilot[Any]) -> None:
        await settled_preview(pilot, "1-1")
        await pilot.press("h")
        await wait_for(
            pilot,
            lambda: isinstance(pilot.app.screen, RunHistoryScreen) and bool(pilot.app.screen.runs),
            "the history",
        )
        await pilot.pause()

    app = make_app(demo_root, stable=True)
    assert snap_compare(app, terminal_size=SIZES[size], run_before=run_before)


@pytest.mark.parametrize("size", list(SIZES))
def test_the_context_window(snap_compare: SnapCompare, demo_root: Path, size: str) -> None:
    async def run_before(pilot: Pilot[Any]) -> None:
        screen = await settled_preview(pilot, "1-1")
        await pilot.press("b")
        chart = screen.query_one(CompositionChart)
        await wait_for(pilot, lambda: chart.context is not None, "the context window")
        await pilot.pause()

    app = make_app(demo_root, stable=True, agent="claude")
    assert snap_compare(app, terminal_size=SIZES[size], run_before=run_before)
