"""Bounded memory and clean ends: an agent's endless line does not grow promptdeck's memory,
a ``kill -9`` of promptdeck ends its agent and keeps the unfinished last line, and hostile
input (non-UTF-8 stdin, a NUL in a config path, TOML nested 200,000 deep) is one line and
exit 2. Exports never follow a symlink out of the project."""

from __future__ import annotations

import os
import signal
from pathlib import Path

import pytest
from _run_helpers import (
    STORY,
    STORY_REL,
    agent_files,
    cli,
    cloned_workspace,
    kill_group,
    one_line,
    pid_alive,
    run_folders,
    start_cli,
    wait_until,
)

ENDLESS = r"""
import sys
chunk = "y" * (1024 * 1024)
for _ in range(300):
    sys.stdout.write(chunk)
sys.stdout.write("\nIMPLEMENTATION COMPLETE: " + sys.argv[1] + "\n")
"""


def test_a_300_mb_line_fits_in_a_small_address_space(tmp_path: Path) -> None:
    root = cloned_workspace(tmp_path, {STORY_REL: STORY, **agent_files(ENDLESS)})
    # 768 MB of address space: promptdeck's threads and libraries fit, a 300 MB line held
    # whole (and decoded, and copied) would not.
    done = cli(root, "run", "1-1", "--phase", "dev", "--no-git", memory=768 * 1024**2)
    assert done.code == 0, done.stderr[-2000:]
    assert "more bytes of this line are kept in stream.log" in done.stdout
    stream = run_folders(root)[-1] / "stream.log"
    assert stream.stat().st_size == 300 * 1024 * 1024 + len("\nIMPLEMENTATION COMPLETE: 1.1\n")


HANG = r"""
import os, sys, time, pathlib
pathlib.Path(sys.argv[2], ".promptdeck", "agent.pid").write_text(str(os.getpid()))
sys.stdout.write("half a line, then silence")
sys.stdout.flush()
time.sleep(600)
"""


def test_kill_9_of_promptdeck_ends_the_agent_and_keeps_the_partial_line(tmp_path: Path) -> None:
    root = cloned_workspace(tmp_path, {STORY_REL: STORY, **agent_files(HANG)})
    proc = start_cli(root, "run", "1-1", "--phase", "dev", "--no-git")
    pid_file = root / ".promptdeck" / "agent.pid"
    try:
        wait_until(pid_file.exists, "the agent to start")
        wait_until(
            lambda: any((d / "stream.log").exists() for d in run_folders(root)), "the stream"
        )
        stream = run_folders(root)[-1] / "stream.log"
        wait_until(lambda: stream.read_bytes() == b"half a line, then silence", "the line")
        agent = int(pid_file.read_text())
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
        wait_until(lambda: not pid_alive(agent), "the orphaned agent to end", seconds=30)
    finally:
        kill_group(proc)
    assert stream.read_bytes() == b"half a line, then silence"


def test_chat_with_non_utf8_stdin_is_one_line(tmp_path: Path) -> None:
    root = cloned_workspace(
        tmp_path,
        {STORY_REL: STORY, ".promptdeck/config.toml": '[agent]\ndefault = "replay"\n'},
    )
    done = cli(root, "chat", "1-1", stdin=b"\xff\xfe not text\n")
    assert done.code == 2
    assert "stdin is not UTF-8 text" in done.lines[-1]
    assert all(line.startswith("promptdeck: ") for line in done.lines)
    assert run_folders(root) == []


@pytest.mark.parametrize(
    ("config", "said"),
    [
        ('[paths]\nrules = "rules\\u0000.md"\n', "paths.rules: text without a NUL byte"),
        ('[agent]\nclaude_bin = "cla\\u0000ude"\n', "agent.claude_bin: text without a NUL"),
        ("x = " + "[" * 200_000 + "]" * 200_000 + "\n", "nested less deeply"),
        ("a" + ".a" * 100_000 + " = 1\n", "nested less deeply"),
    ],
    ids=["nul-in-path", "nul-in-binary", "arrays-200k-deep", "tables-100k-deep"],
)
def test_hostile_config_is_one_line_exit_2(tmp_path: Path, config: str, said: str) -> None:
    root = cloned_workspace(tmp_path, {STORY_REL: STORY, ".promptdeck/config.toml": config})
    for args in (("stories",), ("run", "1-1", "--phase", "dev", "--agent", "replay")):
        done = cli(root, *args)
        assert done.code == 2
        assert said in one_line(done)


@pytest.mark.parametrize("kind", ["fifo", "symlink-outside", "too-large"])
def test_a_config_that_is_no_plain_file_is_refused_unread(tmp_path: Path, kind: str) -> None:
    root = cloned_workspace(tmp_path, {STORY_REL: STORY})
    config = root / ".promptdeck" / "config.toml"
    config.parent.mkdir(exist_ok=True)
    outside = tmp_path / "outside.toml"
    # A canary: were it read, its invalid key would be reported instead.
    outside.write_text("[canary]\nread = true\n", encoding="utf-8")
    if kind == "fifo":
        os.mkfifo(config)  # opened blocking, this would hang every command
    elif kind == "symlink-outside":
        os.symlink(outside, config)
    else:
        config.write_text("# padding\n" * 200_000, encoding="utf-8")
    said = {"fifo": "FIFO", "symlink-outside": "outside-project", "too-large": "too-large"}[kind]
    done = cli(root, "stories")
    assert done.code == 2
    assert said in one_line(done) and "canary" not in one_line(done)


def test_export_never_follows_a_symlink_out_of_the_project(tmp_path: Path) -> None:
    from promptdeck.core.errors import UsageError
    from promptdeck.core.prompt.export import write_export

    root = cloned_workspace(tmp_path, {STORY_REL: STORY})
    outside = tmp_path / "outside"
    outside.mkdir()
    (root / ".promptdeck").mkdir(exist_ok=True)
    os.symlink(outside, root / ".promptdeck" / "exports")
    files = {"system.md": "s", "user.md": "u"}
    for folder in (
        root / ".promptdeck" / "exports" / "1-1-dev",
        root / ".promptdeck" / "exports",
        root / ".." / "elsewhere",
    ):
        with pytest.raises(UsageError, match="leads outside the project"):
            write_export(folder, files, root=root)
    assert list(outside.iterdir()) == []
    assert not (tmp_path / "elsewhere").exists()
    written = write_export(root / "exports-here", files, root=root)
    assert [p.name for p in written] == ["system.md", "user.md"]
