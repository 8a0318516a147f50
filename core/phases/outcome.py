"""What a run's outcome is, decided from what happened: a pure function of the events.

The runner gathers the facts (the deciding signal, the exit code, whether the run timed out
or was cancelled, whether the git step or the record failed) and asks this module; nothing
here touches a process, a file or git, so every rule is unit-tested on its own.
"""

from __future__ import annotations

from typing import assert_never

from ..errors import (
    EXIT_FAILURE_SIGNAL,
    EXIT_GIT,
    EXIT_NO_SIGNAL,
    EXIT_NOT_SAVED,
    EXIT_OK,
    EXIT_SCOPE,
    EXIT_STATUS_WRITE,
)
from ..lean_dataclass import dataclass
from ..vocabulary import FAILURE, SUCCESS, Outcome


@dataclass(frozen=True)
class ProcessEnd:
    """How the agent's process ended, as the supervisor saw it.

    Attributes:
        signal: the outcome of the deciding signal (the last of the phase's contract), if any:
            ``failure`` fails the run, any other passes it.
        returncode: the process's exit code; ``None`` when it never started or was not reaped.
        launch_failed: the process could not be started.
        timed_out: the run's time limit stopped it.
        cancelled: the user stopped it.
        crashed: the supervisor itself failed while the process ran.
        agent_error: the agent reported an error in its own output.
    """

    signal: str | None = None
    returncode: int | None = None
    launch_failed: bool = False
    timed_out: bool = False
    cancelled: bool = False
    crashed: bool = False
    agent_error: bool = False


def decide_outcome(end: ProcessEnd) -> Outcome:
    """The outcome of a run from how its process ended, before git and the record.

    A launch failure wins; then a signal decides, whatever the exit code (an agent that
    printed its verdict and was then stopped still said it); then a timeout, a cancel, a
    crash or a non-zero exit; a clean exit with no signal is ``no-signal``.
    """
    if end.launch_failed:
        return "launch-failed"
    if end.signal is not None:
        return FAILURE if end.signal == FAILURE else SUCCESS
    if end.timed_out:
        return "timeout"
    if end.cancelled:
        return "cancelled"
    if end.crashed or (end.returncode is not None and end.returncode != 0) or end.agent_error:
        return "crashed"
    return "no-signal"


def settle_outcome(
    outcome: Outcome,
    *,
    git_failed: bool = False,
    unsaved: bool = False,
    status_failed: bool = False,
    scope_violated: bool = False,
) -> Outcome:
    """The final outcome once the status write-back, git and the record have had their say.

    A record that could not be written makes any run ``unsaved`` (not saved is not a
    success); a failed git step turns only a success into ``git-failed``, a failed status
    write-back only a success into ``status-failed``. A write outside the phase's scope makes
    any settled run ``scope-violated``: whatever the agent said, it broke the plan's rules.
    """
    if unsaved:
        return "unsaved"
    if scope_violated:
        return "scope-violated"
    if git_failed and outcome == SUCCESS:
        return "git-failed"
    if status_failed and outcome == SUCCESS:
        return "status-failed"
    return outcome


def exit_code_for(outcome: Outcome) -> int:
    """The CLI exit code of an outcome: 0 success, 4 failure signal, 6 git step failed,
    7 not saved, 11 status write-back failed, 13 a write outside the phase's scope, 5 anything
    else."""
    match outcome:
        case "success":
            return EXIT_OK
        case "failure":
            return EXIT_FAILURE_SIGNAL
        case "git-failed":
            return EXIT_GIT
        case "unsaved":
            return EXIT_NOT_SAVED
        case "status-failed":
            return EXIT_STATUS_WRITE
        case "scope-violated":
            return EXIT_SCOPE
        case "no-signal" | "timeout" | "cancelled" | "crashed" | "launch-failed":
            return EXIT_NO_SIGNAL
        case _:
            assert_never(outcome)


def outcome_message(
    outcome: Outcome,
    *,
    signal_line: str | None = None,
    returncode: int | None = None,
    timeout: float = 0.0,
) -> str:
    """The one line that explains an outcome: the deciding signal's line when there is one."""
    if signal_line is not None:
        return signal_line
    if outcome == "timeout":
        return f"no signal: timed out after {timeout:g} s"
    if outcome == "cancelled":
        return "no signal: cancelled"
    if outcome == "crashed":
        return f"no signal: the agent exited with code {returncode}"
    return "no signal: the agent ended without printing one"
