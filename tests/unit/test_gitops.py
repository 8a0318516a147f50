"""Git between phases, on temporary repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from builders import commit_all
from promptdeck.core import gitops
from promptdeck.core.errors import GitError
from promptdeck.core.records import ensure_gitignore


def _repo(root: Path) -> None:
    (root / "a.txt").write_text("a\n")
    commit_all(root)


def test_outside_a_repository(tmp_path: Path) -> None:
    assert gitops.open_repo(tmp_path) is None
    with pytest.raises(GitError, match="not inside a git repository") as caught:
        gitops.require_repo(tmp_path)
    assert caught.value.exit_code == 2


def test_unborn_branch_has_no_head(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    assert gitops.head_sha(gitops.require_repo(tmp_path)) is None


def test_snapshot_lists_dirty_files_but_never_run_records(tmp_path: Path) -> None:
    _repo(tmp_path)
    repo = gitops.require_repo(tmp_path / ".")
    (tmp_path / "a.txt").write_text("changed\n")
    (tmp_path / "new dir").mkdir()
    (tmp_path / "new dir" / "b.txt").write_text("b\n")
    runs = tmp_path / ".promptdeck" / "runs" / "r1"
    runs.mkdir(parents=True)
    (runs / "stream.jsonl").write_text("{}\n")
    snap = gitops.snapshot(repo)
    assert snap.head is not None and len(snap.head) == 40
    assert snap.dirty == ("a.txt", "new dir/b.txt")


def test_stage_all_returns_the_staged_stat_and_skips_runs(tmp_path: Path) -> None:
    _repo(tmp_path)
    ensure_gitignore(tmp_path)
    (tmp_path / ".promptdeck" / "runs" / "r1").mkdir(parents=True)
    (tmp_path / ".promptdeck" / "runs" / "r1" / "meta.json").write_text("{}")
    (tmp_path / "src.py").write_text("x = 1\n")
    repo = gitops.require_repo(tmp_path)
    stat = gitops.stage_all(repo)
    assert "src.py" in stat and "insertion" in stat
    staged = subprocess.run(
        ["git", "diff", "--staged", "--name-only"], cwd=tmp_path, capture_output=True, text=True
    ).stdout.split()
    assert "src.py" in staged and ".promptdeck/.gitignore" in staged
    assert not any("runs/" in name for name in staged)


def test_commit_uses_the_message_and_reports_the_new_head(tmp_path: Path) -> None:
    _repo(tmp_path)
    repo = gitops.require_repo(tmp_path)
    before = gitops.head_sha(repo)
    assert gitops.commit(repo, "feat(1-2): nothing") is None
    (tmp_path / "b.txt").write_text("b\n")
    sha = gitops.commit(repo, gitops.commit_message("feat({story}): {title}", "1-2", "Parse"))
    assert sha is not None and sha != before and gitops.head_sha(repo) == sha
    log = subprocess.run(
        ["git", "log", "-1", "--format=%s"], cwd=tmp_path, capture_output=True, text=True
    ).stdout.strip()
    assert log == "feat(1-2): Parse"


def test_bad_commit_template(tmp_path: Path) -> None:
    with pytest.raises(GitError, match="commit_template"):
        gitops.commit_message("feat({ticket})", "1-2", "t")


def test_git_failure_is_a_git_error(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "a.txt").write_text("a\n")
    repo = gitops.require_repo(tmp_path)
    with pytest.raises(GitError, match="git commit"):
        # No identity in this repository and none in a throwaway HOME: git refuses.
        repo.git.update_environment(
            HOME=str(tmp_path),
            GIT_CONFIG_GLOBAL=str(tmp_path / "none"),
            GIT_CONFIG_NOSYSTEM="1",
            GIT_AUTHOR_NAME="",
            GIT_COMMITTER_NAME="",
            EMAIL="",
        )
        gitops.commit(repo, "x")
