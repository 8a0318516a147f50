"""The epic forecast: every row is what ``inspect`` composes for that story and phase, and the
totals are the sums of those ``inspect`` results."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import make_workspace
from promptdeck.core.cost.epic import context_paths, plan_epic
from promptdeck.core.errors import StoryNotFound
from promptdeck.core.project.workspace import Workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import PromptRequest
from promptdeck.core.tokens.counter import get_counter

SONNET = "claude-sonnet-4-6"
ARTIFACTS = "_bmad-output/implementation-artifacts"
PHASES = ("kickoff", "dev", "review")
FILES = {
    f"{ARTIFACTS}/sprint-status.yaml": "development_status:\n  epic-1: in-progress\n"
    "  1-1-sign-in: ready-for-dev\n  1-2-user-registration: ready-for-dev\n"
    "  epic-2: backlog\n  2-1-billing: backlog\n",
    f"{ARTIFACTS}/1-1-sign-in.md": "---\nstatus: ready-for-dev\ncontext:\n"
    "  - '{project-root}/docs/present.md'\n  - {project-root}/docs/absent.md\n---\n"
    "# Story 1.1: Sign in\n\nStatus: ready-for-dev\n\n## Acceptance Criteria\n\n"
    "1. A known email signs in.\n\n## Tasks / Subtasks\n\n- [ ] Task 1: Form (AC: 1)\n",
    f"{ARTIFACTS}/1-2-user-registration.md": "# Story 1.2: User registration\n\n"
    "Status: ready-for-dev\n\n## Acceptance Criteria\n\n1. A new email creates an account.\n\n"
    "## Tasks / Subtasks\n\n- [ ] Task 1: Form (AC: 1)\n"
    + "\nBackground detail, repeated so the injection is the bulk. "
    * 200,
    f"{ARTIFACTS}/2-1-billing.md": "# Story 2.1: Billing\n\nStatus: backlog\n",
    "docs/present.md": "# Present\n",
    "AGENTS.md": "# Rules\n\n- Keep it small.\n",
}


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return make_workspace(tmp_path, FILES)


def test_the_totals_are_the_sums_of_each_rows_inspect(workspace: Workspace) -> None:
    counter = get_counter(workspace.config.tokens_encoding)
    plan = plan_epic(workspace, "1", SONNET, phases=PHASES, counter=counter)
    assert [(row.story_id, row.phase) for row in plan.rows] == [
        (story, phase) for story in ("1-1", "1-2") for phase in PHASES
    ]
    system_bytes = system_tokens = user_tokens = 0
    for row in plan.rows:
        # The call `inspect` makes for one story and phase.
        inspected = compose_prompt(
            workspace, None, PromptRequest(row.story_id, row.phase), counter=counter
        )
        assert row.system_bytes == inspected.system_meter.bytes
        assert row.system_tokens == inspected.system_meter.tokens
        assert row.user_bytes == inspected.user_meter.bytes
        assert row.injection_bytes == inspected.injection.size_bytes
        assert row.level == inspected.injection.level
        system_bytes += inspected.system_meter.bytes
        system_tokens += inspected.system_meter.tokens or 0
        user_tokens += inspected.user_meter.tokens or 0
    totals = plan.totals
    assert (totals.system_bytes, totals.system_tokens, totals.user_tokens) == (
        system_bytes,
        system_tokens,
        user_tokens,
    )
    dollars = [row.cost.dollars for row in plan.rows]
    assert None not in dollars and totals.dollars == pytest.approx(
        sum(d for d in dollars if d is not None)
    )
    assert totals.dollars > 0


def test_the_first_phase_shares_nothing_and_later_ones_share_a_prefix(
    workspace: Workspace,
) -> None:
    plan = plan_epic(workspace, "1", SONNET, phases=PHASES)
    by_story = [row for row in plan.rows if row.story_id == "1-2"]
    assert by_story[0].shared_prefix_bytes == 0
    assert all(0 < row.shared_prefix_bytes <= row.system_bytes for row in by_story[1:])


def test_missing_context_files_are_named_and_present_ones_are_not(workspace: Workspace) -> None:
    plan = plan_epic(workspace, "1", SONNET, phases=PHASES)
    for row in plan.rows:
        if row.story_id == "1-1":
            assert row.missing_context == ("docs/absent.md",)
            assert "missing-context" in row.flags
        else:
            assert row.missing_context == ()


def test_an_unknown_model_prices_nothing_and_stops_nothing(workspace: Workspace) -> None:
    plan = plan_epic(workspace, "1", "no-such-model", phases=PHASES)
    assert len(plan.rows) == 6
    assert plan.totals.dollars is None
    assert all("cost-unknown" in row.flags for row in plan.rows)


def test_an_epic_without_stories_says_which_exist(workspace: Workspace) -> None:
    with pytest.raises(StoryNotFound, match="epics: 1, 2"):
        plan_epic(workspace, "9", SONNET)


def test_context_paths_reads_block_and_flow_lists_and_nothing_else() -> None:
    assert context_paths("---\ncontext: ['{project-root}/a.md', b.md]\n---\n") == (
        "a.md",
        "b.md",
    )
    assert context_paths("---\ntitle: x\ncontext:\n  - a.md\nstatus: done\n  - c.md\n---\n") == (
        "a.md",
    )
    assert context_paths("# No frontmatter\ncontext:\n  - a.md\n") == ()
    assert context_paths("---\ncontext: []\n---\n") == ()


def test_epic_level_phases_count_once_per_epic_not_once_per_story(workspace: Workspace) -> None:
    plan = plan_epic(workspace, "1", SONNET, phases=("dev", "uat", "retro"))
    assert [(row.story_id, row.phase, row.scope) for row in plan.rows] == [
        ("1-1", "dev", "story"),
        ("1-2", "dev", "story"),
        ("1-2", "uat", "epic"),
        ("1-2", "retro", "epic"),
    ]


def test_done_stories_are_left_out_unless_all_are_asked_for(tmp_path: Path) -> None:
    files = dict(FILES)
    files[f"{ARTIFACTS}/sprint-status.yaml"] = files[f"{ARTIFACTS}/sprint-status.yaml"].replace(
        "1-1-sign-in: ready-for-dev", "1-1-sign-in: done"
    )
    files[f"{ARTIFACTS}/1-1-sign-in.md"] = files[f"{ARTIFACTS}/1-1-sign-in.md"].replace(
        "ready-for-dev", "done"
    )
    workspace = make_workspace(tmp_path, files)
    plan = plan_epic(workspace, "1", SONNET, phases=("dev", "uat"))
    assert [(row.story_id, row.phase) for row in plan.rows] == [("1-2", "dev"), ("1-2", "uat")]
    assert plan.done_left_out == ("1-1",)
    every = plan_epic(workspace, "1", SONNET, phases=("dev", "uat"), all_stories=True)
    assert [row.story_id for row in every.rows] == ["1-1", "1-2", "1-2"]
    assert every.done_left_out == ()


def test_rows_too_large_to_send_are_marked_and_outside_the_total(tmp_path: Path) -> None:
    workspace = make_workspace(
        tmp_path, FILES, injection_warn_bytes=4000, injection_error_bytes=4000
    )
    plan = plan_epic(workspace, "1", SONNET, phases=("dev",))
    large = [row for row in plan.rows if row.too_large]
    small = [row for row in plan.rows if not row.too_large]
    assert [row.story_id for row in large] == ["1-2"] and small
    assert "too-large" in large[0].flags and large[0].to_dict()["too_large"] is True
    totals = plan.totals
    assert totals.left_out == 1
    assert totals.system_bytes == sum(row.system_bytes for row in small)
    assert totals.dollars == pytest.approx(sum(row.cost.dollars or 0 for row in small))
