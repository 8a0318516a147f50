"""What a run looks like on a terminal, and waiting for one: shared by ``run`` and ``chat``.

Agent text goes to stdout (signals coloured on a terminal), tool calls and promptdeck's own
notices to stderr, one summary line at the end; every shown text passes the terminal guard.
Waiting turns Ctrl-C, SIGTERM and SIGHUP into a cancel of the agent's process group and, once
the run has settled, into the shell's exit code (128 + the signal).
"""

from __future__ import annotations

import dataclasses
import os
import signal
import sys
from typing import TextIO, assert_never

from ..core.agents import agent_label
from ..core.errors import Interrupted
from ..core.phases import match_line
from ..core.project import Workspace
from ..core.records import RunResult
from ..core.run import RunEvent, RunHandle
from ..core.terminal import printable, printable_line
from ..core.units import cost_label
from ..core.vocabulary import Outcome


class Printer:
    """Prints run events: agent text on stdout, everything else on stderr."""

    def __init__(self, out: TextIO | None = None, err: TextIO | None = None) -> None:
        # The streams of the moment (sys.stdout, sys.stderr), not of import time: a command
        # runs with its output wrapped (safe_output) or redirected.
        self.out = sys.stdout if out is None else out
        self.err = sys.stderr if err is None else err
        self.color = self.out.isatty() and "NO_COLOR" not in os.environ
        self.err_color = self.err.isatty() and "NO_COLOR" not in os.environ

    def _paint(self, text: str, code: str, on: bool) -> str:
        return f"\x1b[{code}m{text}\x1b[0m" if on else text

    def __call__(self, event: RunEvent) -> None:
        # Shown text only: the run folder keeps the agent's raw bytes.
        event = dataclasses.replace(event, text=printable(event.text))
        if event.kind == "line":
            self._line(event)
        elif event.kind == "notice":
            for line in event.text.splitlines():
                print(self._paint(f"promptdeck: {line}", "2", self.err_color), file=self.err)

    def _line(self, event: RunEvent) -> None:
        if event.stream == "stderr":
            print(event.text, file=self.err)
            return
        if event.line_kind == "text" or event.line_kind == "info":
            for line in event.text.splitlines() or [""]:
                signal = match_line(line) if event.agent_text else None
                if signal is not None and self.color:
                    code = "1;31" if signal.outcome == "failure" else "1;32"
                    line = self._paint(line, code, True)
                print(line, file=self.out)
            self.out.flush()
        elif event.line_kind in ("tool_use", "tool_result"):
            mark = "⏺" if event.line_kind == "tool_use" else "⎿"
            print(self._paint(f"  {mark} {event.text}", "2", self.err_color), file=self.err)

    def summary(self, result: RunResult) -> None:
        """One line: the phase, the outcome and its signal or reason, duration, cost, tokens."""
        parts = [f"{result.duration_s:.1f} s"]
        if result.cost_usd is not None:
            parts.append(cost_label(result.cost_usd))
        elif result.simulation:
            parts.append("cost —")
        if result.usage is not None:
            parts.append(f"{result.usage.total_label()} tokens")
        outcome = self._paint(result.outcome, outcome_colour(result.outcome), self.err_color)
        print(
            f"promptdeck: {result.phase} {result.story_id} (attempt {result.attempt}, "
            f"{agent_label(result.agent)}) → {outcome}: {printable_line(result.message)} "
            f"({', '.join(parts)}) "
            f"· run {result.run_id}",
            file=self.err,
        )


def outcome_colour(outcome: Outcome) -> str:
    """The SGR colour an outcome is printed in: green a success, red a failure signal,
    yellow every other end (no signal, a timeout, a crash, a git step or a record that
    failed)."""
    match outcome:
        case "success":
            return "1;32"
        case "failure":
            return "1;31"
        case (
            "no-signal"
            | "timeout"
            | "cancelled"
            | "crashed"
            | "launch-failed"
            | "git-failed"
            | "unsaved"
            | "status-failed"
            | "scope-violated"
        ):
            return "1;33"
        case _:
            assert_never(outcome)


def wait_interruptibly(handle: RunHandle) -> RunResult:
    """Wait for the run; Ctrl-C, SIGTERM or SIGHUP cancel it (SIGINT → SIGTERM → SIGKILL to
    the agent's group) and the wait goes on until the run has settled.

    The agent runs in a session of its own, so without this a CI job's cancel or a closed
    terminal would end promptdeck and leave a paid agent running.
    """

    def on_termination(signum: int, _frame: object) -> None:
        print(f"promptdeck: {signal.Signals(signum).name}: cancelling the run…", file=sys.stderr)
        handle.interrupted_by = signum
        handle.cancel()

    previous = {sig: signal.signal(sig, on_termination) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        while True:
            try:
                return handle.wait(0.25)
            except TimeoutError:
                continue
            except KeyboardInterrupt:
                print("promptdeck: cancelling the run…", file=sys.stderr)
                handle.interrupted_by = signal.SIGINT
                handle.cancel()
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def raise_if_interrupted(handle: RunHandle, result: RunResult) -> None:
    """After a run that promptdeck cancelled on a signal: exit 128 + that signal (130 for
    Ctrl-C), the shell's convention, rather than the run's own exit code.

    Raises:
        Interrupted: the run was cancelled on SIGINT, SIGTERM or SIGHUP.
    """
    if handle.interrupted_by is None:
        return
    name = signal.Signals(handle.interrupted_by).name
    raise Interrupted(
        f"interrupted ({name}): run {result.run_id} ended {result.outcome}",
        int(handle.interrupted_by),
    )


def say_interrupted(workspace: Workspace) -> None:
    """One line on stderr when runs were interrupted and no run has resumed them (``run`` and
    ``resume`` both say it, so it lives beside what both print)."""
    from ..core.fleet import interrupted_notice  # only when a run starts: the room is heavy

    waiting = interrupted_notice(workspace.root)
    if waiting:
        print(f"promptdeck: {printable_line(waiting)}", file=sys.stderr)
