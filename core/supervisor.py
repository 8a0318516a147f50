"""Process supervision: one agent process from launch to reaped, and nothing about the run.

A run's agent and a capture's client are supervised alike, so it sits below both.
:class:`ProcessSupervisor` starts the agent in a process group of its own, feeds its stdin,
reads both pipes in chunks on reader threads, and stops it on a cancel or at its deadline —
SIGINT, then SIGTERM, then SIGKILL to the whole group, with a grace period before each step.
A watchdog process ends the group should promptdeck itself die without saying goodbye.

What the output means (:mod:`promptdeck.core.run.stream`), what the outcome is, what git does
and what is recorded (:mod:`promptdeck.core.run.policy`, :mod:`promptdeck.core.phases.outcome`) is
the run's policy; this module only hands the bytes on and says how the process ended.
"""

from __future__ import annotations

import contextlib
import os
import signal as signals_module
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import IO, Protocol

from .lean_dataclass import dataclass
from .processes import resolve_program

CANCEL_GRACE = (5.0, 5.0)
"""Seconds to wait after SIGINT, then after SIGTERM, before the next step."""
READER_JOIN_SECONDS = 5.0
READ_CHUNK = 64 * 1024
POLL_SECONDS = 0.05
"""How often the wait loop looks at the cancel flag and the deadline."""


@dataclass(frozen=True)
class ProcessExit:
    """How the supervised process ended.

    Attributes:
        returncode: the process's exit code (negative: the signal that ended it); None when
            it was not started or could not be reaped.
        launch_error: why the process could not be started, as one line; None when it ran.
    """

    returncode: int | None
    launch_error: str | None = None


class Launch(Protocol):
    """What the supervisor starts (a run's :class:`~promptdeck.core.agents.base.LaunchSpec`)."""

    @property
    def argv(self) -> Sequence[str]: ...
    @property
    def cwd(self) -> Path: ...
    @property
    def env(self) -> Mapping[str, str]: ...
    @property
    def stdin(self) -> bytes | None: ...


class ProcessSupervisor:
    """Runs one :class:`LaunchSpec` to its end, handing its output on as it arrives.

    Args:
        spec: what to launch.
        on_stdout: called with each chunk of stdout, from a reader thread.
        on_stderr: called with each chunk of stderr, from the other reader thread.
        on_stream_end: called once per pipe at its end, with True for stdout.
        cancel: set by the user to stop the process.
        deadline: the epoch time at which the process is stopped (a timeout).
        timeout: the time limit in seconds, as notices name it.
        cancel_grace: seconds after SIGINT, then after SIGTERM, before the next signal.
        notice: tells the user what the supervisor does (cancelling, escalating).
        log: writes a line to the run's log only.
        whole_env: ``spec.env`` is the process's whole environment (a capture's, which
            leaves out what could reach a real account); otherwise it is added to promptdeck's.
        end_group: kill the process group once the process has ended, so no helper it
            started outlives it (a capture's temporary home is removed next).

    Attributes:
        timed_out: the deadline stopped the process.
        cancelled: a cancel stopped the process.
    """

    def __init__(
        self,
        spec: Launch,
        *,
        on_stdout: Callable[[bytes], None],
        on_stderr: Callable[[bytes], None],
        on_stream_end: Callable[[bool], None],
        cancel: threading.Event,
        deadline: float,
        timeout: float,
        cancel_grace: tuple[float, float] = CANCEL_GRACE,
        notice: Callable[[str], None],
        log: Callable[[str], None],
        whole_env: bool = False,
        end_group: bool = False,
    ) -> None:
        self.spec = spec
        self.on_stdout = on_stdout
        self.on_stderr = on_stderr
        self.on_stream_end = on_stream_end
        self.cancel = cancel
        self.deadline = deadline
        self.timeout = timeout
        self.cancel_grace = cancel_grace
        self.notice = notice
        self.log = log
        self.whole_env = whole_env
        self.end_group = end_group
        self.timed_out = False
        self.cancelled = False

    def run(self) -> ProcessExit:
        """Start, stream and wait; returns once both pipes are drained and closed."""
        spec = self.spec
        # Resolved here too, whoever built the spec: the system's own search would try a
        # relative PATH entry (./bin) in the project the agent runs in.
        program = resolve_program(spec.argv[0], Path(spec.cwd).resolve()) if spec.argv else None
        if program is None:
            shown = spec.argv[0] if spec.argv else "(none)"
            where = (
                ""
                if os.sep in shown
                else " (looked for on absolute PATH entries outside the project only)"
            )
            return ProcessExit(None, f"agent binary not found: {shown}{where}")
        try:
            proc = subprocess.Popen(
                (program, *spec.argv[1:]),
                cwd=spec.cwd,
                env=dict(spec.env) if self.whole_env else {**os.environ, **spec.env},
                stdin=subprocess.PIPE if spec.stdin is not None else subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                start_new_session=True,
            )
        except FileNotFoundError:
            return ProcessExit(None, f"agent binary not found: {spec.argv[0]}")
        except OSError as exc:
            return ProcessExit(None, f"cannot start {spec.argv[0]}: {exc.strerror or exc}")
        self.log(f"started pid {proc.pid}: {' '.join(spec.argv[:3])} …")
        watchdog = start_watchdog(proc.pid)
        threads = [
            threading.Thread(target=self._read, args=(proc.stdout, True), daemon=True),
            threading.Thread(target=self._read, args=(proc.stderr, False), daemon=True),
        ]
        if spec.stdin is not None:
            threads.append(
                threading.Thread(target=_feed, args=(proc.stdin, spec.stdin), daemon=True)
            )
        for thread in threads:
            thread.start()
        while True:
            # Short waits, so a cancel or the deadline is acted on within 50 ms.
            with contextlib.suppress(subprocess.TimeoutExpired):
                proc.wait(timeout=POLL_SECONDS)
                break
            if self.cancel.is_set():
                self.cancelled = True
                self.notice("cancelling: SIGINT to the agent's process group")
                self._escalate(proc)
                break
            if time.time() >= self.deadline:
                self.timed_out = True
                self.notice(f"timeout after {self.timeout:g} s: stopping the agent")
                self._escalate(proc)
                break
        if self.end_group:
            _signal_group(proc, signals_module.SIGKILL)
        for thread in threads[:2]:
            thread.join(READER_JOIN_SECONDS)
            if thread.is_alive():
                # A grandchild still holds the pipe open: end the whole group.
                _signal_group(proc, signals_module.SIGKILL)
                thread.join(READER_JOIN_SECONDS)
        stop_watchdog(watchdog)
        return ProcessExit(proc.returncode)

    def _read(self, pipe: IO[bytes] | None, is_stdout: bool) -> None:
        if pipe is None:
            return
        handle = self.on_stdout if is_stdout else self.on_stderr
        read = getattr(pipe, "read1", pipe.read)
        try:
            # Chunks, not lines: a line without an end must not be held whole in memory.
            # The pipe is closed under the reader when a cancelled group is killed.
            with contextlib.suppress(OSError, ValueError):
                while True:
                    data = read(READ_CHUNK)
                    if not data:
                        break
                    handle(data)
        finally:
            with contextlib.suppress(Exception):
                self.on_stream_end(is_stdout)
            pipe.close()

    def _escalate(self, proc: subprocess.Popen[bytes]) -> None:
        steps = (
            (signals_module.SIGINT, self.cancel_grace[0], "SIGTERM"),
            (signals_module.SIGTERM, self.cancel_grace[1], "SIGKILL"),
            (signals_module.SIGKILL, READER_JOIN_SECONDS, ""),
        )
        for sig, grace, following in steps:
            _signal_group(proc, sig)
            try:
                proc.wait(timeout=grace)
                return
            except subprocess.TimeoutExpired:
                if following:
                    self.notice(f"agent still running after {grace:g} s: sending {following}")


def _feed(pipe: IO[bytes] | None, data: bytes) -> None:
    if pipe is None:
        return
    # An agent may exit, or close its stdin, before reading all of it: not an error here;
    # its outcome is decided by what it printed.
    with contextlib.suppress(OSError):
        pipe.write(data)
        pipe.close()


def _signal_group(proc: subprocess.Popen[bytes], sig: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, sig)


_WATCHDOG = """
import os, signal, sys, time
group = int(sys.argv[1])
try:
    word = os.read(0, 1)
except OSError:
    word = b""
if word != b"q":
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(group, sig)
        except OSError:
            break
        time.sleep(3)
"""


def start_watchdog(group: int) -> subprocess.Popen[bytes] | None:
    """A tiny process that ends the agent's process group when promptdeck ends without
    saying goodbye (``kill -9``, a crash): it waits on a pipe only promptdeck holds; end of
    file without the ``q`` written at a normal end means promptdeck is gone."""
    try:
        # Isolated (-I: no current folder on the import path, no PYTHON* variables, no user
        # site) and started from "/": with -c, Python would otherwise import a repository's
        # own signal.py from the folder promptdeck was started in.
        return subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _WATCHDOG, str(group)],
            cwd="/",
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
        )
    except OSError:
        return None


def stop_watchdog(watchdog: subprocess.Popen[bytes] | None) -> None:
    """Tell the watchdog promptdeck ended the run itself, and reap it."""
    if watchdog is None or watchdog.stdin is None:
        return
    with contextlib.suppress(OSError):
        watchdog.stdin.write(b"q")
        watchdog.stdin.close()
    with contextlib.suppress(subprocess.TimeoutExpired):
        watchdog.wait(5)
