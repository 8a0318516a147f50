"""The shared learnings file starts itself at the first dev run (seed 003)."""

from __future__ import annotations

import os
from pathlib import Path

from promptdeck.core.project.config import Config
from promptdeck.core.project.workspace import Workspace
from promptdeck.core.prompt.learnings import learnings_path, start_learnings
from promptdeck.core.prompt.story import LEARNINGS_TEMPLATE, learnings_entries, read_learnings
from promptdeck.core.stories.model import Story

BMAD = Story(id="1-2", key="1-2", title="Parse", status="ready-for-dev", source="bmad", group="1")
SPEC = Story(
    id="add-auth:2",
    key="add-auth:2",
    title="Login",
    status="in-progress",
    source="openspec",
    group="add-auth",
)


def test_the_first_dev_run_writes_the_template_and_never_overwrites(tmp_path: Path) -> None:
    workspace = Workspace(tmp_path, Config())
    assert start_learnings(workspace, SPEC) == ".promptdeck/learnings.md"
    path = tmp_path / ".promptdeck" / "learnings.md"
    assert path.read_text(encoding="utf-8") == LEARNINGS_TEMPLATE
    assert learnings_entries(path.read_text(encoding="utf-8")) == ""
    assert read_learnings(workspace).status == "ok" and not read_learnings(workspace).has_entries
    path.write_text(LEARNINGS_TEMPLATE + "\n- Dates are UTC.\n", encoding="utf-8")
    assert start_learnings(workspace, BMAD) is None
    assert read_learnings(workspace).entries == "- Dates are UTC."


def test_a_group_placeholder_gives_each_change_or_epic_its_own_file(tmp_path: Path) -> None:
    config = Config(paths_learnings="openspec/changes/{group}/learnings.md")
    workspace = Workspace(tmp_path, config)
    assert learnings_path(workspace, SPEC) == "openspec/changes/add-auth/learnings.md"
    assert start_learnings(workspace, SPEC) == "openspec/changes/add-auth/learnings.md"
    assert start_learnings(workspace, BMAD) == "openspec/changes/1/learnings.md"
    assert (tmp_path / "openspec/changes/add-auth/learnings.md").is_file()


def test_never_written_outside_the_project(tmp_path: Path) -> None:
    root, outside = tmp_path / "root", tmp_path / "outside"
    root.mkdir()
    outside.mkdir()
    os.symlink(outside, root / "notes")
    workspace = Workspace(root, Config(paths_learnings="notes/learnings.md"))
    assert start_learnings(workspace, BMAD) is None
    assert not (outside / "learnings.md").exists()
    absolute = Workspace(root, Config(paths_learnings=str(outside / "l.md")))
    assert start_learnings(absolute, BMAD) is None and not (outside / "l.md").exists()
