"""Watching the plan files: stamps change when a file is written, added or swapped, and a file
the guarded reader refuses is named instead of stamped."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from promptdeck.core.plans.catalog import WATCH_LIMIT, load_catalog, plan_paths, take_snapshot
from promptdeck.core.project.config import Config
from promptdeck.core.project.workspace import Workspace
from promptdeck.core.records.status_record import unwritten_status

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
ART = "_bmad-output/implementation-artifacts"
SPRINT = f"{ART}/sprint-status.yaml"


def _real(tmp_path: Path, **config: object) -> Workspace:
    root = tmp_path / "bmad-todo-app"
    shutil.copytree(REAL / "bmad-todo-app", root)
    return Workspace(root=root.resolve(), config=Config(**config))  # type: ignore[arg-type]


def test_the_plan_is_the_sprint_status_the_folders_and_each_story_file(tmp_path: Path) -> None:
    workspace = _real(tmp_path)
    catalog = load_catalog(workspace)
    paths = plan_paths(workspace, catalog)
    assert paths[:3] == [SPRINT, ART, "openspec/changes"]
    story_files = [s.path for s in catalog.stories if s.path]
    assert story_files and set(story_files) <= set(paths)
    assert len(paths) == len(set(paths))


def test_an_edit_and_a_new_story_file_are_changes(tmp_path: Path) -> None:
    workspace = _real(tmp_path)
    paths = plan_paths(workspace, load_catalog(workspace))
    before = take_snapshot(workspace, paths)
    assert take_snapshot(workspace, paths).changed_since(before) == []
    sprint = workspace.root / SPRINT
    sprint.write_text(sprint.read_text(encoding="utf-8") + "\n# edited\n", encoding="utf-8")
    assert take_snapshot(workspace, paths).changed_since(before) == [SPRINT]
    (workspace.root / ART / "9-9-new-story.md").write_text("# Story 9.9: New\n", encoding="utf-8")
    assert ART in take_snapshot(workspace, paths).changed_since(before)


def test_a_fifo_a_symlink_out_and_a_huge_file_are_named_not_stamped(tmp_path: Path) -> None:
    workspace = _real(tmp_path, read_max_bytes=1000)
    paths = plan_paths(workspace, load_catalog(workspace))
    sprint = workspace.root / SPRINT
    sprint.unlink()
    os.mkfifo(sprint)
    assert take_snapshot(workspace, paths).problems() == [
        f"{SPRINT}: unreadable: a FIFO, not a regular file"
    ]
    sprint.unlink()
    outside = tmp_path / "secret.yaml"
    outside.write_text("token: x\n", encoding="utf-8")
    sprint.symlink_to(outside)
    assert take_snapshot(workspace, paths).problems()[0].startswith(f"{SPRINT}: outside-project")
    sprint.unlink()
    sprint.write_bytes(b"x" * 5000)
    assert take_snapshot(workspace, paths).problems()[0].startswith(f"{SPRINT}: too-large")


def test_past_the_bound_the_first_paths_are_watched_and_the_rest_counted(tmp_path: Path) -> None:
    workspace = _real(tmp_path)
    many = [f"{ART}/extra-{n}.md" for n in range(WATCH_LIMIT + 5)]
    snapshot = take_snapshot(workspace, [SPRINT, *many])
    assert snapshot.left_out == 6 and snapshot.total == WATCH_LIMIT + 6


def test_a_status_not_written_back_is_told_from_the_run_record(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    record = {
        "story": "1-2",
        "phase": "dev",
        "status": "review",
        "edits": [],
        "notes": ["no entry"],
    }
    (run_dir / "status.json").write_text(json.dumps(record), encoding="utf-8")
    assert unwritten_status(run_dir, tmp_path) == "status review not written back: no entry"
    record["edits"] = [{"path": SPRINT, "line": 3, "before": "a", "after": "b"}]
    (run_dir / "status.json").write_text(json.dumps(record), encoding="utf-8")
    assert unwritten_status(run_dir, tmp_path) is None
    (run_dir / "status.json").unlink()
    assert unwritten_status(run_dir, tmp_path) is None
