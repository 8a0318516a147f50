"""A run in progress: the thread that carries it, and the handle the faces hold.

:class:`RunSupervisor` is the run's thread, and small: the policy speaks before the launch
(:meth:`RunPolicy.before_launch`), the process is supervised by
:class:`promptdeck.core.run.supervise.ProcessSupervisor` with its output handed to the
:class:`StreamProcessor`, the policy settles and writes the result, and the end event wakes
every waiter. Whatever fails on the way, the waiter is never left hanging.
"""

from __future__ import annotations

import contextlib
import threading
import time
from dataclasses import field
from pathlib import Path

from ..agents.base import LaunchSpec
from ..lean_dataclass import dataclass
from ..records.schema import RunResult
from .locks import StoryLock
from .policy import ProcessFacts, RunPolicy
from .stream import RunEvent, StreamProcessor
from .supervise import ProcessSupervisor


@dataclass
class RunControl:
    """What the run's thread and its handle share: the cancel flag, the end, the result."""

    cancel: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    result: RunResult | None = None


class RunHandle:
    """A run in progress: :meth:`cancel` it, :meth:`wait` for its :class:`RunResult`."""

    def __init__(self, run_id: str, run_dir: Path, control: RunControl) -> None:
        self.run_id = run_id
        self.run_dir = run_dir
        self._control = control
        self.interrupted_by: int | None = None
        """The signal (SIGINT, SIGTERM, SIGHUP) that made promptdeck cancel the run, if any."""

    def cancel(self) -> None:
        """Ask the run to stop (SIGINT → SIGTERM → SIGKILL to its group); returns at once."""
        self._control.cancel.set()

    @property
    def done(self) -> bool:
        """True once the result is settled."""
        return self._control.done.is_set()

    def wait(self, timeout: float | None = None) -> RunResult:
        """Block until the run ends; returns its result.

        Raises:
            TimeoutError: ``timeout`` passed first.
        """
        if not self._control.done.wait(timeout):
            raise TimeoutError(f"run {self.run_id} still running after {timeout} s")
        assert self._control.result is not None
        return self._control.result


class RunSupervisor:
    """Carries one run on its own thread: the policy's warnings, the process, the settling.

    Args:
        policy: the run's decisions (warnings, outcome, git, record).
        processor: the stream's per-line work; its listener hears the run's events.
        control: shared with the :class:`RunHandle`.
        timeout: seconds before the process is stopped.
        cancel_grace: seconds to wait after SIGINT and after SIGTERM.
        lock: the story's lock, released once the result is out.
    """

    def __init__(
        self,
        *,
        policy: RunPolicy,
        processor: StreamProcessor,
        control: RunControl,
        timeout: float,
        cancel_grace: tuple[float, float],
        lock: StoryLock | None = None,
    ) -> None:
        self.policy = policy
        self.processor = processor
        self.record = policy.record
        self.control = control
        self.timeout = timeout
        self.cancel_grace = cancel_grace
        self.lock = lock
        self.process: ProcessSupervisor | None = None

    def start(self, name: str) -> None:
        """Run on a daemon thread of this name; returns at once."""
        threading.Thread(target=self.run, name=name, daemon=True).start()

    def run(self) -> None:
        """The whole run; a bug of promptdeck's ends it as ``crashed``, never hung."""
        try:
            self._run()
        except Exception as exc:  # never leave a waiter hanging on a bug
            with contextlib.suppress(Exception):
                self.record.log(f"internal error: {exc!r}")
            if not self.control.done.is_set():
                try:
                    self._settle(ProcessFacts(error=f"internal error: {exc}", crashed=True))
                except Exception as again:
                    message = f"internal error: {exc}; then: {again}"
                    self._publish(self.policy.result("crashed", message))

    def _run(self) -> None:
        self.policy.before_launch()
        spec = self.policy.prepared.spec
        try:
            # The launch's scope (codex: its profile link) lasts exactly as long as the process.
            with spec.scope() if spec.scope is not None else contextlib.nullcontext():
                facts = self._process(spec)
        except OSError as exc:
            facts = ProcessFacts(error=f"cannot prepare the launch: {exc}", launch_failed=True)
        self._settle(facts)

    def _process(self, spec: LaunchSpec) -> ProcessFacts:
        """Start, stream and wait: how the process ended."""
        self.process = ProcessSupervisor(
            spec,
            on_stdout=self.processor.stdout_chunk,
            on_stderr=self.processor.stderr_chunk,
            on_stream_end=self.processor.end_of_stream,
            cancel=self.control.cancel,
            deadline=self.policy.started + self.timeout,
            timeout=self.timeout,
            cancel_grace=self.cancel_grace,
            notice=self.processor.notice,
            log=self.record.log,
        )
        ended = self.process.run()
        if ended.launch_error is not None:
            return ProcessFacts(error=ended.launch_error, launch_failed=True)
        self.processor.finish()
        return ProcessFacts(returncode=ended.returncode)

    def _settle(self, facts: ProcessFacts) -> None:
        process = self.process
        facts = ProcessFacts(
            returncode=facts.returncode,
            error=facts.error,
            launch_failed=facts.launch_failed,
            crashed=facts.crashed,
            timed_out=process is not None and process.timed_out,
            cancelled=process is not None and process.cancelled,
        )
        self._publish(self.policy.settle(self.processor, facts))

    def _publish(self, result: RunResult) -> None:
        """Record and announce the result, then release every waiter, whatever fails."""
        try:
            result = self.policy.write(result)
            self.processor.emit(
                RunEvent("end", result.message, stream="promptdeck", result=result, at=time.time())
            )
        finally:
            with contextlib.suppress(Exception):
                self.record.close()
            if self.lock is not None:
                self.lock.release()
            self.control.result = result
            self.control.done.set()
