"""An epic of many stories: its forecast (``plan --epic``, the app's epic plan) reads the plan
once, however many stories it composes. Reading it again per story made the forecast's time
grow with the square of the epic (a thousand tickets: most of a minute)."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import make_workspace
from promptdeck.core.cost import plan_epic
from promptdeck.core.plans import catalog as catalog_module

ART = "_bmad-output/implementation-artifacts"
STORIES = 40


def _story(number: int) -> str:
    return f"# Story 1.{number}: Step {number}\n\nStatus: ready-for-dev\n\n## Tasks\n\n- [ ] Do\n"


def test_the_epic_forecast_reads_the_plan_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {f"{ART}/1-{n}-step-{n}.md": _story(n) for n in range(1, STORIES + 1)}
    workspace = make_workspace(tmp_path / "project", files)
    reads: list[str] = []
    real = catalog_module.load_bmad_plan

    def counted(*args: object, **kwargs: object) -> object:
        reads.append("plan")
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(catalog_module, "load_bmad_plan", counted)
    plan = plan_epic(workspace, "1", "claude-sonnet-4-5", phases=("dev", "review"))
    assert plan.failed == ()
    assert len({row.story_id for row in plan.rows}) == STORIES
    assert len(plan.rows) == 2 * STORIES
    assert len(reads) == 1
