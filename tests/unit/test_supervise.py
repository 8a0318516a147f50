"""Process supervision on real processes: output handed on, stdin fed, a missing binary, a
cancel escalated from SIGINT to SIGTERM, a deadline."""

from __future__ import annotations

import signal
import sys
import threading
import time
from pathlib import Path

from promptdeck.core.agents.base import LaunchSpec
from promptdeck.core.run.supervise import ProcessExit, ProcessSupervisor


class Seen:
    """What the supervisor handed on."""

    def __init__(self) -> None:
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.ended: list[bool] = []
        self.notices: list[str] = []
        self.logs: list[str] = []


def supervise(
    tmp_path: Path,
    code: str,
    *,
    stdin: bytes | None = None,
    cancel: threading.Event | None = None,
    timeout: float = 60.0,
    argv: tuple[str, ...] | None = None,
    cancel_on_output: bool = False,
) -> tuple[ProcessSupervisor, ProcessExit, Seen]:
    seen = Seen()
    cancel = cancel or threading.Event()
    stopper = cancel

    def on_stdout(data: bytes) -> None:
        seen.stdout.extend(data)
        if cancel_on_output:
            stopper.set()

    spec = LaunchSpec(argv=argv or (sys.executable, "-c", code), cwd=tmp_path, stdin=stdin)
    supervisor = ProcessSupervisor(
        spec,
        on_stdout=on_stdout,
        on_stderr=seen.stderr.extend,
        on_stream_end=seen.ended.append,
        cancel=cancel,
        deadline=time.time() + timeout,
        timeout=timeout,
        cancel_grace=(0.5, 0.5),
        notice=seen.notices.append,
        log=seen.logs.append,
    )
    return supervisor, supervisor.run(), seen


def test_both_pipes_are_handed_on_and_stdin_is_fed(tmp_path: Path) -> None:
    code = (
        "import sys; data = sys.stdin.read(); print('out:' + data); "
        "print('err', file=sys.stderr); sys.exit(3)"
    )
    supervisor, ended, seen = supervise(tmp_path, code, stdin=b"hello")
    assert ended == ProcessExit(3)
    assert bytes(seen.stdout) == b"out:hello\n"
    assert bytes(seen.stderr) == b"err\n"
    assert sorted(seen.ended) == [False, True]
    assert not supervisor.cancelled and not supervisor.timed_out
    assert seen.logs and seen.logs[0].startswith("started pid ")


def test_a_missing_binary_is_a_launch_error_not_an_exception(tmp_path: Path) -> None:
    _, ended, seen = supervise(tmp_path, "", argv=(str(tmp_path / "no-such-agent"),))
    assert ended.returncode is None
    assert ended.launch_error == f"agent binary not found: {tmp_path / 'no-such-agent'}"
    assert seen.ended == []


def test_a_cancel_ignored_at_sigint_escalates_to_sigterm(tmp_path: Path) -> None:
    code = (
        "import signal, sys, time; signal.signal(signal.SIGINT, signal.SIG_IGN); "
        "print('ready', flush=True); time.sleep(60)"
    )
    # Cancelled once the script has said it ignores SIGINT, not before.
    supervisor, ended, seen = supervise(tmp_path, code, cancel_on_output=True)
    assert supervisor.cancelled and not supervisor.timed_out
    assert ended.returncode == -signal.SIGTERM
    assert seen.notices[0] == "cancelling: SIGINT to the agent's process group"
    assert "agent still running after 0.5 s: sending SIGTERM" in seen.notices


def test_the_deadline_stops_the_process(tmp_path: Path) -> None:
    supervisor, ended, seen = supervise(tmp_path, "import time; time.sleep(60)", timeout=0.2)
    assert supervisor.timed_out and not supervisor.cancelled
    assert ended.returncode == -signal.SIGINT
    assert seen.notices == ["timeout after 0.2 s: stopping the agent"]
