"""Every outcome has its mark in the app: a history tone and a finished-run tone, matched
exhaustively over the vocabulary (mypy checks the match; these tests check the values)."""

from __future__ import annotations

import pytest
from promptdeck.core.vocabulary import OUTCOMES, RUN_STATES, SUCCESS, Outcome, RunState
from promptdeck.tui.screens.run_history import outcome_tone
from promptdeck.tui.widgets.phase_panel import finished_tone


@pytest.mark.parametrize("state", RUN_STATES)
def test_every_run_state_has_a_history_tone(state: RunState) -> None:
    tone = outcome_tone(state)
    if state == SUCCESS:
        assert tone == "success"
    elif state in ("running", "interrupted", "unknown"):
        assert tone is None  # drawn dim: no outcome yet
    else:
        assert tone in ("warning", "error")


def test_no_failed_run_is_drawn_as_a_mere_warning() -> None:
    errors = {state for state in RUN_STATES if outcome_tone(state) == "error"}
    assert errors == {
        "failure",
        "crashed",
        "launch-failed",
        "git-failed",
        "unsaved",
        "status-failed",
        "scope-violated",
    }


@pytest.mark.parametrize("outcome", OUTCOMES)
def test_every_outcome_has_a_finished_tone(outcome: Outcome) -> None:
    expected = {"success": "success", "cancelled": ""}.get(outcome, "failure")
    assert finished_tone(outcome) == expected
