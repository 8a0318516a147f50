"""git after a phase: only the phase's own work is staged and committed; secrets, big files,
ignored files and the user's own edits never are; a merge, rebase, cherry-pick or bisect in
progress, or a repository with no commit, refuses the git step; no hook of the repository
runs."""

from __future__ import annotations

from pathlib import Path

import pytest
from _run_helpers import STORY, STORY_REL, agent_files, cli, cloned_workspace, git

AGENT = r"""
import os, sys
story, root, phase = sys.argv[1], sys.argv[2], sys.argv[3]
story_file = os.path.join(root, "_bmad-output/implementation-artifacts/1-1-parse-lines.md")
def write(rel, data):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path) or ".", exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(data if isinstance(data, bytes) else data.encode())
if phase == "dev":
    write("src/parser.py", "def parse(line):\n    return line.split(',')\n")
    write(".env.local", "API_TOKEN=made-by-the-agent\n")
    write("keys/id_ed25519", "not really a key\n")
    write("config/settings.py", 'AWS_KEY = "AKIAIOSFODNN7EXAMPLE"\n')
    write("dump.bin", b"\0" * (6 * 1024 * 1024))
    write("debug.log", "ignored by .gitignore\n")
    os.symlink(os.path.join(root, "..", "canary.txt"), os.path.join(root, "notes-link"))
    with open(story_file, "a") as handle:
        handle.write("\n## Dev Agent Record\n\nParser written.\n")
    print("IMPLEMENTATION COMPLETE: " + story, flush=True)
elif phase == "review":
    with open(story_file, "a") as handle:
        handle.write("\n## Review\n\nLooks right.\n")
    print("REVIEW PASSED: " + story, flush=True)
"""


# What the dev phase itself writes: its code, the link, the story's record, promptdeck's own
# .gitignore, and the shared learnings file that the first dev run starts from its template.
PHASE_WORK = [
    ".promptdeck/.gitignore",
    ".promptdeck/learnings.md",
    STORY_REL,
    "notes-link",
    "src/parser.py",
]


def _workspace(tmp_path: Path, *, empty: bool = False) -> Path:
    files = {
        STORY_REL: STORY,
        "README.md": "# web\n",
        ".gitignore": "*.log\n",
        ".env": "OPENAI_API_KEY=the-user's-own\n",
        **agent_files(AGENT),
    }
    files[".promptdeck/config.toml"] = files[".promptdeck/config.toml"].replace(
        '"{root}"]', '"{root}", "{phase}"]'
    )
    return cloned_workspace(tmp_path, files, empty=empty)


def test_dev_stages_only_its_own_work_and_review_commits_it(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    canary = "CANARY-7f3a AKIAIOSFODNN7EXAMPLE"  # outside the project: never read, never shown
    (tmp_path / "canary.txt").write_text(canary + "\n", encoding="utf-8")
    # What the user has going on before the phase: an edit, an untracked key, a dump.
    (root / "README.md").write_text("# web\n\nmy own notes\n", encoding="utf-8")
    (root / "id_rsa").write_text("the user's key\n", encoding="utf-8")
    base = git(root, "rev-parse", "HEAD")
    dev = cli(root, "run", "1-1", "--phase", "dev")
    assert dev.code == 0, dev.stderr
    staged = sorted(git(root, "diff", "--staged", "--name-only").split())
    # The link is staged as what git stores, its target path; its target is never read.
    assert staged == PHASE_WORK
    assert "CANARY" not in dev.stdout + dev.stderr
    for path, reason in (
        (".env.local", "name looks like a secret"),
        ("keys/id_ed25519", "name looks like a secret"),
        ("config/settings.py", "looks like a credential (AWS Access Key, line 1)"),
        ("dump.bin", "over git.max_file_bytes"),
    ):
        assert f"not staged: {path}: " in dev.stderr and reason in dev.stderr, path
    assert "AKIAIOSFODNN7EXAMPLE" not in dev.stderr  # the secret is never repeated
    assert "debug.log" not in git(root, "status", "--porcelain")
    assert "already changed before this phase (not by it): README.md, id_rsa" in dev.stderr
    review = cli(root, "run", "1-1", "--phase", "review")
    assert review.code == 0, review.stderr
    assert git(root, "log", "-1", "--format=%s").strip() == "feat(1-1): Parse lines"
    assert git(root, "rev-parse", "HEAD~1").strip() == base.strip()
    committed = sorted(git(root, "show", "--name-only", "--format=", "HEAD").split())
    assert committed == PHASE_WORK
    assert "CANARY" not in git(root, "show", "HEAD") + review.stdout + review.stderr
    left = git(root, "status", "--porcelain", "--untracked-files=all")
    for path in ("README.md", "id_rsa", ".env.local", "config/settings.py", "dump.bin"):
        assert path in left


def _conflicted_merge(root: Path) -> None:
    git(root, "checkout", "-q", "-b", "other")
    (root / "README.md").write_text("theirs\n", encoding="utf-8")
    git(root, "commit", "-qam", "theirs")
    git(root, "checkout", "-q", "main")
    (root / "README.md").write_text("ours\n", encoding="utf-8")
    git(root, "commit", "-qam", "ours")
    git(root, "merge", "other", check=False)


def _cherry_pick(root: Path) -> None:
    _conflicted_merge(root)
    git(root, "merge", "--abort")
    git(root, "cherry-pick", "other", check=False)


def _rebase(root: Path) -> None:
    _conflicted_merge(root)
    git(root, "merge", "--abort")
    git(root, "rebase", "other", check=False)


def _bisect(root: Path) -> None:
    git(root, "bisect", "start")


@pytest.mark.parametrize(
    ("setup", "said"),
    [
        (_conflicted_merge, "a merge is in progress"),
        (_cherry_pick, "a cherry-pick is in progress"),
        (_rebase, "a rebase is in progress"),
        (_bisect, "a bisect is in progress"),
    ],
)
def test_git_in_the_middle_of_something_refuses_the_git_step(
    tmp_path: Path, setup: object, said: str
) -> None:
    root = _workspace(tmp_path)
    setup(root)  # type: ignore[operator]
    head = git(root, "rev-parse", "HEAD")
    index = git(root, "diff", "--staged", "--name-only")
    done = cli(root, "run", "1-1", "--phase", "dev")
    assert done.code == 6, done.stderr
    assert f"git step refused: {said}; nothing staged" in done.lines[-1]
    assert git(root, "rev-parse", "HEAD") == head
    assert git(root, "diff", "--staged", "--name-only") == index
    conflicted = (root / "README.md").read_text(encoding="utf-8")
    if said == "a merge is in progress":
        assert "<<<<<<<" in conflicted and (root / ".git" / "MERGE_HEAD").exists()


def test_a_repository_without_commits_never_becomes_the_story_commit(tmp_path: Path) -> None:
    root = _workspace(tmp_path, empty=True)
    done = cli(root, "run", "1-1", "--phase", "dev")
    assert done.code == 6, done.stderr
    assert "the repository has no commits yet" in done.lines[-1]
    assert git(root, "diff", "--staged", "--name-only") == ""
    assert git(root, "rev-parse", "--verify", "-q", "HEAD", check=False) == ""


def test_a_pre_commit_hook_of_the_repository_never_runs(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    hook = root / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\necho 'lint: src/parser.py: 2 problems' >&2\nexit 1\n")
    hook.chmod(0o755)
    head = git(root, "rev-parse", "HEAD")
    done = cli(root, "run", "1-1", "--auto")
    assert done.code == 0, done.stderr
    assert "lint: src/parser.py" not in done.stderr
    assert git(root, "rev-parse", "HEAD~1") == head


def test_the_lock_file_and_records_never_enter_git(tmp_path: Path) -> None:
    root = _workspace(tmp_path)
    done = cli(root, "run", "1-1", "--phase", "dev")
    assert done.code == 0, done.stderr
    assert (root / ".promptdeck" / "locks").is_dir()
    staged = git(root, "diff", "--staged", "--name-only")
    assert ".promptdeck/locks" not in staged and ".promptdeck/runs" not in staged
