"""The plan of a run and the confirmation's wording, decided once in core for both faces."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from promptdeck.core.demo.bundle import prepare_demo
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import Workspace, open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import PromptRequest
from promptdeck.core.run.plan import (
    RunPlan,
    confirmation_blocks,
    describe_plan,
    discard_plan,
    plan_run,
)
from promptdeck.core.units import human_bytes, human_tokens

PLAN = RunPlan(
    story_id="1-2",
    phase="review",
    mode="create",
    agent="replay (simulation)",
    argv=("python", "-m", "agent", "--user-file", "/w/run dir/user.md"),
    system_bytes=15_621,
    system_tokens=3_931,
    user_bytes=46,
    injection_bytes=6_064,
    level="ok",
    error_bytes=153_600,
    notes=("story 1-2 is already done",),
    variant="party",
    budget="budget 12,000 tok: 3,977 used (33 %)",
    secrets=("notes.md:3: AWS Access Key",),
    images=("docs/a.png (image/png, 68 B)",),
    attempt=2,
    run_folder=".promptdeck/runs/r-2",
)


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return open_workspace(prepare_demo(tmp_path_factory.mktemp("plan") / "ledgerline"))


def test_units_read_binary_sizes_and_short_token_counts() -> None:
    assert [human_bytes(n) for n in (512, 39_117, -39_117, 1_468_006)] == [
        "512 B",
        "38.2 KiB",
        "-38.2 KiB",
        "1.4 MiB",
    ]
    assert [human_tokens(n) for n in (None, 812, 9_600, 1_200_000)] == ["…", "812", "9.6k", "1.2M"]


def test_a_plan_that_can_start_reads_block_by_block() -> None:
    blocks = confirmation_blocks(PLAN)
    assert [(b.kind, b.lines) for b in blocks] == [
        (
            "title",
            (
                "Run review for story 1-2 (create, party variant, attempt 2) with the "
                "replay (simulation) agent",
            ),
        ),
        ("sizes", ("system 15.3 KiB · 3.9k tok · user 46 B · injection 5.9 KiB (ok)",)),
        ("budget", ("budget 12,000 tok: 3,977 used (33 %)",)),
        ("images", ("images:", "  docs/a.png (image/png, 68 B)")),
        ("notes", ("story 1-2 is already done",)),
        (
            "secrets",
            (
                "⚠ The secret scan flagged 1 likely secret(s):",
                "  • notes.md:3: AWS Access Key",
                "They would be sent to the agent. Start twice to send them anyway.",
            ),
        ),
        ("command", ("The command that will run (run folder .promptdeck/runs/r-2):",)),
        ("argv", ("python -m agent --user-file '/w/run dir/user.md'",)),
    ]
    title = blocks[0]
    assert "".join(text for text, _ in title.strong) == title.lines[0]
    assert [text for text, bold in title.strong if bold] == [
        "Run ",
        "review",
        "1-2",
        "replay (simulation)",
    ]


def test_a_plan_over_its_budget_is_refused_and_its_secrets_not_offered() -> None:
    plan = dataclasses.replace(PLAN, over_budget="the review prompt is 13,000 tokens, over")
    assert plan.blocked
    kinds = [b.kind for b in confirmation_blocks(plan)]
    assert "secrets" not in kinds and "argv" not in kinds and kinds[-1] == "refusal"
    assert confirmation_blocks(plan)[-1].lines == (
        "Cannot run: the review prompt is 13,000 tokens, over.",
        "Leave files out of the injection, or raise the budget in .promptdeck/config.toml.",
    )


def test_controls_in_what_a_repository_supplies_are_made_visible() -> None:
    plan = dataclasses.replace(PLAN, story_id="1-\x1b]52;c;x\x07", notes=("a\x9bb",))
    text = "\n".join(block.text for block in confirmation_blocks(plan))
    assert "\x1b" not in text and "\x9b" not in text and "\x07" not in text
    assert "1-␛]52;c;x␇" in text and "a\\x9bb" in text


def test_an_oversized_story_says_what_would_bring_it_under(demo: Workspace) -> None:
    catalog = load_catalog(demo)
    prompt = compose_prompt(demo, catalog, PromptRequest("2-2", "dev"))
    planned = plan_run(demo, prompt, agent="replay")
    assert planned.blocked and planned.argv == ()
    plan = describe_plan(demo, planned, agent="replay")
    assert plan.level == "error" and plan.blocked and plan.run_folder == ""
    # Only the project context could go, and without it the story's own file is still over:
    # no advice names a category that would not bring it under.
    assert plan.options == ()
    lines = confirmation_blocks(plan)[-1].lines
    assert lines[0] == (
        "Cannot run: the injection is 164.1 KiB (167,994 bytes), 14.1 KiB over the 150.0 KiB "
        "error line."
    )
    assert lines[2:] == (
        "  • no set of files it may leave out brings it under: the story's own files are too "
        "large; trim them, or raise [injection] error_bytes in .promptdeck/config.toml",
    )
    as_json = plan.to_dict()
    assert as_json["blocked"] and as_json["options"] == []


def test_a_dry_run_plan_writes_a_temporary_folder_and_counts_the_attempt(
    demo: Workspace,
) -> None:
    prompt = compose_prompt(demo, load_catalog(demo), PromptRequest("1-1", "dev"))
    planned = plan_run(demo, prompt, agent="replay", dry_run=True, replay_script="dev=fail")
    assert planned.prepared is not None
    folder = planned.prepared.record.dir
    assert folder.name.startswith("promptdeck-dry-run-") and not demo.contains(folder)
    assert (folder / "system.md").read_text(encoding="utf-8") == prompt.system
    assert "--outcome" in planned.argv and "fail" in planned.argv
    plan = describe_plan(demo, planned, agent="replay")
    assert (plan.attempt, plan.run_folder, plan.argv) == (1, str(folder), planned.argv)
    assert set(plan.to_dict()) == {
        "story" if f.name == "story_id" else f.name for f in dataclasses.fields(RunPlan)
    } | {"blocked"}
    discard_plan(planned)
    assert not Path(folder).exists()
