"""Stories in parallel: each in its own git worktree, in waves from the overlap plan, merged
back one at a time by the merge lane; HEAD moves only at merges."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
from builders import commit_all
from promptdeck.core.errors import UsageError
from promptdeck.core.fleet import ParallelRequest, list_worktrees, run_epic
from promptdeck.core.fleet.worktrees import create, seed
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.trust import trust_config
from promptdeck.core.project.workspace import Workspace, open_workspace
from promptdeck.core.records.reader import list_runs

ART = "_bmad-output/implementation-artifacts"
SPRINT = """development_status:
  epic-1: in-progress
  1-1-login: ready-for-dev
  1-2-logout: ready-for-dev
  1-3-profile: ready-for-dev
  1-4-settings: ready-for-dev
"""
BODIES = {
    "1-login": "## Tasks / Subtasks\n\n- [ ] Keep the session in `src/session.py`\n",
    "2-logout": "## Tasks / Subtasks\n\n- [ ] Add `src/logout.py`\n",
    "3-profile": "## Tasks / Subtasks\n\n- [ ] Read the user from `src/session.py`\n",
    "4-settings": "## Tasks / Subtasks\n\n- [ ] Add `src/settings.py`\n",
}


def epic(root: Path) -> Workspace:
    """Four stories of epic 1; 1.1 and 1.3 both name ``src/session.py``."""
    art = root / ART
    art.mkdir(parents=True)
    (art / "sprint-status.yaml").write_text(SPRINT)
    for name, body in BODIES.items():
        number, title = name.split("-", 1)
        (art / f"1-{name}.md").write_text(
            f"# Story 1.{number}: {title.title()}\n\nStatus: ready-for-dev\n\n{body}"
        )
    (root / ".promptdeck").mkdir()
    (root / ".promptdeck" / "config.toml").write_text(
        '[agent]\ndefault = "replay"\nreplay_delay = 0.0\nreplay_git = true\n'
    )
    (root / ".gitignore").write_text(".env\n")
    (root / ".env").write_text("TOKEN=local\n")
    commit_all(root)
    ws = open_workspace(root)
    trust_config(ws)
    return ws


def git(root: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=root, check=True, capture_output=True, text=True
    ).stdout.strip()


def test_four_stories_run_in_two_waves_and_merge_back(tmp_path: Path) -> None:
    ws = epic(tmp_path)
    base = git(tmp_path, "rev-parse", "HEAD")
    lines: list[str] = []
    done = run_epic(ws, ParallelRequest("1", 2, agent="replay"), lines.append)
    assert done.complete, (done.stopped, [r.note for r in done.stories])
    assert done.plan.waves == (("1-1", "1-2", "1-4"), ("1-3",))
    assert [(r.story, r.wave) for r in done.stories] == [
        ("1-1", 1),
        ("1-2", 1),
        ("1-4", 1),
        ("1-3", 2),
    ]
    # HEAD moved only at the merges: the branch's reflog is the base and one merge a story.
    reflog = git(tmp_path, "reflog", "--format=%gs", "refs/heads/master").splitlines()
    assert len(reflog) == 5 and reflog[-1].startswith("commit (initial)")
    assert all(entry.startswith(("merge promptdeck/", "commit (merge)")) for entry in reflog[:-1])
    assert all(
        len(parents.split()) == 2
        for parents in git(
            tmp_path, "log", "--format=%P", f"{base}..HEAD", "--first-parent"
        ).splitlines()
    )
    assert git(tmp_path, "merge-base", "--is-ancestor", base, "HEAD") == ""
    # No conflict marker anywhere; every story is done in the user's plan.
    assert subprocess.run(["git", "grep", "-q", "<<<<<<<"], cwd=tmp_path).returncode == 1
    statuses = {s.id: s.status for s in load_catalog(open_workspace(tmp_path)).stories}
    assert statuses == {"1-1": "done", "1-2": "done", "1-3": "done", "1-4": "done"}
    assert len(list((tmp_path / "src").glob("*.py"))) == 4  # each story's own module
    # The worktrees and branches are gone, the runs are in the project's records.
    assert list_worktrees(tmp_path) == []
    assert "promptdeck/" not in git(tmp_path, "branch", "--list")
    assert git(tmp_path, "status", "--porcelain") == ""
    assert {r.story for r in list_runs(tmp_path)} == {"1-1", "1-2", "1-3", "1-4"}
    assert "wave 2: 1-3" in lines


def test_a_conflict_stops_that_story_and_leaves_its_branch(tmp_path: Path) -> None:
    ws = epic(tmp_path)
    # The user's branch changes 1.2's story file after the worktrees start: simulated by a
    # story whose branch and the user's branch both change the same line of a file.
    made, _ = create(ws, "1-2")
    (made.path / "shared.txt").write_text("from the story\n")
    git(made.path, "add", "shared.txt")
    git(made.path, "commit", "-q", "-m", "story")
    (tmp_path / "shared.txt").write_text("from the user\n")
    git(tmp_path, "add", "shared.txt")
    git(tmp_path, "commit", "-q", "-m", "user")
    head = git(tmp_path, "rev-parse", "HEAD")
    from promptdeck.core.fleet import merge_story

    outcome = merge_story(ws, made)
    assert not outcome.merged and outcome.conflicts == ("shared.txt",)
    assert "shared.txt" in outcome.note and made.branch in outcome.note
    assert git(tmp_path, "rev-parse", "HEAD") == head
    assert git(tmp_path, "status", "--porcelain") == ""
    assert (tmp_path / "shared.txt").read_text() == "from the user\n"
    assert git(tmp_path, "rev-parse", made.branch)  # the branch is as it was


def test_a_dirty_checkout_waits_with_one_line_and_nothing_is_overwritten(
    tmp_path: Path,
) -> None:
    ws = epic(tmp_path)
    made, _ = create(ws, "1-2")
    (made.path / "new.txt").write_text("story\n")
    git(made.path, "add", "new.txt")
    git(made.path, "commit", "-q", "-m", "story")
    (tmp_path / "README.md").write_text("my edit\n")
    from promptdeck.core.fleet import merge_story

    outcome = merge_story(ws, made)
    assert outcome.waiting and not outcome.merged
    assert "uncommitted changes (README.md)" in outcome.note
    assert (tmp_path / "README.md").read_text() == "my edit\n"
    assert not (tmp_path / "new.txt").exists()


def test_a_folder_or_branch_already_there_is_refused(tmp_path: Path) -> None:
    ws = epic(tmp_path)
    (tmp_path / ".promptdeck" / "worktrees" / "1-1").mkdir(parents=True)
    with pytest.raises(UsageError, match="already exists"):
        create(ws, "1-1")
    git(tmp_path, "branch", "promptdeck/1-2")
    with pytest.raises(UsageError, match="branch promptdeck/1-2 already exists"):
        create(ws, "1-2")


def test_worktreeinclude_seeds_ignored_files_and_refuses_outside(tmp_path: Path) -> None:
    ws = epic(tmp_path)
    (tmp_path / ".worktreeinclude").write_text("# seeded\n.env\n../outside.txt\n/etc/passwd\n")
    made, notes = create(ws, "1-4")
    assert (made.path / ".env").read_text() == "TOKEN=local\n"
    assert (made.path / ".promptdeck" / "config.toml").is_file()
    assert len(notes) == 2 and all("not a path inside the project" in n for n in notes)
    assert seed(ws, made.path) == notes  # the same lines again, nothing more
    assert git(tmp_path, "status", "--porcelain") == "?? .worktreeinclude"


def test_an_interrupted_worktree_is_listed_and_taken_up(tmp_path: Path) -> None:
    ws = epic(tmp_path)
    made, _ = create(ws, "1-4")
    from promptdeck.core.fleet.worktrees import save

    dead = subprocess.Popen(["true"])
    dead.wait()
    save(tmp_path, made.__class__(**{**made.__dict__, "pid": dead.pid}))
    [listed] = list_worktrees(tmp_path)
    assert listed.state == "interrupted"
    done = run_epic(ws, ParallelRequest("1", 2, agent="replay"), lambda line: None)
    assert done.complete, [(r.story, r.note) for r in done.stories]


def test_the_cli_runs_an_epic_in_parallel_and_lists_and_cleans_worktrees(
    tmp_path: Path,
) -> None:
    from in_process import cli_in_process

    ws = epic(tmp_path)
    made, _ = create(ws, "1-4")
    from promptdeck.core.fleet.worktrees import save

    save(tmp_path, made.__class__(**{**made.__dict__, "state": "conflict", "note": "x"}))
    listed = cli_in_process(tmp_path, "runs")
    assert "worktree 1-4 (promptdeck/1-4) conflict" in listed.stdout
    offered = cli_in_process(tmp_path, "resume")
    assert "promptdeck resume --clean 1-4" in offered.stdout
    cleaned = cli_in_process(tmp_path, "resume", "--clean", "1-4")
    assert cleaned.returncode == 0 and not made.path.exists()
    assert "promptdeck/1-4" not in git(tmp_path, "branch", "--list")
    done = cli_in_process(tmp_path, "run", "--epic", "1", "--parallel", "2", "--json")
    assert done.returncode == 0, done.stderr
    payload = json.loads(done.stdout)
    assert payload["waves"] == [["1-1", "1-2", "1-4"], ["1-3"]]
    assert all(story["merged"] for story in payload["stories"])
    both = cli_in_process(tmp_path, "run", "1-1", "--epic", "1", "--parallel", "2")
    assert both.returncode == 2 and "leave out STORY" in both.stderr
    alone = cli_in_process(tmp_path, "run", "--parallel", "2")
    assert alone.returncode == 2 and "go together" in alone.stderr


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


def test_a_parallel_run_killed_mid_phase_is_taken_up_and_finished(tmp_path: Path) -> None:
    import sys

    ws = epic(tmp_path)
    child = subprocess.run(
        [sys.executable, "-c", CHILD, str(tmp_path)], capture_output=True, timeout=120
    )
    assert child.returncode == -9, child.stderr.decode()
    head = git(tmp_path, "rev-parse", "HEAD")
    # The wave's worktrees were made before its first story started.
    left = list_worktrees(tmp_path)
    assert [(w.story, w.state) for w in left] == [
        ("1-1", "interrupted"),
        ("1-2", "interrupted"),
        ("1-4", "interrupted"),
    ]
    offered = subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from promptdeck.cli import main; sys.exit(main())",
            "resume",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert "worktree 1-1 (promptdeck/1-1) interrupted" in offered.stdout
    assert git(tmp_path, "rev-parse", "HEAD") == head  # nothing merged yet
    lines: list[str] = []
    done = run_epic(ws, ParallelRequest("1", 2, agent="replay"), lines.append)
    assert done.complete, [(r.story, r.note) for r in done.stories]
    assert any("taking up its worktree" in line for line in lines)
    runs = [r for r in list_runs(tmp_path) if r.story == "1-1"]
    dev = [r for r in runs if r.phase == "dev"]
    assert len(dev) == 1 and dev[0].result is not None and dev[0].result.get("evidence")
