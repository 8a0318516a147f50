"""Git between phases, on temporary repositories."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from builders import commit_all
from promptdeck.core.errors import GitError
from promptdeck.core.records.writer import ensure_gitignore
from promptdeck.core.run import gitops


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


def _staged(root: Path) -> list[str]:
    return subprocess.run(
        ["git", "diff", "--staged", "--name-only"], cwd=root, capture_output=True, text=True
    ).stdout.split()


def test_stage_phase_stages_only_what_the_phase_changed(tmp_path: Path) -> None:
    _repo(tmp_path)
    (tmp_path / "b.txt").write_text("b\n")
    commit_all(tmp_path, "b")
    (tmp_path / ".gitignore").write_text("dump.sql\n")
    commit_all(tmp_path, "ignore")
    ensure_gitignore(tmp_path)
    (tmp_path / "a.txt").write_text("the user's own edit\n")
    (tmp_path / "notes.txt").write_text("untracked before\n")
    repo = gitops.require_repo(tmp_path)
    before = gitops.snapshot(repo)
    assert before.dirty == ("a.txt", "notes.txt") and before.problem is None
    # The phase: new source, an edit of a tracked file, a deletion, and things never staged.
    (tmp_path / ".promptdeck" / "runs" / "r1").mkdir(parents=True)
    (tmp_path / ".promptdeck" / "runs" / "r1" / "meta.json").write_text("{}")
    (tmp_path / "src.py").write_text("x = 1\n")
    (tmp_path / "b.txt").unlink()
    (tmp_path / "a.txt").write_text("the user's edit, then the phase's\n")
    (tmp_path / ".env").write_text("TOKEN=abc\n")
    (tmp_path / "id_rsa").write_text("key\n")
    (tmp_path / "config.py").write_text('AWS = "AKIAIOSFODNN7EXAMPLE"\n')
    (tmp_path / "big.bin").write_bytes(b"0" * 2048)
    (tmp_path / "dump.sql").write_text("ignored\n")
    report = gitops.stage_phase(repo, before, max_bytes=1024)
    assert sorted(report.staged) == [".promptdeck/.gitignore", "b.txt", "src.py"]
    assert sorted(_staged(tmp_path)) == [".promptdeck/.gitignore", "b.txt", "src.py"]
    reasons = dict(report.left)
    assert set(reasons) == {"a.txt", ".env", "id_rsa", "config.py", "big.bin"}
    assert "already changed before" in reasons["a.txt"]
    assert "name looks like a secret" in reasons[".env"]
    assert "name looks like a secret" in reasons["id_rsa"]
    assert "AWS Access Key, line 1" in reasons["config.py"]
    assert "AKIA" not in reasons["config.py"]  # the secret itself is never repeated
    assert "over git.max_file_bytes" in reasons["big.bin"]
    text = report.describe()
    assert "not staged: .env" in text and "src.py" in text


def test_snapshot_names_a_merge_in_progress_and_unmerged_paths(tmp_path: Path) -> None:
    _repo(tmp_path)

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=tmp_path, capture_output=True, check=False)

    git("checkout", "-q", "-b", "other")
    (tmp_path / "a.txt").write_text("theirs\n")
    git("commit", "-qam", "theirs")
    git("checkout", "-q", "-")
    (tmp_path / "a.txt").write_text("ours\n")
    git("commit", "-qam", "ours")
    git("merge", "other")
    repo = gitops.require_repo(tmp_path)
    assert gitops.snapshot(repo).problem == "a merge is in progress"
    (tmp_path / ".git" / "MERGE_HEAD").unlink()
    assert (gitops.in_progress(repo) or "").startswith("1 unmerged path(s), e.g. a.txt")


def test_a_repository_without_commits_refuses_the_git_step(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "a.txt").write_text("a\n")
    problem = gitops.in_progress(gitops.require_repo(tmp_path))
    assert problem is not None and problem.startswith("the repository has no commits yet")


def test_commit_uses_the_message_and_reports_the_new_head(tmp_path: Path) -> None:
    _repo(tmp_path)
    repo = gitops.require_repo(tmp_path)
    before = gitops.head_sha(repo)
    (tmp_path / "b.txt").write_text("b\n")
    assert gitops.commit_staged(repo, "feat(1-2): nothing") is None  # nothing staged
    subprocess.run(["git", "add", "b.txt"], cwd=tmp_path, check=True)
    sha = gitops.commit_staged(
        repo, gitops.commit_message("feat({story}): {title}", "1-2", "Parse")
    )
    assert sha is not None and sha != before and gitops.head_sha(repo) == sha
    log = subprocess.run(
        ["git", "log", "-1", "--format=%s"], cwd=tmp_path, capture_output=True, text=True
    ).stdout.strip()
    assert log == "feat(1-2): Parse"


def test_no_hook_of_the_repository_runs_on_commit(tmp_path: Path) -> None:
    _repo(tmp_path)
    marker = tmp_path.parent / f"{tmp_path.name}-hook-ran"
    for name in ("pre-commit", "commit-msg"):
        hook = tmp_path / ".git" / "hooks" / name
        hook.write_text(f"#!/bin/sh\ntouch {marker}\nexit 1\n")
        hook.chmod(0o755)
    (tmp_path / "src.py").write_text("x=1\n")
    subprocess.run(["git", "add", "src.py"], cwd=tmp_path, check=True)
    repo = gitops.require_repo(tmp_path)
    assert gitops.commit_staged(repo, "feat(1-2): x") is not None
    assert not marker.exists()


def test_bad_commit_template(tmp_path: Path) -> None:
    with pytest.raises(GitError, match="commit_template"):
        gitops.commit_message("feat({ticket})", "1-2", "t")


def test_git_failure_is_a_git_error(tmp_path: Path) -> None:
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    (tmp_path / "a.txt").write_text("a\n")
    repo = gitops.require_repo(tmp_path)
    subprocess.run(["git", "add", "a.txt"], cwd=tmp_path, check=True)
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
        gitops.commit_staged(repo, "x")
