"""The phase flow: states and suggestions derived from run records, and --auto."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from promptdeck.core.project.config import Config
from promptdeck.core.project.workspace import Workspace
from promptdeck.core.records.reader import RunInfo
from promptdeck.core.run.flow import Suggestion, epic_done, last_failure, run_auto, story_flow
from promptdeck.core.stories.model import Story, StoryCatalog

STORY = Story(id="1-2", key="1-2", title="Parse", status="ready-for-dev", source="bmad", group="1")
OTHER = Story(id="1-3", key="1-3", title="More", status="ready-for-dev", source="bmad", group="1")
CONFIG = Config(agent_max_attempts=3)


class _Runs:
    def __init__(self) -> None:
        self.runs: list[RunInfo] = []

    def add(
        self,
        phase: str,
        outcome: str,
        *,
        signal: str = "",
        reason: str | None = None,
        story: str = "1-2",
        mode: str = "create",
    ) -> _Runs:
        n = len(self.runs)
        result: dict[str, Any] | None = None
        if outcome != "running":
            result = {
                "outcome": outcome,
                "signal": {"name": signal, "reason": reason} if signal else None,
            }
        meta = {
            "story": story,
            "phase": phase,
            "mode": mode,
            "started_ts": 1000.0 + n,
            "pid": os.getpid() if outcome == "running" else 0,
        }
        self.runs.append(RunInfo(f"r{n:03d}", Path("/nowhere"), meta, result, ()))
        return self

    def flow(self, **kwargs: Any) -> Any:
        return story_flow(STORY, self.runs, CONFIG, **kwargs)


def test_a_fresh_story_suggests_the_optional_kickoff() -> None:
    flow = _Runs().flow()
    assert flow.suggestion is not None and flow.suggestion.phase == "kickoff"
    assert flow.suggestion.optional
    assert flow.states["kickoff"] == "suggested" and flow.states["dev"] == "pending"
    assert list(flow.states) == ["kickoff", "dev", "review", "failure", "uat", "retro"]


def test_kickoff_is_non_blocking_and_skippable() -> None:
    failed_kickoff = _Runs().add("kickoff", "no-signal").flow()
    assert failed_kickoff.suggestion.phase == "dev"
    assert failed_kickoff.states["kickoff"] == "failed"
    skipped = _Runs().add("dev", "success", signal="IMPLEMENTATION COMPLETE").flow()
    assert skipped.states["kickoff"] == "skipped"


def test_dev_then_review_then_done() -> None:
    runs = _Runs().add("kickoff", "success").add("dev", "success")
    flow = runs.flow()
    assert flow.suggestion.phase == "review" and flow.states["dev"] == "done"
    runs.add("review", "success", signal="REVIEW PASSED")
    flow = runs.flow()
    assert flow.done and flow.suggestion is None and "UAT and retro" in flow.note
    assert flow.states["review"] == "done"


def test_blocked_dev_goes_through_optional_analysis_to_an_optimize_retry() -> None:
    runs = _Runs().add("dev", "failure", signal="IMPLEMENTATION BLOCKED", reason="no fixture")
    flow = runs.flow()
    s = flow.suggestion
    assert s.phase == "failure" and s.optional
    assert s.failure is not None and (s.failure.phase, s.failure.signal, s.failure.message) == (
        "dev",
        "IMPLEMENTATION BLOCKED",
        "no fixture",
    )
    runs.add("failure", "success", signal="ANALYSIS COMPLETE", reason="Retry")
    retry = runs.flow().suggestion
    assert (retry.phase, retry.mode, retry.retry_reason, retry.attempt) == (
        "dev",
        "optimize",
        "no fixture",
        2,
    )
    request = retry.request("1-2")
    assert request.mode == "optimize" and request.retry_reason == "no fixture"


def test_analysis_is_informational_the_retry_goes_ahead_and_shows_it() -> None:
    # Seed 002: failure analysis does not change the retry/skip decision.
    for recommendation in ("Skip", "Escalate"):
        runs = _Runs().add("dev", "failure", signal="IMPLEMENTATION BLOCKED", reason="x")
        runs.add("failure", "success", signal="ANALYSIS COMPLETE", reason=recommendation)
        s = runs.flow().suggestion
        assert s is not None and (s.phase, s.mode, s.retry_reason) == ("dev", "optimize", "x")
        assert f"failure analysis recommends {recommendation} (informational)" in s.why


def test_honour_analysis_lets_skip_or_escalate_stop_the_flow() -> None:
    honour = Config(agent_max_attempts=3, flow_honour_analysis=True)
    for recommendation in ("Skip", "Escalate"):
        runs = _Runs().add("dev", "failure", signal="IMPLEMENTATION BLOCKED", reason="x")
        runs.add("failure", "success", signal="ANALYSIS COMPLETE", reason=recommendation)
        flow = story_flow(STORY, runs.runs, honour)
        assert flow.suggestion is None and recommendation in flow.note
        assert "honour_analysis" in flow.note
    retry = _Runs().add("dev", "failure", signal="IMPLEMENTATION BLOCKED", reason="x")
    retry.add("failure", "success", signal="ANALYSIS COMPLETE", reason="Retry")
    assert story_flow(STORY, retry.runs, honour).suggestion.phase == "dev"


def test_skipped_optional_phases_are_passed_over() -> None:
    skip = frozenset({"kickoff", "failure", "retro"})
    fresh = _Runs().flow(skip=skip)
    assert fresh.suggestion.phase == "dev" and "not asked for" in fresh.suggestion.why
    failed = _Runs().add("dev", "failure", signal="IMPLEMENTATION BLOCKED", reason="no fixture")
    s = failed.flow(skip=skip).suggestion
    assert (s.phase, s.mode, s.retry_reason) == ("dev", "optimize", "no fixture")
    done = _Runs().add("dev", "success").add("review", "success")
    epic_runs = [*done.runs, *_Runs().add("uat", "success", story="1-3").runs]
    flow = done.flow(all_epic_done=True, epic_runs=epic_runs, skip=skip)
    assert flow.suggestion is None and "retro not asked for" in flow.note
    # UAT follows the flow whatever is skipped.
    assert done.flow(all_epic_done=True, skip=skip).suggestion.phase == "uat"


def test_a_failed_retro_is_a_warning_and_the_epic_is_complete() -> None:
    done = _Runs().add("dev", "success").add("review", "success")
    epic_runs = [
        *done.runs,
        *_Runs().add("uat", "success", story="1-3").add("retro", "failure", story="1-3").runs,
    ]
    flow = done.flow(all_epic_done=True, epic_runs=epic_runs)
    assert flow.done and flow.suggestion is None
    assert "warning: the retro ended with failure" in flow.note
    assert flow.states["retro"] == "failed"


def test_no_signal_retries_without_retry_context() -> None:
    flow = _Runs().add("dev", "timeout").flow()
    s = flow.suggestion
    assert (s.phase, s.mode, s.retry_reason, s.attempt) == ("dev", "create", None, 2)
    assert flow.states["dev"] == "suggested"


def test_max_attempts_stop_retries() -> None:
    runs = _Runs()
    for _ in range(3):
        runs.add("dev", "failure", signal="IMPLEMENTATION BLOCKED", reason="x")
        runs.add("failure", "success", signal="ANALYSIS COMPLETE", reason="Retry")
    runs.runs.pop()
    flow = runs.flow()
    assert flow.suggestion is None and "max_attempts" in flow.note
    silent = _Runs().add("dev", "crashed").add("dev", "no-signal").add("dev", "timeout").flow()
    assert silent.suggestion is None


def test_review_failure_reworks_dev_with_the_reason() -> None:
    runs = (
        _Runs()
        .add("dev", "success")
        .add("review", "failure", signal="REVIEW FAILED", reason="no test")
    )
    assert runs.flow().suggestion.phase == "failure"
    runs.add("failure", "no-signal")
    s = runs.flow().suggestion
    assert (s.phase, s.mode, s.retry_reason) == ("dev", "optimize", "no test")
    runs.add("dev", "success")
    flow = runs.flow()
    assert flow.suggestion.phase == "review" and flow.states["review"] == "suggested"


def test_a_review_that_keeps_failing_stops_at_max_attempts() -> None:
    """Each failed review reworks dev; the count survives those reworks."""
    runs = _Runs()
    for _ in range(CONFIG.agent_max_attempts):
        runs.add("dev", "success")
        runs.add("review", "failure", signal="REVIEW FAILED", reason="still no test")
        runs.add("failure", "success", signal="ANALYSIS COMPLETE", reason="Retry")
    flow = runs.flow()
    assert flow.suggestion is None
    assert f"review failed {CONFIG.agent_max_attempts} times" in flow.note


def test_a_passed_review_resets_the_review_failure_count() -> None:
    runs = _Runs()
    for _ in range(CONFIG.agent_max_attempts - 1):
        runs.add("dev", "success").add("review", "failure", signal="REVIEW FAILED", reason="r")
    runs.add("dev", "success").add("review", "success")
    runs.add("dev", "success").add("review", "failure", signal="REVIEW FAILED", reason="new")
    assert runs.flow().suggestion.phase == "failure"


def test_a_new_dev_run_reopens_review() -> None:
    runs = _Runs().add("dev", "success").add("review", "success").add("dev", "success")
    flow = runs.flow()
    assert not flow.done and flow.suggestion.phase == "review"


def test_uat_and_retro_after_the_whole_epic() -> None:
    runs = _Runs().add("dev", "success").add("review", "success")
    flow = runs.flow(all_epic_done=True)
    assert flow.suggestion.phase == "uat" and flow.suggestion.optional
    epic_runs = [*runs.runs]
    epic_runs.append(_Runs().add("uat", "no-signal", story="1-3").runs[0])
    flow = runs.flow(all_epic_done=True, epic_runs=epic_runs)
    assert flow.suggestion.phase == "retro" and flow.states["uat"] == "failed"


def test_epic_done_uses_catalog_status_and_records() -> None:
    catalog = StoryCatalog((STORY, OTHER))
    runs = _Runs().add("dev", "success").add("review", "success").runs
    assert not epic_done(STORY, catalog, runs)
    runs += _Runs().add("dev", "success", story="1-3").add("review", "success", story="1-3").runs
    assert epic_done(STORY, catalog, runs)
    done_other = Story(**{**OTHER.__dict__, "status": "done"})
    assert epic_done(STORY, StoryCatalog((STORY, done_other)), runs[:2])


def test_running_runs_block_suggestions() -> None:
    flow = _Runs().add("dev", "running").flow()
    assert flow.suggestion is None and flow.states["dev"] == "running"


def test_chat_turns_do_not_move_the_flow() -> None:
    flow = _Runs().add("dev", "no-signal", mode="chat").flow()
    assert flow.suggestion.phase == "kickoff"


def test_run_auto_follows_suggestions_until_done(tmp_path: Path) -> None:
    from promptdeck.core.project.workspace import Workspace

    workspace = Workspace(tmp_path, CONFIG)
    recorded = _Runs()
    outcomes = {
        "kickoff": "success",
        "dev": ["failure", "success"],
        "failure": "success",
        "review": "success",
        "uat": "success",
        "retro": "success",
    }
    seen: list[Suggestion] = []

    class Result:
        def __init__(self, outcome: str) -> None:
            self.outcome = outcome

    def step(story: Story, catalog: StoryCatalog, suggestion: Suggestion) -> Result:
        planned = outcomes[suggestion.phase]
        outcome = planned.pop(0) if isinstance(planned, list) else planned
        reason = (
            "no fixture"
            if outcome == "failure"
            else ("Retry" if suggestion.phase == "failure" else None)
        )
        recorded.add(suggestion.phase, outcome, signal="S" if reason else "", reason=reason)
        return Result(outcome)

    import promptdeck.core.records.reader as reader_module

    original = reader_module.list_runs
    reader_module.list_runs = lambda root, story_id=None: list(recorded.runs)  # type: ignore[assignment]
    try:
        steps, final = run_auto(
            workspace,
            "1-2",
            step,
            load=lambda ws: StoryCatalog((STORY,)),
            on_suggestion=seen.append,
        )
    finally:
        reader_module.list_runs = original  # type: ignore[assignment]
    phases = [s.suggestion.phase for s in steps]
    assert phases == ["kickoff", "dev", "failure", "dev", "review", "uat", "retro"]
    assert (
        steps[3].suggestion.mode == "optimize" and steps[3].suggestion.retry_reason == "no fixture"
    )
    assert final.done and seen == [s.suggestion for s in steps]


def test_last_failure_from_runs_already_read_is_the_storys_own() -> None:
    runs = (
        _Runs()
        .add("dev", "failure", signal="IMPLEMENTATION BLOCKED", reason="mine")
        .add("dev", "failure", signal="IMPLEMENTATION BLOCKED", reason="other", story="1-3")
    )
    workspace = Workspace(Path("/nowhere"), CONFIG)
    found = last_failure(workspace, "1-2", runs.runs)
    assert found is not None and found.message == "mine"
    assert last_failure(workspace, "1-4", runs.runs) is None


def test_a_cancel_is_not_an_attempt_and_keeps_the_optimize_retry() -> None:
    runs = _Runs().add("dev", "failure", signal="IMPLEMENTATION BLOCKED", reason="no fixture")
    runs.add("failure", "success", signal="ANALYSIS COMPLETE", reason="Retry")
    before = runs.flow().suggestion
    # The user starts the optimize retry twice and cancels it both times.
    runs.add("dev", "cancelled", mode="optimize").add("dev", "cancelled", mode="optimize")
    flow = runs.flow()
    after = flow.suggestion
    assert after is not None, flow.note
    assert (
        (after.phase, after.mode, after.retry_reason, after.attempt)
        == (
            before.phase,
            before.mode,
            before.retry_reason,
            before.attempt,
        )
        == ("dev", "optimize", "no fixture", 2)
    )


def test_cancels_never_reach_max_attempts() -> None:
    runs = _Runs().add("dev", "no-signal")
    for _ in range(5):
        runs.add("dev", "cancelled")
    flow = runs.flow()
    assert flow.suggestion is not None and flow.suggestion.attempt == 2, flow.note
