"""A ``kill -9`` in the middle of a write-back leaves a temporary file of promptdeck's own
naming beside the file; the next write-back in that folder sweeps it — and only it: a file of
the user's, or the temporary file of a rewrite still under way in a live process, stays."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

from _run_helpers import STORY, STORY_REL, cloned_workspace, git_env, wait_until
from test_write_back import PAUSED_WRITE_BACK, SPRINT, SPRINT_REL

WRITE_BACK = textwrap.dedent(
    """
    import sys
    from pathlib import Path
    from promptdeck.core.plans.catalog import load_catalog
    from promptdeck.core.plans.writeback import write_back
    from promptdeck.core.project.workspace import open_workspace

    workspace = open_workspace(Path(sys.argv[1]))
    write_back(workspace, load_catalog(workspace).find("1-1"), "dev", True)
    """
)


def _python(script: str, *args: str, home: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-c", script, *args],
        env={**git_env(home), "PYTHONPATH": os.pathsep.join(sys.path)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".promptdeck-tmp"))


def test_the_next_write_back_sweeps_what_a_killed_one_left(tmp_path: Path) -> None:
    root = cloned_workspace(tmp_path, {STORY_REL: STORY, SPRINT_REL: SPRINT})
    folder = (root / SPRINT_REL).parent
    marker = tmp_path / "writing"
    proc = _python(PAUSED_WRITE_BACK, str(root), str(marker), home=tmp_path / "home")
    try:
        wait_until(lambda: marker.exists() or proc.poll() is not None, "the paused write-back")
        assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
        os.kill(proc.pid, signal.SIGKILL)
    finally:
        proc.kill()
        proc.wait(timeout=30)
    assert _leftovers(folder) != []
    # Files that only look alike: the user's own, and one of a rewrite under way (this
    # process is alive); neither is promptdeck's to remove.
    users = folder / ".sprint-status.yaml.notes.promptdeck-tmp"
    users.write_text("mine\n", encoding="utf-8")
    under_way = folder / f".sprint-status.yaml.{os.getpid()}-0123abcd.promptdeck-tmp"
    under_way.write_text("being written\n", encoding="utf-8")
    kept = sorted([users.name, under_way.name])

    again = _python(WRITE_BACK, str(root), home=tmp_path / "home")
    _, err = again.communicate(timeout=60)
    assert again.returncode == 0, err.decode()
    assert _leftovers(folder) == kept
    assert "1-1-parse-lines: review" in (root / SPRINT_REL).read_text(encoding="utf-8")


def test_an_old_leftover_without_a_process_id_is_swept_too(tmp_path: Path) -> None:
    root = cloned_workspace(tmp_path, {STORY_REL: STORY, SPRINT_REL: SPRINT})
    folder = (root / SPRINT_REL).parent
    old = folder / ".sprint-status.yaml.0badc0de.promptdeck-tmp"
    old.write_text("half a file\n", encoding="utf-8")
    os.utime(old, (1_000_000_000, 1_000_000_000))
    done = _python(WRITE_BACK, str(root), home=tmp_path / "home")
    _, err = done.communicate(timeout=60)
    assert done.returncode == 0, err.decode()
    assert _leftovers(folder) == []
