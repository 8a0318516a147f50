"""A cloned repository's links inside ``.promptdeck/`` never steer promptdeck's own writes: a
``.gitignore`` linked to ``.git/config`` is never appended to (not even by ``--dry-run``), and a
``runs`` folder linked to a tracked folder never receives run records a commit would take. Each
is refused in one line (exit 2) before anything is written."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from _run_helpers import STORY, STORY_REL, agent_files, cli, cloned_workspace, git
from promptdeck.core.errors import UsageError
from promptdeck.core.records.writer import RunRecord, ensure_gitignore

AGENT = r"""
import sys, pathlib
path = pathlib.Path(sys.argv[2]) / "_bmad-output/implementation-artifacts/1-1-parse-lines.md"
path.write_text(path.read_text().replace("- [ ] Write the parser", "- [x] Write the parser"))
print("IMPLEMENTATION COMPLETE: " + sys.argv[1], flush=True)
"""


def _committed_link(root: Path, rel: str, target: str) -> None:
    """``rel`` as a symlink to ``target``, committed: as a cloned repository holds it."""
    link = root / rel
    link.parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, link)
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "links")


def _refused(done, rel: str) -> None:  # type: ignore[no-untyped-def]
    assert done.code == 2, done.stderr
    assert "Traceback" not in done.stderr
    assert all(line.startswith("promptdeck: ") for line in done.lines), done.stderr
    assert rel in done.lines[-1] and "symbolic link" in done.lines[-1], done.lines[-1]


@pytest.mark.parametrize("flow", [("--dry-run",), ()], ids=["dry-run", "run"])
def test_a_gitignore_linked_to_git_config_is_never_appended_to(
    tmp_path: Path, flow: tuple[str, ...]
) -> None:
    root = cloned_workspace(tmp_path, {STORY_REL: STORY, **agent_files(AGENT)})
    _committed_link(root, ".promptdeck/.gitignore", "../.git/config")
    before = (root / ".git" / "config").read_bytes()
    head = git(root, "rev-parse", "HEAD")
    done = cli(root, "run", "1-1", "--phase", "dev", *flow)
    if flow:
        # A dry run writes nothing into the project: the link is never followed, nor refused.
        assert done.code == 0, done.stderr
    else:
        _refused(done, ".promptdeck/.gitignore")
    assert (root / ".git" / "config").read_bytes() == before
    assert git(root, "rev-parse", "HEAD") == head
    git(root, "status")  # git still reads its config


def test_a_runs_folder_linked_to_a_tracked_folder_gets_no_record(tmp_path: Path) -> None:
    files = {STORY_REL: STORY, "docs/records/README.md": "# Records\n", **agent_files(AGENT)}
    root = cloned_workspace(tmp_path, files)
    _committed_link(root, ".promptdeck/runs", "../docs/records")
    head = git(root, "rev-parse", "HEAD")
    done = cli(root, "run", "1-1", "--phase", "dev")
    _refused(done, ".promptdeck/runs")
    assert sorted(p.name for p in (root / "docs" / "records").iterdir()) == ["README.md"]
    assert git(root, "rev-parse", "HEAD") == head
    assert git(root, "diff", "--cached", "--name-only") == ""


def test_a_promptdeck_folder_linked_inside_the_project_is_refused(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / "docs" / "state").mkdir(parents=True)
    (root / ".promptdeck").symlink_to("docs/state")
    with pytest.raises(UsageError, match=r"\.promptdeck is a symbolic link"):
        RunRecord.create(root, "1-2", "dev")
    with pytest.raises(UsageError, match=r"\.promptdeck is a symbolic link"):
        ensure_gitignore(root)
    assert list((root / "docs" / "state").iterdir()) == []


def test_an_inner_link_at_any_depth_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    root = tmp_path / "project"
    (root / ".promptdeck" / "runs").mkdir(parents=True)
    (root / "notes.txt").write_text("mine\n", encoding="utf-8")
    (root / "elsewhere").mkdir()
    (root / ".promptdeck" / ".gitignore").symlink_to("../notes.txt")
    with pytest.raises(UsageError, match=r"\.promptdeck/\.gitignore is a symbolic link"):
        ensure_gitignore(root)
    assert (root / "notes.txt").read_text(encoding="utf-8") == "mine\n"
    (root / ".promptdeck" / ".gitignore").unlink()
    (root / ".promptdeck" / "runs" / "dry-run").symlink_to("../../elsewhere")
    # A dry run writes into a temporary folder of its own, never the project's runs folder.
    record = RunRecord.dry_run()
    record.write_prompt("system", "user")
    assert not record.dir.resolve().is_relative_to(root.resolve())
    assert (record.dir / "system.md").read_text() == "system"
    assert list((root / "elsewhere").iterdir()) == []
