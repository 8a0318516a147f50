"""The status write-back rewrites only the project's own files, whole or not at all, and says
so when it cannot: a ``sprint-status.yaml`` that is a symlink out of the project is refused
(exit 11, the outside file untouched), a file swapped between the read and the write is
refused, and a ``kill -9`` in the middle of the write leaves the old file byte for byte."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _run_helpers import STORY, STORY_REL, agent_files, cli, cloned_workspace, git_env, wait_until
from promptdeck.core.project.rewrites import RewriteRefused, read_for_rewrite, rewrite_file

SPRINT_REL = "_bmad-output/implementation-artifacts/sprint-status.yaml"
SPRINT = (
    "# sprint status, kept by hand\r\ndevelopment_status:\r\n"
    "  epic-1: in-progress\r\n  1-1-parse-lines: ready-for-dev  # next\r\n"
)
SUCCEED = 'print("IMPLEMENTATION COMPLETE: 1.1", flush=True)\n'


def test_a_sprint_status_linked_out_of_the_project_is_refused_and_the_run_fails(
    tmp_path: Path,
) -> None:
    outside = tmp_path / "users-own.yaml"
    outside.write_text("development_status:\n  1-1-parse-lines: ready-for-dev\n")
    before = outside.read_bytes()
    root = cloned_workspace(tmp_path, {STORY_REL: STORY, **agent_files(SUCCEED)})
    (root / SPRINT_REL).symlink_to(outside)
    done = cli(root, "run", "1-1", "--phase", "dev", "--no-git")
    assert done.code == 11, done.stderr
    assert outside.read_bytes() == before
    failed = [line for line in done.lines if "status write-back failed" in line]
    assert len(failed) == 1 and "sprint-status.yaml" in failed[0] and "symlink" in failed[0]
    assert "status-failed" in done.stderr
    # The story file itself is the project's: its status is still written.
    assert "Status: review" in (root / STORY_REL).read_text()


def _read(root: Path) -> tuple[Path, bytes]:
    path = root / SPRINT_REL
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(SPRINT.encode())
    return path, path.read_bytes()


@pytest.mark.parametrize("swap", ["symlink", "content", "folder"])
def test_a_file_swapped_between_read_and_write_is_never_written(tmp_path: Path, swap: str) -> None:
    root = (tmp_path / "project").resolve()
    path, original = _read(root)
    outside = tmp_path / "outside"
    outside.mkdir()
    secret = outside / "sprint-status.yaml"
    secret.write_bytes(b"the user's own file\n")
    read = read_for_rewrite(path, root)
    assert not isinstance(read, type(None)) and hasattr(read, "identity"), read
    # What an agent-left process does between promptdeck's read and its write.
    if swap == "symlink":
        path.unlink()
        path.symlink_to(secret)
    elif swap == "content":
        path.write_bytes(original.replace(b"hand", b"HAND"))
    else:
        folder = path.parent
        folder.rename(root / "moved")
        folder.symlink_to(outside, target_is_directory=True)
    with pytest.raises(RewriteRefused) as refused:
        rewrite_file(path, root, b"development_status: {}\n", read.identity, shown=SPRINT_REL)
    assert str(refused.value).startswith(f"{SPRINT_REL}: ")
    assert secret.read_bytes() == b"the user's own file\n"
    assert [p.name for p in outside.iterdir()] == ["sprint-status.yaml"]


def test_a_rewrite_keeps_the_mode_and_every_untouched_byte(tmp_path: Path) -> None:
    root = (tmp_path / "project").resolve()
    path, original = _read(root)
    path.chmod(0o640)
    read = read_for_rewrite(path, root)
    assert hasattr(read, "identity"), read
    new = original.replace(b"ready-for-dev", b"review")
    rewrite_file(path, root, new, read.identity)
    assert path.read_bytes() == new
    assert path.stat().st_mode & 0o777 == 0o640
    assert [p.name for p in path.parent.iterdir()] == ["sprint-status.yaml"]


PAUSED_WRITE_BACK = textwrap.dedent(
    """
    import os, sys, time
    from pathlib import Path
    from promptdeck.core.plans.catalog import load_catalog
    from promptdeck.core.plans.writeback import write_back
    from promptdeck.core.project.workspace import open_workspace

    marker = Path(sys.argv[2])
    real_fsync = os.fsync

    def paused_fsync(descriptor):
        # The new text is in the temporary file: the moment a kill hurts most.
        real_fsync(descriptor)
        marker.write_text("writing")
        time.sleep(600)

    os.fsync = paused_fsync
    workspace = open_workspace(Path(sys.argv[1]))
    write_back(workspace, load_catalog(workspace).find("1-1"), "dev", True)
    """
)


def test_kill_9_during_the_write_back_leaves_the_old_sprint_status_byte_for_byte(
    tmp_path: Path,
) -> None:
    root = cloned_workspace(tmp_path, {STORY_REL: STORY, SPRINT_REL: SPRINT})
    before = (root / SPRINT_REL).read_bytes()
    story_before = (root / STORY_REL).read_bytes()
    marker = tmp_path / "writing"
    proc = subprocess.Popen(
        [sys.executable, "-c", PAUSED_WRITE_BACK, str(root), str(marker)],
        env={**git_env(tmp_path / "home"), "PYTHONPATH": os.pathsep.join(sys.path)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        wait_until(lambda: marker.exists() or proc.poll() is not None, "the paused write-back")
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert (root / SPRINT_REL).read_bytes() == before
    assert (root / STORY_REL).read_bytes() == story_before
    # Only the temporary file is left beside it; nothing reads it as a story or a status.
    left = sorted(p.name for p in (root / SPRINT_REL).parent.iterdir())
    assert [name for name in left if name.endswith(".promptdeck-tmp")] != []
    assert cli(root, "stories", "--json").code == 0
