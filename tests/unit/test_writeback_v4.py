"""Status written back into a BMAD v4 story: the first line of its ``## Status`` section, in
v4's own words, through the same guarded rewrite as every other write-back."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.plans.writeback import set_story_file_status, write_back, write_start
from promptdeck.core.project.workspace import Workspace, open_workspace

LAYOUTS = Path(__file__).resolve().parents[1] / "fixtures" / "layouts"
STORIES = "docs/stories"


def v4(tmp_path: Path) -> Workspace:
    root = tmp_path / "v4-classic"
    shutil.copytree(LAYOUTS / "v4-classic", root)
    (root / ".promptdeck").mkdir()
    (root / ".promptdeck/config.toml").write_text(
        '[paths]\nartifacts = "docs/stories"\nplanning = "docs/prd"\n', encoding="utf-8"
    )
    return open_workspace(root)


def story_text(value: str) -> str:
    return f"# Story 1.2: Login\n\n## Status\n\n{value}\n\n## Story\n\nAs a user.\n"


@pytest.mark.parametrize(
    ("before", "status", "after"),
    [
        ("Approved", "in-progress", "InProgress"),
        ("Draft", "in-progress", "InProgress"),
        ("InProgress", "review", "Review"),
        ("In Progress", "review", "Review"),
        ("Review", "done", "Done"),
        ("Ready for Review", "done", "Done"),
        ("**Review**", "done", "**Done**"),
        ("Draft", "ready-for-dev", "Approved"),
        ("Done", "backlog", "Draft"),
        ("**✅ COMPLETE** (2026-01-16)", "review", "**Review**"),
    ],
)
def test_a_v4_status_section_gets_v4s_word(before: str, status: str, after: str) -> None:
    changed = set_story_file_status(story_text(before), status)
    assert changed is not None
    text, line, old, new = changed
    assert (line, old, new) == (5, before, after)
    assert text == story_text(after)


@pytest.mark.parametrize(
    ("value", "status"),
    [
        ("Review", "review"),
        ("Ready for Review", "review"),
        ("**✅ COMPLETE** (2026-01-16)", "done"),
    ],
)
def test_a_v4_value_already_meaning_the_status_is_left_alone(value: str, status: str) -> None:
    assert set_story_file_status(story_text(value), status) is None


def test_a_lowercase_section_value_keeps_the_story_status_words() -> None:
    changed = set_story_file_status(story_text("in-progress"), "review")
    assert changed is not None and changed[3] == "review"


def test_dev_start_dev_and_review_walk_a_v4_story_in_its_own_words(tmp_path: Path) -> None:
    workspace = v4(tmp_path)
    path = workspace.root / STORIES / "1.4.session-timeout.story.md"
    original = path.read_bytes()
    story = load_catalog(workspace).find("1-4")
    assert story.status == "ready-for-dev"

    started = write_start(workspace, story, "dev")
    # No sprint-status.yaml in a v4 plan: nothing to update there, and no note about it.
    assert started is not None and started.failures == () and started.notes == ()
    assert [(e.path, e.line, e.before, e.after) for e in started.edits] == [
        (f"{STORIES}/1.4.session-timeout.story.md", 5, "Approved", "InProgress")
    ]
    assert path.read_bytes() == original.replace(b"\nApproved\n", b"\nInProgress\n")
    assert load_catalog(workspace).find("1-4").status == "in-progress"

    write_back(workspace, story, "dev", True)
    assert "\n## Status\n\nReview\n" in path.read_text(encoding="utf-8")
    assert load_catalog(workspace).find("1-4").status == "review"
    write_back(workspace, story, "review", True)
    assert "\n## Status\n\nDone\n" in path.read_text(encoding="utf-8")
    assert load_catalog(workspace).find("1-4").status == "done"


def test_a_decorated_complete_story_is_not_rewritten_after_a_review(tmp_path: Path) -> None:
    workspace = v4(tmp_path)
    path = workspace.root / STORIES / "2.3.share-note.story.md"
    original = path.read_bytes()
    update = write_back(workspace, load_catalog(workspace).find("2-3"), "review", True)
    assert update is not None and update.edits == () and update.failures == ()
    assert path.read_bytes() == original


def test_a_symlinked_v4_story_file_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    workspace = v4(tmp_path)
    story = load_catalog(workspace).find("1-2")
    assert story.path is not None
    outside = tmp_path / "elsewhere.md"
    outside.write_bytes((workspace.root / story.path).read_bytes())
    (workspace.root / story.path).unlink()
    (workspace.root / story.path).symlink_to(outside)
    update = write_back(workspace, story, "review", True)
    assert update is not None and update.edits == ()
    assert any(story.path in failure for failure in update.failures)
    assert "\nReview\n" in outside.read_text(encoding="utf-8")


def test_a_fifo_in_place_of_a_v4_story_file_is_refused_without_waiting(tmp_path: Path) -> None:
    workspace = v4(tmp_path)
    story = load_catalog(workspace).find("2-1")
    assert story.path is not None
    (workspace.root / story.path).unlink()
    os.mkfifo(workspace.root / story.path)
    update = write_back(workspace, story, "dev", True)
    assert update is not None and update.edits == ()
    assert [f for f in update.failures if story.path in f]


def test_the_line_written_is_the_line_the_status_is_read_from() -> None:
    from promptdeck.core.plans.bmad_story_file import parse_story_text

    # Front matter's `status:` is not the story's (the first `Status:` after the heading is):
    # write-back changes the line the status is read from, and only that one.
    text = "---\nstatus: draft\n---\n# Story 1.1: X\n\nStatus: ready-for-dev\n\n## Tasks\n"
    assert parse_story_text(text, "x.md").status_line == 6
    changed = set_story_file_status(text, "in-progress")
    assert changed is not None
    new_text, line, old, new = changed
    assert (line, old, new) == (6, "Status: ready-for-dev", "Status: in-progress")
    assert new_text.startswith("---\nstatus: draft\n---\n")
    assert parse_story_text(new_text, "x.md").raw_status == "in-progress"
