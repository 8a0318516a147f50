"""The next phase of a story with no dev run recorded comes from its tracked status: a story its
plan calls ``review`` (v7 ``built``, ``in-review``) goes to review, one it calls
``in-progress`` to dev; kickoff stays the start of a ``backlog`` or ``ready-for-dev`` story
only. Once a dev run is recorded, the records decide, as before."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest
from promptdeck.core.project.config import Config
from promptdeck.core.project.workspace import Workspace
from promptdeck.core.records.opening import OpeningPhase, opening_phase
from promptdeck.core.records.reader import RunInfo
from promptdeck.core.run.flow import StoryFlow, Suggestion, run_auto, status_start, story_flow
from promptdeck.core.stories.model import Story, StoryCatalog

CONFIG = Config(agent_max_attempts=3)
REVIEW = Story(
    id="1-1",
    key="1-1-a",
    title="A",
    status="review",
    source="bmad",
    group="1",
    status_source="sprint-status.yaml:12",
)
IN_PROGRESS = replace(
    REVIEW, id="1-2", key="1-2-b", status="in-progress", status_source="sprint-status.yaml:13"
)
READY = replace(
    REVIEW, id="1-3", key="1-3-c", status="ready-for-dev", status_source="sprint-status.yaml:14"
)


def _run(
    n: int,
    phase: str,
    outcome: str,
    *,
    story: str = "1-1",
    signal: str = "",
    reason: str | None = None,
) -> RunInfo:
    result: dict[str, Any] = {
        "outcome": outcome,
        "signal": {"name": signal, "reason": reason} if signal else None,
    }
    meta = {"story": story, "phase": phase, "mode": "create", "started_ts": 1000.0 + n, "pid": 0}
    return RunInfo(f"r{n:03d}", Path("/nowhere"), meta, result, ())


def _flow(story: Story, runs: list[RunInfo] = [], **kwargs: Any) -> StoryFlow:  # noqa: B006
    return story_flow(story, runs, CONFIG, **kwargs)


def test_a_review_story_goes_to_review_and_says_why() -> None:
    flow = _flow(REVIEW)
    suggestion = flow.suggestion
    assert suggestion is not None
    assert (suggestion.phase, suggestion.mode, suggestion.optional) == ("review", "create", False)
    assert suggestion.why == "status 'review' (sprint-status.yaml:12): the work is implemented"
    assert suggestion.basis == "status 'review', sprint-status.yaml:12"
    # Kickoff is behind the story: not suggested, but still a phase the user can pick.
    assert flow.states["kickoff"] == "skipped" and flow.states["review"] == "suggested"
    assert not flow.done


def test_a_v7_built_story_reads_as_review_and_names_what_was_written() -> None:
    built = replace(
        REVIEW,
        status_note="plan status 'built' shown as review",
        status_source="_bmad/plan/stories/1-1.md:3",
    )
    suggestion = _flow(built).suggestion
    assert suggestion is not None and suggestion.phase == "review"
    assert suggestion.why == (
        "status 'review' (plan status 'built' shown as review; _bmad/plan/stories/1-1.md:3): "
        "the work is implemented"
    )
    # The title has little room: the file's name and line only.
    assert suggestion.basis == "status 'review', 1-1.md:3"


def test_an_in_progress_story_goes_to_dev_not_kickoff() -> None:
    flow = _flow(IN_PROGRESS)
    suggestion = flow.suggestion
    assert suggestion is not None
    assert (suggestion.phase, suggestion.mode) == ("dev", "create")
    assert suggestion.why == "status 'in-progress' (sprint-status.yaml:13): the work is under way"
    assert flow.states["kickoff"] == "skipped"
    # A kickoff run already recorded does not pull the story back either.
    again = _flow(IN_PROGRESS, [_run(0, "kickoff", "success", story="1-2")])
    assert again.suggestion is not None and again.suggestion.phase == "dev"
    assert again.states["kickoff"] == "done"


def test_an_in_progress_story_after_a_failed_dev_retries_in_optimize_mode() -> None:
    failed = _run(0, "dev", "failure", story="1-2", signal="IMPLEMENTATION BLOCKED", reason="no db")
    flow = _flow(IN_PROGRESS, [failed])
    assert flow.suggestion is not None and flow.suggestion.phase == "failure"
    analysed = [failed, _run(1, "failure", "success", story="1-2", signal="S", reason="Retry")]
    retry = _flow(IN_PROGRESS, analysed).suggestion
    assert retry is not None
    assert (retry.phase, retry.mode, retry.retry_reason) == ("dev", "optimize", "no db")
    assert retry.basis == ""


def test_ready_for_dev_and_backlog_start_where_the_flow_starts() -> None:
    # Manual stepping offers the optional kickoff, as it always did.
    for story in (READY, replace(READY, status="backlog")):
        suggestion = _flow(story).suggestion
        assert suggestion is not None and suggestion.phase == "kickoff" and suggestion.optional
        assert status_start(story) is None
    # ``run --auto`` without kickoff asked for starts with dev.
    skipped = _flow(READY, skip=frozenset({"kickoff"})).suggestion
    assert skipped is not None and skipped.phase == "dev" and skipped.basis == ""


def test_a_review_story_whose_review_passes_is_done() -> None:
    flow = _flow(REVIEW, [_run(0, "review", "success", signal="REVIEW PASSED")])
    assert flow.done and flow.suggestion is None


def test_a_review_story_whose_review_fails_is_reworked_with_the_reason() -> None:
    failed = _run(0, "review", "failure", signal="REVIEW FAILED", reason="no tests")
    analysis = _flow(REVIEW, [failed]).suggestion
    assert analysis is not None and analysis.phase == "failure"
    assert analysis.failure is not None and analysis.failure.phase == "review"
    without = _flow(REVIEW, [failed], skip=frozenset({"failure"})).suggestion
    assert without is not None
    assert (without.phase, without.mode, without.retry_reason) == ("dev", "optimize", "no tests")


def test_a_review_story_whose_review_ended_without_a_signal_runs_it_again() -> None:
    flow = _flow(REVIEW, [_run(0, "review", "no-signal")])
    assert flow.suggestion is not None
    assert (flow.suggestion.phase, flow.suggestion.attempt) == ("review", 2)


def test_once_a_dev_run_is_recorded_the_records_decide() -> None:
    flow = _flow(REVIEW, [_run(0, "dev", "no-signal")])
    assert flow.suggestion is not None and flow.suggestion.phase == "dev"
    assert flow.suggestion.basis == ""


def test_an_unknown_status_still_suggests_nothing() -> None:
    odd = replace(REVIEW, status="deployed-awaiting-user-smoke", status_known=False)
    flow = _flow(odd)
    assert flow.suggestion is None and "choose a phase yourself" in flow.note


def test_a_review_story_opens_on_review_and_the_title_says_why() -> None:
    assert opening_phase(REVIEW, _flow(REVIEW), []) == OpeningPhase(
        "review", "create", "next: status 'review', sprint-status.yaml:12"
    )
    assert opening_phase(IN_PROGRESS, _flow(IN_PROGRESS), []).phase == "dev"
    assert opening_phase(READY, _flow(READY), []) == OpeningPhase("kickoff", "create", "next")


def test_run_auto_starts_a_review_story_at_review(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import promptdeck.core.records.reader as reader_module

    recorded: list[RunInfo] = []
    monkeypatch.setattr(reader_module, "list_runs", lambda root, story_id=None: list(recorded))
    seen: list[Suggestion] = []

    class Result:
        outcome = "success"

    def step(story: Story, catalog: StoryCatalog, suggestion: Suggestion) -> Result:
        recorded.append(_run(len(recorded), suggestion.phase, "success", signal="S"))
        return Result()

    steps, final = run_auto(
        Workspace(tmp_path, CONFIG),
        "1-1",
        step,
        load=lambda ws: StoryCatalog((REVIEW,)),
        on_suggestion=seen.append,
        skip=frozenset({"kickoff", "failure", "retro"}),
    )
    # Review first, then the epic's UAT (the only story of its epic is done): no dev run.
    assert [s.suggestion.phase for s in steps] == ["review", "uat"]
    assert seen[0].why.startswith("status 'review' (sprint-status.yaml:12)")
    assert final.done
