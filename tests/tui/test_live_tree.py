"""A live tree: statuses follow the files on disk and the runs; a plan file the guarded reader
refuses leaves the tree as it was, said once; a status a run could not write back is said on
the story."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

from app_helpers import make_app, run_async, wait_for, wait_for_preview
from promptdeck.tui.screens.main import MainScreen
from promptdeck.tui.widgets.story_tree import StoryTree

ART = "_bmad-output/implementation-artifacts"
SPRINT = f"{ART}/sprint-status.yaml"


def _label(screen: MainScreen, story_id: str) -> str:
    node = screen.query_one(StoryTree).node_for(story_id)
    assert node is not None
    return str(node.label)


def _status_of(screen: MainScreen, story_id: str) -> str:
    assert screen.catalog is not None
    return next(s.status for s in screen.catalog.stories if s.id == story_id)


@run_async
async def test_an_outside_edit_reloads_the_tree_and_keeps_the_story(demo_root: Path) -> None:
    app = make_app(demo_root, stable=True)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        screen.select_story(next(s for s in screen.catalog.stories if s.id == "1-3"))  # type: ignore[union-attr]
        await wait_for_preview(pilot, "1-3")
        sprint = demo_root / SPRINT
        sprint.write_text(
            sprint.read_text(encoding="utf-8").replace(
                "1-3-detect-duplicate-transactions: in-progress",
                "1-3-detect-duplicate-transactions: review",
            ),
            encoding="utf-8",
        )
        await wait_for(pilot, lambda: _status_of(screen, "1-3") == "review", "the reload")
        assert screen.story is not None and screen.story.id == "1-3"
        tree = screen.query_one(StoryTree)
        await wait_for(pilot, lambda: tree.cursor_node is tree.node_for("1-3"), "the cursor")


@run_async
async def test_a_sprint_status_swapped_for_a_fifo_keeps_the_last_good_tree(
    demo_root: Path,
) -> None:
    app = make_app(demo_root, stable=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        catalog = screen.catalog
        sprint = demo_root / SPRINT
        sprint.unlink()
        os.mkfifo(sprint)
        await wait_for(pilot, lambda: any("FIFO" in n.text for n in app.notices), "the line")
        said = [n for n in app.notices if "FIFO" in n.text]
        assert len(said) == 1 and "keeps its last good state" in said[0].text
        assert screen.catalog is catalog  # not reloaded
        assert _status_of(screen, "1-3") == "in-progress"
        # Polled again: still said once.
        await pilot.pause(1.5)
        assert len([n for n in app.notices if "FIFO" in n.text]) == 1


@run_async
async def test_a_status_that_could_not_be_written_back_is_said_on_the_story(
    demo_root: Path,
) -> None:
    sprint = demo_root / SPRINT
    sprint.write_text(
        re.sub(r"(?m)^  1-4-category-rules: .*\n", "", sprint.read_text(encoding="utf-8")),
        encoding="utf-8",
    )
    story = demo_root / ART / "1-4-category-rules.md"
    story.write_text(
        re.sub(r"(?m)^Status: .*\n", "", story.read_text(encoding="utf-8")), encoding="utf-8"
    )
    subprocess.run(["git", "-C", str(demo_root), "commit", "-qam", "untracked 1-4"], check=True)
    app = make_app(demo_root, stable=True)
    async with app.run_test(size=(200, 50)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        # With neither a sprint entry nor a Status: line, the story is known by its heading.
        story = next(s for s in screen.catalog.stories if s.key == "1-4")  # type: ignore[union-attr]
        screen.select_story(story)
        await wait_for(pilot, lambda: screen.phases.choice.reading is not None, "the flow")
        screen.phases.phase = "dev"
        await wait_for_preview(pilot, story.id)
        await pilot.press("r")
        await wait_for(pilot, lambda: pilot.app.screen is not screen, "the confirmation")
        await pilot.press("enter")
        await wait_for(pilot, lambda: screen.last_result is not None, "the run to end")
        await wait_for(pilot, lambda: "not written back" in _label(screen, story.id), "the flag")
        assert any("status review not written back" in n.text for n in app.notices)
