"""``promptdeck resume RUN`` for a run a parallel epic left interrupted in its story's worktree:
listed from the project, settled from evidence or resumed inside the worktree, its records
copied back and the worktree left for the next parallel run to take up the story's flow."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from builders import commit_all
from in_process import cli_in_process
from promptdeck.core.fleet import ParallelRequest, list_worktrees, run_epic
from promptdeck.core.project.trust import trust_config
from promptdeck.core.project.workspace import Workspace, open_workspace
from promptdeck.core.records.reader import list_runs

ART = "_bmad-output/implementation-artifacts"
SPRINT = """development_status:
  epic-1: in-progress
  1-1-login: ready-for-dev
  1-2-logout: ready-for-dev
"""
CHILD = """
import os, signal, sys
from pathlib import Path
from promptdeck.core.fleet import ParallelRequest, run_epic
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.run import policy

def die(*args, **kwargs):
    os.kill(os.getpid(), signal.SIGKILL)

policy.RunPolicy.write = die  # killed after a phase's status write and git step
run_epic(open_workspace(Path(sys.argv[1])), ParallelRequest("1", 1), print)
"""


def _killed_epic(root: Path) -> tuple[Workspace, Path]:
    """Two stories run in parallel, killed in story 1-1's first phase: its run's folder in the
    worktree."""
    art = root / ART
    art.mkdir(parents=True)
    (art / "sprint-status.yaml").write_text(SPRINT)
    for number, title in (("1", "login"), ("2", "logout")):
        (art / f"1-{number}-{title}.md").write_text(
            f"# Story 1.{number}: {title.title()}\n\nStatus: ready-for-dev\n\n"
            f"## Tasks / Subtasks\n\n- [ ] Add `src/{title}.py`\n"
        )
    (root / ".promptdeck").mkdir()
    (root / ".promptdeck" / "config.toml").write_text(
        '[agent]\ndefault = "replay"\nreplay_delay = 0.0\nreplay_git = true\n'
    )
    commit_all(root)
    workspace = open_workspace(root)
    trust_config(workspace)
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(root)], capture_output=True, timeout=120
    )
    assert child.returncode == -9, child.stderr.decode()
    tree = next(w for w in list_worktrees(root) if w.story == "1-1")
    [run] = [r for r in list_runs(tree.path) if r.outcome == "interrupted"]
    assert not any(r.id == run.id for r in list_runs(root))  # only in the worktree so far
    return workspace, run.dir


def test_an_interrupted_worktree_run_is_listed_and_settled_from_evidence(tmp_path: Path) -> None:
    workspace, folder = _killed_epic(tmp_path)
    listed = cli_in_process(tmp_path, "resume")
    assert f"promptdeck resume {folder.name} (in story 1-1's worktree)" in listed.stdout
    as_json = json.loads(cli_in_process(tmp_path, "resume", "--json").stdout)
    assert [(i["run_id"], i["worktree"]) for i in as_json["interrupted"]] == [(folder.name, "1-1")]
    done = cli_in_process(tmp_path, "resume", folder.name)
    assert done.returncode == 0, done.stderr
    assert "succeeded (recorded after promptdeck was interrupted)" in done.stdout
    assert "(in story 1-1's worktree)" in done.stdout
    [copied] = [r for r in list_runs(tmp_path) if r.id == folder.name]
    assert copied.result is not None and copied.result.get("evidence")
    tree = next(w for w in list_worktrees(tmp_path) if w.story == "1-1")
    assert tree.state == "interrupted" and f"run {folder.name} resumed here" in tree.note
    # The next parallel run takes the story's flow up from there and finishes the epic.
    lines: list[str] = []
    finished = run_epic(workspace, ParallelRequest("1", 2, agent="replay"), lines.append)
    assert finished.complete, [(r.story, r.note) for r in finished.stories]


def test_an_interrupted_worktree_run_without_evidence_is_run_again_in_the_worktree(
    tmp_path: Path,
) -> None:
    _, folder = _killed_epic(tmp_path)
    (folder / "status.json").unlink()  # no status written back: nothing shows it succeeded
    done = cli_in_process(tmp_path, "resume", folder.name)
    assert done.returncode == 0, done.stderr
    tree = next(w for w in list_worktrees(tmp_path) if w.story == "1-1")
    [again] = [r for r in list_runs(tree.path) if r.run_meta.extra.get("continues") == folder.name]
    assert again.outcome == "success"
    assert Path(again.run_meta.cwd or "").resolve() == tree.path.resolve()
    # Its records are back in the project; the worktree waits for the next parallel run.
    assert {folder.name, again.id} <= {r.id for r in list_runs(tmp_path)}
    assert tree.state == "interrupted" and tree.pid is None
    assert "No interrupted runs." in cli_in_process(tmp_path, "resume").stdout
