"""Parallel runs' worktrees and the merge lane against a hostile repository: a state file of
``.promptdeck/worktrees/`` is a file a repository can ship (or a forged one left behind), so
the branch it names is never merged or deleted unless it is the story's own; a worktree's
linked record folders are never copied from; a resume never hands a forged session id to
the agent's argv."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from builders import commit_all
from promptdeck.cli import main
from promptdeck.core.fleet import list_worktrees, session_of
from promptdeck.core.fleet.worktrees import StoryWorktree, collect_runs, worktrees_dir
from promptdeck.core.project.workspace import Workspace, open_workspace
from promptdeck.core.records.reader import list_runs
from promptdeck.core.records.writer import RunRecord


def project(root: Path) -> Workspace:
    art = root / "_bmad-output/implementation-artifacts"
    art.mkdir(parents=True)
    (art / "1-1-login.md").write_text("# Story 1.1: Login\n\nStatus: ready-for-dev\n")
    commit_all(root)
    return open_workspace(root)


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout.strip()


@pytest.mark.parametrize("branch", ["keep", "-D", "promptdeck/1-2", "HEAD"])
def test_a_state_file_naming_another_branch_is_not_a_worktree(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, branch: str
) -> None:
    project(tmp_path)
    git(tmp_path, "branch", "keep")
    git(tmp_path, "branch", "promptdeck/1-2")
    folder = worktrees_dir(tmp_path.resolve())
    folder.mkdir(parents=True)
    (folder / "1-1.json").write_text(
        json.dumps(
            {
                "story": "1-1",
                "path": str(folder / "1-1"),
                "branch": branch,
                "base": "0" * 40,
                "state": "finished",
            }
        )
    )
    assert list_worktrees(tmp_path.resolve()) == []
    monkeypatch.chdir(tmp_path)
    assert main(["resume", "--clean", "1-1"]) == 2
    assert git(tmp_path, "branch", "--list", "keep") != ""
    assert git(tmp_path, "branch", "--list", "promptdeck/1-2") != ""


def test_a_worktrees_linked_records_are_not_copied(tmp_path: Path) -> None:
    ws = project(tmp_path / "project")
    outside = tmp_path / "elsewhere" / "runs" / "20260101-000000-000000-dev-1-1-aaaaaa"
    outside.mkdir(parents=True)
    (outside / "meta.json").write_text('{"story": "1-1", "phase": "dev"}')
    tree = tmp_path / "project" / ".promptdeck" / "worktrees" / "1-1"
    (tree / ".promptdeck").mkdir(parents=True)
    (tree / ".promptdeck" / "runs").symlink_to(outside.parent)
    worktree = StoryWorktree("1-1", tree, "promptdeck/1-1", "0" * 40, "finished")
    assert collect_runs(ws, worktree) == 0
    assert not (tmp_path / "project" / ".promptdeck" / "runs" / outside.name).exists()


@pytest.mark.parametrize(
    "session", ["--dangerously-skip-permissions", "-c", "x y", "../../etc", "a\x1b[8m"]
)
def test_a_forged_session_id_never_reaches_an_argv(tmp_path: Path, session: str) -> None:
    project(tmp_path)
    record = RunRecord.create(tmp_path, "1-1", "dev")
    record.write_meta(
        {"run_id": record.id, "story": "1-1", "phase": "dev", "agent": "claude", "pid": 2**22 + 7}
    )
    record.write_json("resume.json", {"session_id": session})
    record.close()
    [run] = list_runs(tmp_path)
    assert run.outcome == "interrupted"
    assert session_of(run) is None
