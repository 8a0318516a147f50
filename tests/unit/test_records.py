"""Run records: ids, the gitignore, listing and loading, and a kill -9 losing nothing."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from promptdeck.core.errors import UsageError
from promptdeck.core.records.reader import list_runs, load_run, next_attempt
from promptdeck.core.records.writer import RunRecord, ensure_gitignore, new_run_id
from test_runner import make_workspace, script_config


def test_run_ids_sort_by_time_and_are_unique() -> None:
    ids = [new_run_id("1-2", "dev", now=1_700_000_000.0 + i * 0.000001) for i in range(50)]
    assert ids == sorted(ids)
    same_moment = {new_run_id("add-auth:2", "dev", now=1_700_000_000.0) for _ in range(200)}
    assert len(same_moment) == 200
    assert all(":" not in i and "/" not in i for i in same_moment)


def test_gitignore_is_created_appended_once(tmp_path: Path) -> None:
    assert ensure_gitignore(tmp_path)
    path = tmp_path / ".promptdeck" / ".gitignore"
    assert path.read_text() == "runs/\nexports/\nlocks/\n"
    assert not ensure_gitignore(tmp_path)
    path.write_text("cache/\n/runs")
    assert ensure_gitignore(tmp_path)
    assert path.read_text() == "cache/\n/runs\nexports/\nlocks/\n"


def _record(root: Path, story: str, phase: str, outcome: str | None) -> RunRecord:
    record = RunRecord.create(root, story, phase)
    record.write_meta({"story": story, "phase": phase, "attempt": 1, "pid": 2**22 + 1})
    record.append_stream(b'{"type": "system"}')
    if outcome is not None:
        record.write_result({"outcome": outcome, "signal": {"name": "X", "reason": "r"}})
    record.close()
    return record


def test_list_and_load_runs(tmp_path: Path) -> None:
    first = _record(tmp_path, "1-2", "dev", "failure")
    second = _record(tmp_path, "1-2", "dev", "success")
    other = _record(tmp_path, "1-3", "review", None)
    # An earlier version's dry-run folder left in the runs folder is never listed.
    leftover = tmp_path / ".promptdeck" / "runs" / "dry-run"
    leftover.mkdir()
    (leftover / "system.md").write_text("s")
    runs = list_runs(tmp_path)
    assert [r.id for r in runs] == [first.id, second.id, other.id]
    assert [r.id for r in list_runs(tmp_path, "1-2")] == [first.id, second.id]
    assert load_run(tmp_path, "last").id == other.id
    assert load_run(tmp_path, second.id[:-3]).id == second.id
    assert runs[2].outcome == "interrupted"
    row = runs[0].to_dict()
    assert (row["outcome"], row["signal"], row["reason"]) == ("failure", "X", "r")
    with pytest.raises(UsageError, match="no run"):
        load_run(tmp_path, "nope")
    with pytest.raises(UsageError, match="ambiguous"):
        load_run(tmp_path, first.id[:4])


def test_next_attempt_counts_runs_since_the_last_success(tmp_path: Path) -> None:
    assert next_attempt(tmp_path, "1-2", "dev") == 1
    _record(tmp_path, "1-2", "dev", "failure")
    _record(tmp_path, "1-2", "dev", "no-signal")
    assert next_attempt(tmp_path, "1-2", "dev") == 3
    _record(tmp_path, "1-2", "dev", "success")
    assert next_attempt(tmp_path, "1-2", "dev") == 1
    assert next_attempt(tmp_path, "1-2", "review") == 1


def test_prompt_files_are_written_exactly(tmp_path: Path) -> None:
    record = RunRecord.create(tmp_path, "1-2", "dev")
    system = "line one\r\nü — no trailing newline"
    record.write_prompt(system, "")
    assert (record.dir / "system.md").read_bytes() == system.encode("utf-8")
    assert (record.dir / "user.md").read_bytes() == b""


def test_a_symlink_planted_in_a_run_folder_is_replaced_not_written_through(
    tmp_path: Path,
) -> None:
    victim = tmp_path / "victim.txt"
    victim.write_text("precious")
    record = RunRecord.dry_run()
    (record.dir / "system.md").symlink_to(victim)
    (record.dir / "session.log").symlink_to(victim)
    record.write_prompt("the prompt", "the task")
    record.log("a note")
    assert victim.read_text() == "precious"
    assert not (record.dir / "system.md").is_symlink()
    assert (record.dir / "system.md").read_text() == "the prompt"
    assert record.write_error is not None


def test_runs_folder_or_gitignore_linking_outside_is_refused(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    project = tmp_path / "project"
    (project / ".promptdeck").mkdir(parents=True)
    (project / ".promptdeck" / "runs").symlink_to(outside)
    with pytest.raises(UsageError, match="outside the project"):
        RunRecord.create(project, "1-2", "dev")
    assert list(outside.iterdir()) == []
    (project / ".promptdeck" / "runs").unlink()
    (outside / "dotfile").write_text("mine\n")
    (project / ".promptdeck" / ".gitignore").symlink_to(outside / "dotfile")
    with pytest.raises(UsageError, match="outside the project"):
        ensure_gitignore(project)
    assert (outside / "dotfile").read_text() == "mine\n"


PROMPTDECK = [
    sys.executable,
    "-c",
    "import sys; from promptdeck.cli import main; sys.exit(main())",
]

AGENT = """
import os, sys, time
from pathlib import Path
for i in range(1, 51):
    print(f"line {i}", flush=True)
print("IMPLEMENTATION COMPLETE: 1.2", flush=True)
print("last line", flush=True)
pid = Path(sys.argv[0]).with_name("agent.pid")
pid.with_suffix(".tmp").write_text(str(os.getpid()))
pid.with_suffix(".tmp").replace(pid)  # whole or absent: the test's cleanup may read it any time
time.sleep(120)
"""


def test_kill_9_of_promptdeck_mid_run_loses_no_printed_line(tmp_path: Path) -> None:
    root = tmp_path / "ws"
    root.mkdir()
    make_workspace(root, config=script_config(AGENT, tmp_path))
    proc = subprocess.Popen(
        [*PROMPTDECK, "run", "1.2", "--phase", "dev", "--agent", "command", "--root", str(root)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    seen: list[str] = []
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 60
        # promptdeck prints a line only after recording it: once "last line" is on its stdout,
        # every line before it has been handed to the record.
        while time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            seen.append(line.rstrip("\n"))
            if seen[-1] == "last line":
                break
        assert seen and seen[-1] == "last line"
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
        pid_file = tmp_path / "agent.pid"
        if pid_file.exists():
            with contextlib.suppress(ProcessLookupError):
                os.killpg(int(pid_file.read_text()), signal.SIGKILL)
    (run,) = list_runs(root)
    stream = (run.dir / "stream.log").read_text().splitlines()
    assert stream == [
        *(f"line {i}" for i in range(1, 51)),
        "IMPLEMENTATION COMPLETE: 1.2",
        "last line",
    ]
    signals = [json.loads(s) for s in (run.dir / "signals.jsonl").read_text().splitlines()]
    assert [s["kind"] for s in signals] == ["implementation-complete"]
    assert (run.dir / "system.md").exists() and (run.dir / "meta.json").exists()
    assert run.result is None and run.outcome == "interrupted"


def test_kill_9_of_the_agent_is_a_crash_with_its_lines_kept(tmp_path: Path) -> None:
    from promptdeck.core.run.runner import start_run
    from test_runner import compose

    ws = make_workspace(tmp_path / "ws", config=script_config(AGENT, tmp_path))
    handle = start_run(ws, compose(ws), agent="command", use_git=False)
    pid_file = tmp_path / "agent.pid"
    deadline = time.monotonic() + 60
    while not pid_file.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(int(pid_file.read_text()), signal.SIGKILL)
    result = handle.wait(60)
    # The success signal was printed before the kill: it still decides.
    assert result.outcome == "success" and result.process_exit == -9
    stream = (result.run_dir / "stream.log").read_text().splitlines()
    assert stream[-1] == "last line" and len(stream) == 52


def test_next_attempt_does_not_count_cancelled_runs(tmp_path: Path) -> None:
    _record(tmp_path, "1-2", "dev", "failure")
    _record(tmp_path, "1-2", "dev", "cancelled")
    _record(tmp_path, "1-2", "dev", "cancelled")
    assert next_attempt(tmp_path, "1-2", "dev") == 2
