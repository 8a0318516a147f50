"""The phase a story opens on: next for unfinished work, the last run's for done work, or the
user's own setting."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from promptdeck.core.project.config import Config
from promptdeck.core.records.opening import OpeningPhase, last_run_phase, opening_phase
from promptdeck.core.records.reader import RunInfo
from promptdeck.core.run.flow import story_flow
from promptdeck.core.stories.model import Story

STORY = Story(id="1-2", key="1-2", title="Parse", status="ready-for-dev", source="bmad", group="1")
CONFIG = Config(agent_max_attempts=3)


def _run(n: int, phase: str, outcome: str, *, story: str = "1-2", mode: str = "create") -> RunInfo:
    result: dict[str, Any] = {"outcome": outcome, "signal": None}
    meta = {"story": story, "phase": phase, "mode": mode, "started_ts": 1000.0 + n, "pid": 0}
    return RunInfo(f"r{n:03d}", Path("/nowhere"), meta, result, ())


def _open(story: Story, runs: list[RunInfo], **kwargs: Any) -> OpeningPhase:
    return opening_phase(story, story_flow(story, runs, CONFIG), runs, **kwargs)


def test_an_unfinished_story_opens_on_the_next_phase() -> None:
    runs = [_run(0, "kickoff", "success"), _run(1, "dev", "success")]
    assert _open(STORY, runs) == OpeningPhase("review", "create", "next")


def test_a_retry_opens_in_optimize_mode() -> None:
    failed = _run(0, "dev", "failure")
    failed = replace(failed, result={"outcome": "failure", "signal": {"name": "FAILED"}})
    analysis = _run(1, "failure", "success")
    assert _open(STORY, [failed, analysis]) == OpeningPhase("dev", "optimize", "next")


def test_a_done_story_opens_on_its_last_runs_phase() -> None:
    done = replace(STORY, status="done")
    runs = [_run(0, "dev", "success"), _run(1, "review", "success"), _run(2, "dev", "success")]
    runs.append(_run(3, "review", "success", story="1-3"))
    assert _open(done, runs) == OpeningPhase("dev", why="last run")


def test_a_done_story_never_opens_on_the_epic_uat() -> None:
    # The flow would offer UAT once the epic is done: the story itself still opens on review.
    runs = [_run(0, "dev", "success"), _run(1, "review", "success")]
    flow = story_flow(STORY, runs, CONFIG, all_epic_done=True)
    assert flow.suggestion is not None and flow.suggestion.phase == "uat"
    assert opening_phase(STORY, flow, runs) == OpeningPhase("review", why="last run")


def test_a_done_story_without_runs_opens_on_dev() -> None:
    done = replace(STORY, status="done")
    assert _open(done, []) == OpeningPhase("dev", why="done")


def test_the_setting_wins_and_an_unknown_phase_is_ignored() -> None:
    assert _open(STORY, [], always="review") == OpeningPhase("review", why="setting")
    assert _open(STORY, [], always="lunch").phase == "kickoff"


def test_the_last_run_leaves_out_chat_cancelled_and_other_stories() -> None:
    runs = [
        _run(0, "review", "success"),
        _run(1, "dev", "cancelled"),
        _run(2, "dev", "success", mode="chat"),
        _run(3, "uat", "success", story="9-9"),
    ]
    assert last_run_phase("1-2", runs) == "review"
    assert last_run_phase("7-7", runs) is None
