"""Success only when it is saved: an unwritable record is exit 7, an ``OSError`` is one line
and exit 2 with no empty run folder left, one run per story at a time (a lock a ``kill -9``
does not leave stuck), a signal naming another story does not count, and un-ticking a task
is a rewrite of the story file."""

from __future__ import annotations

import json
import signal
from pathlib import Path

from _run_helpers import (
    STORY,
    STORY_REL,
    agent_files,
    cli,
    cloned_workspace,
    finish,
    git,
    kill_group,
    one_line,
    run_folders,
    start_cli,
    wait_until,
)

SAY = r"""
import sys
print(sys.argv[3] if len(sys.argv) > 3 else "", flush=True)
"""


def _say(tmp_path: Path, line: str) -> Path:
    files = {STORY_REL: STORY, **agent_files(SAY)}
    config = files[".promptdeck/config.toml"].replace(
        '"{root}"]', '"{root}", ' + json.dumps(line) + "]"
    )
    files[".promptdeck/config.toml"] = config
    return cloned_workspace(tmp_path, files)


def test_a_signal_naming_another_story_does_not_count(tmp_path: Path) -> None:
    root = _say(tmp_path, "IMPLEMENTATION COMPLETE: 9-9")
    done = cli(root, "run", "1-1", "--phase", "dev")
    assert done.code == 5, done.stderr
    assert "names story 9-9, not 1-1" in done.stderr
    assert git(root, "diff", "--staged", "--name-only") == ""
    row = json.loads(cli(root, "runs", "--json").stdout)["runs"][-1]
    assert row["outcome"] == "no-signal"


def test_every_form_of_the_story_key_counts(tmp_path: Path) -> None:
    root = _say(tmp_path, "IMPLEMENTATION COMPLETE: 1_1")
    done = cli(root, "run", "1-1", "--phase", "dev")
    assert done.code == 0, done.stderr


UNTICK = r"""
import sys, pathlib
path = pathlib.Path(sys.argv[2]) / "_bmad-output/implementation-artifacts/1-1-parse-lines.md"
path.write_text(path.read_text().replace("- [x] Read the format", "- [ ] Read the format"))
print("IMPLEMENTATION COMPLETE: " + sys.argv[1], flush=True)
"""


def test_unticking_a_task_is_flagged_as_a_rewrite(tmp_path: Path) -> None:
    root = cloned_workspace(tmp_path, {STORY_REL: STORY, **agent_files(UNTICK)})
    done = cli(root, "run", "1-1", "--phase", "dev")
    assert "story files are append-only" in done.stderr
    kept = run_folders(root)[-1] / "story.before.md"
    # The version the agent started from: dev's start marked the story in-progress.
    assert kept.read_text(encoding="utf-8") == STORY.replace(
        "Status: ready-for-dev", "Status: in-progress"
    )
    result = json.loads((run_folders(root)[-1] / "result.json").read_text())
    assert result["story_rewritten"] is True


HANG = r"""
import sys, time, os, pathlib, signal
signal.signal(signal.SIGINT, signal.SIG_DFL)
pathlib.Path(sys.argv[2], ".promptdeck", "agent.pid").write_text(str(os.getpid()))
sys.stdout.write("working on it, no newline yet")
sys.stdout.flush()
time.sleep(600)
"""


def test_one_run_per_story_and_a_killed_run_leaves_no_stuck_lock(tmp_path: Path) -> None:
    root = cloned_workspace(tmp_path, {STORY_REL: STORY, **agent_files(HANG)})
    first = start_cli(root, "run", "1-1", "--phase", "dev")
    try:
        wait_until(lambda: (root / ".promptdeck" / "agent.pid").exists(), "the first agent")
        second = cli(root, "run", "1.1", "--phase", "review")
        assert second.code == 7
        line = one_line(second)
        assert "story 1-1 is being run by another promptdeck (pid " in line
        assert len(run_folders(root)) == 1  # the refused run left no folder
    finally:
        kill_group(first)
    # The kernel dropped the lock with the killed process: the story runs again.
    (root / ".promptdeck" / "agent.py").write_text(
        "import sys\nprint('REVIEW PASSED: ' + sys.argv[1])\n", encoding="utf-8"
    )
    # The script the config runs has changed: refused until it is trusted again.
    assert cli(root, "run", "1-1", "--phase", "review", "--no-git").code == 10
    assert cli(root, "trust").code == 0
    third = cli(root, "run", "1-1", "--phase", "review", "--no-git")
    assert third.code == 0, third.stderr


def test_ctrl_c_during_run_exits_130(tmp_path: Path) -> None:
    root = cloned_workspace(tmp_path, {STORY_REL: STORY, **agent_files(HANG)})
    proc = start_cli(root, "run", "1-1", "--phase", "dev")
    try:
        wait_until(lambda: (root / ".promptdeck" / "agent.pid").exists(), "the agent")
        proc.send_signal(signal.SIGINT)
        done = finish(proc)
    finally:
        kill_group(proc)
    assert done.code == 130, done.stderr
    assert done.lines[-1].startswith("promptdeck: interrupted (SIGINT): run ")
    result = json.loads((run_folders(root)[-1] / "result.json").read_text())
    assert result["outcome"] == "cancelled"


LOUD = r"""
import sys
chunk = "x" * 65536
for _ in range(64):
    sys.stdout.write(chunk)
print()
print("IMPLEMENTATION COMPLETE: " + sys.argv[1], flush=True)
"""


def test_a_record_that_cannot_be_written_is_not_a_success(tmp_path: Path) -> None:
    root = cloned_workspace(tmp_path, {STORY_REL: STORY, **agent_files(LOUD)})
    # The agent's 4 MB line cannot be recorded under a 1 MB file-size limit: like a full disk.
    done = cli(root, "run", "1-1", "--phase", "dev", "--no-git", file_size=1024 * 1024)
    assert done.code == 7, done.stderr
    assert "not saved: the run record could not be written" in done.lines[-1]


def test_an_unwritable_runs_folder_is_one_line_and_no_folder_is_left(tmp_path: Path) -> None:
    root = cloned_workspace(tmp_path, {STORY_REL: STORY, **agent_files(SAY)})
    (root / ".promptdeck" / "runs").write_text("not a folder\n", encoding="utf-8")
    done = cli(root, "run", "1-1", "--phase", "dev")
    assert done.code == 2
    assert ".promptdeck/runs" in one_line(done)
    assert (root / ".promptdeck" / "runs").is_file()


def test_a_prompt_that_cannot_be_written_leaves_no_empty_run_folder(tmp_path: Path) -> None:
    root = cloned_workspace(tmp_path, {STORY_REL: STORY, **agent_files(SAY)})
    # A file-size limit below the prompt's size: writing system.md fails (EFBIG).
    done = cli(root, "run", "1-1", "--phase", "dev", file_size=2048)
    assert done.code == 2
    assert "File too large" in one_line(done)
    assert run_folders(root) == []


def test_a_symlinked_promptdeck_folder_never_gets_a_run_or_lock_outside(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    root = cloned_workspace(tmp_path, {STORY_REL: STORY})
    (root / ".promptdeck").symlink_to("../outside")  # as a cloned repository can hold it
    for flow in (("--phase", "dev"), ("--auto",)):
        done = cli(root, "run", "1-1", *flow, "--agent", "replay")
        assert done.code == 2
        assert "leads outside the project" in done.lines[-1]
        assert all(line.startswith("promptdeck: ") for line in done.lines)
    assert list(outside.iterdir()) == []
