"""The typed vocabulary agrees with the data it names: one spelling of every word."""

from __future__ import annotations

from typing import get_args

from promptdeck.core import vocabulary
from promptdeck.core.injection import model as injection_model
from promptdeck.core.layers import model as prompt_layers
from promptdeck.core.phases.table import PHASE_NAMES, SIGNAL_SPECS
from promptdeck.core.run.flow import STATES


def test_the_phase_names_are_the_phases_in_flow_order() -> None:
    assert vocabulary.PHASE_NAMES == PHASE_NAMES


def test_every_layer_has_a_title_in_the_fixed_order() -> None:
    assert tuple(prompt_layers.LAYER_TITLES) == vocabulary.LAYER_IDS == prompt_layers.LAYER_IDS


def test_every_signal_says_success_failure_or_info() -> None:
    assert {spec.outcome for spec in SIGNAL_SPECS} == set(vocabulary.SIGNAL_OUTCOMES)


def test_the_injection_file_statuses_are_the_vocabulary() -> None:
    named = {
        injection_model.INCLUDED,
        injection_model.DUPLICATE,
        injection_model.EXCLUDED,
        *injection_model.SKIPPED_STATUSES,
    }
    assert named == set(vocabulary.FILE_STATUSES)


def test_a_signal_outcome_is_a_run_outcome_except_info() -> None:
    run_outcomes = set(get_args(vocabulary.Outcome))
    assert set(vocabulary.SIGNAL_OUTCOMES) - run_outcomes == {"info"}
    assert vocabulary.SUCCESS in run_outcomes and vocabulary.FAILURE in run_outcomes


def test_the_flow_states_are_the_vocabulary() -> None:
    assert STATES == vocabulary.PHASE_STATES


def test_a_recorded_run_state_is_an_outcome_or_one_of_three_words_before_one() -> None:
    named = [value for part in get_args(vocabulary.RunState) for value in get_args(part)]
    assert tuple(named) == vocabulary.RUN_STATES
    assert set(vocabulary.RUN_STATES) - set(vocabulary.OUTCOMES) == {
        "running",
        "interrupted",
        "unknown",
    }
    assert all(vocabulary.is_outcome(outcome) for outcome in vocabulary.OUTCOMES)
    assert not vocabulary.is_outcome("running") and not vocabulary.is_outcome(None)
