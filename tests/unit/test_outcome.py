"""A run's outcome, decided from its events: every rule of the precedence, the exit codes."""

from __future__ import annotations

import pytest
from promptdeck.core.errors import (
    EXIT_FAILURE_SIGNAL,
    EXIT_GIT,
    EXIT_NO_SIGNAL,
    EXIT_NOT_SAVED,
    EXIT_OK,
)
from promptdeck.core.phases.outcome import (
    ProcessEnd,
    decide_outcome,
    exit_code_for,
    outcome_message,
    settle_outcome,
)
from promptdeck.core.vocabulary import OUTCOMES, Outcome


def test_a_clean_exit_without_a_signal_is_no_signal() -> None:
    assert decide_outcome(ProcessEnd(returncode=0)) == "no-signal"


@pytest.mark.parametrize(("signal", "expected"), [("success", "success"), ("failure", "failure")])
def test_the_deciding_signal_decides_whatever_the_exit_code(signal: str, expected: str) -> None:
    end = ProcessEnd(signal=signal, returncode=137, timed_out=True, cancelled=True, crashed=True)
    assert decide_outcome(end) == expected


def test_a_signal_that_is_not_a_failure_passes_the_run() -> None:
    assert decide_outcome(ProcessEnd(signal="info", returncode=0)) == "success"


def test_a_launch_failure_wins_over_everything() -> None:
    end = ProcessEnd(signal="success", launch_failed=True, timed_out=True)
    assert decide_outcome(end) == "launch-failed"


def test_a_timeout_comes_before_a_cancel_and_a_crash() -> None:
    end = ProcessEnd(returncode=-15, timed_out=True, cancelled=True, crashed=True)
    assert decide_outcome(end) == "timeout"
    assert decide_outcome(ProcessEnd(returncode=-2, cancelled=True)) == "cancelled"


@pytest.mark.parametrize(
    "end",
    [
        ProcessEnd(returncode=1),
        ProcessEnd(returncode=None, crashed=True),
        ProcessEnd(returncode=0, agent_error=True),
    ],
)
def test_a_non_zero_exit_a_supervisor_failure_or_an_agent_error_is_a_crash(
    end: ProcessEnd,
) -> None:
    assert decide_outcome(end) == "crashed"


def test_a_failed_git_step_turns_only_a_success_into_git_failed() -> None:
    assert settle_outcome("success", git_failed=True) == "git-failed"
    assert settle_outcome("failure", git_failed=True) == "failure"
    assert settle_outcome("success") == "success"


def test_a_failed_status_write_back_turns_only_a_success_into_status_failed() -> None:
    assert settle_outcome("success", status_failed=True) == "status-failed"
    assert settle_outcome("failure", status_failed=True) == "failure"
    assert exit_code_for("status-failed") == 11


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_an_unsaved_record_makes_any_run_unsaved(outcome: Outcome) -> None:
    assert settle_outcome(outcome, unsaved=True) == "unsaved"
    assert settle_outcome(outcome, git_failed=True, unsaved=True) == "unsaved"


def test_every_outcome_has_its_exit_code() -> None:
    codes = {outcome: exit_code_for(outcome) for outcome in OUTCOMES}
    assert codes == {
        "success": EXIT_OK,
        "failure": EXIT_FAILURE_SIGNAL,
        "status-failed": 11,
        "no-signal": EXIT_NO_SIGNAL,
        "timeout": EXIT_NO_SIGNAL,
        "cancelled": EXIT_NO_SIGNAL,
        "crashed": EXIT_NO_SIGNAL,
        "launch-failed": EXIT_NO_SIGNAL,
        "git-failed": EXIT_GIT,
        "unsaved": EXIT_NOT_SAVED,
        "scope-violated": 13,
    }


def test_the_message_is_the_signal_line_or_says_why_there_was_none() -> None:
    assert outcome_message("failure", signal_line="REVIEW FAILED: 1-2 - x") == (
        "REVIEW FAILED: 1-2 - x"
    )
    assert outcome_message("timeout", timeout=2.5) == "no signal: timed out after 2.5 s"
    assert outcome_message("cancelled") == "no signal: cancelled"
    assert outcome_message("crashed", returncode=3) == "no signal: the agent exited with code 3"
    assert outcome_message("no-signal") == "no signal: the agent ended without printing one"
