"""Every scenario of seed 003 (the story prompt), both ways where it says "only when"."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path

import pytest
from promptdeck.core.project.config import Config
from promptdeck.core.project.workspace import Workspace
from promptdeck.core.prompt.story import (
    LEARNINGS_TEMPLATE,
    Learnings,
    learnings_entries,
    read_learnings,
    story_brief,
    story_prompt,
)
from promptdeck.core.stories.model import Requirement, Scenario, Story, Task

CHANGE_DIR = "openspec/changes/add-auth"


def openspec_story(number: int = 2) -> Story:
    return Story(
        id=f"add-auth:{number}",
        key=f"add-auth-{number}",
        title="Login endpoint",
        status="ready-for-dev",
        source="openspec",
        group="add-auth",
        group_title="Add authentication",
        path=f"{CHANGE_DIR}/tasks.md",
        tasks=(
            Task("2.1 Add POST /login", False),
            Task("2.2 Return a session token", True, (Task("2.2.1 Sign it", False),)),
        ),
        files=(f"{CHANGE_DIR}/proposal.md", f"{CHANGE_DIR}/tasks.md"),
        requirements=(
            Requirement(
                "auth",
                "User login",
                "The system SHALL let users log in.",
                (
                    Scenario("Valid credentials", "- **WHEN** valid\n- **THEN** a token"),
                    Scenario("Wrong password", "- **WHEN** wrong\n- **THEN** 401"),
                ),
            ),
            Requirement(
                "sessions",
                "Session expiry",
                "",
                (Scenario("Expired token", "- **WHEN** expired\n- **THEN** 401"),),
            ),
        ),
        change_dir=CHANGE_DIR,
    )


def bmad_story() -> Story:
    return Story(
        id="1-2",
        key="1-2",
        title="User registration",
        status="ready-for-dev",
        source="bmad",
        group="1",
        group_title="Accounts",
        path="_bmad-output/implementation-artifacts/1-2-user-registration.md",
        tasks=(Task("Task 1: Add the form (AC: 1)", False),),
    )


def flat(text: str) -> str:
    """``text`` with every run of whitespace made one space: phrases survive line wrapping."""
    return " ".join(text.split())


def learnings_with(entries: str) -> Learnings:
    return Learnings(".promptdeck/learnings.md", "ok", entries)


# --- Requirement: Agent prompt template -----------------------------------------------------


def test_prompt_contains_story_context() -> None:
    text = story_prompt(openspec_story())
    assert "add-auth:2" in text
    assert "Login endpoint" in text
    assert "- [ ] 2.1 Add POST /login" in text
    assert "- [x] 2.2 Return a session token" in text
    assert "  - [ ] 2.2.1 Sign it" in text
    assert "Complete only the tasks of this story" in flat(text)


def test_prompt_holds_only_this_storys_tasks() -> None:
    other = openspec_story(3)
    other = Story(**{**other.__dict__, "tasks": (Task("3.1 Rate limiting", False),)})
    text = story_prompt(openspec_story())
    assert "3.1 Rate limiting" not in text
    assert "3.1 Rate limiting" in story_prompt(other)


def test_prompt_contains_change_context() -> None:
    story = openspec_story()
    text = story_prompt(story)
    assert f"`{CHANGE_DIR}/`" in text
    assert f"Read `{CHANGE_DIR}/proposal.md`" in text
    # design.md is optional in OpenSpec: a change without one is not sent to read it.
    assert f"`{CHANGE_DIR}/design.md`" not in text
    designed = dataclasses.replace(story, files=(*story.files, f"{CHANGE_DIR}/design.md"))
    injected = {f"{CHANGE_DIR}/proposal.md", f"{CHANGE_DIR}/design.md"}
    text = flat(story_prompt(designed, injected=injected))
    assert f"`{CHANGE_DIR}/design.md` (how it is designed) are in `<file_injections>`" in text


def test_prompt_contains_every_scenario_and_the_focus_instruction() -> None:
    text = story_prompt(openspec_story())
    for name in ("Valid credentials", "Wrong password", "Expired token"):
        assert f"Scenario: {name}" in text
    assert "- **THEN** 401" in text
    assert "Focus on the scenarios relevant to this story's tasks" in flat(text)


def test_prompt_contains_verification_commands_and_when_to_run_them() -> None:
    text = story_prompt(openspec_story(), verify_commands=("make test", "ruff check ."))
    assert "- `make test`" in text
    assert "- `ruff check .`" in text
    assert "After completing the tasks, run verification" in flat(text)


def test_prompt_without_verification_commands_says_so() -> None:
    text = story_prompt(openspec_story())
    assert "No verification commands are configured" in flat(text)


def test_prompt_contains_completion_signal_instructions() -> None:
    text = story_prompt(openspec_story())
    flat_text = flat(text)
    assert "After completing all tasks in this story, run verification." in flat_text
    assert "If verification passes, output `<promise>COMPLETE</promise>`" in flat_text
    assert "If verification fails and you cannot fix it, output" in flat_text
    assert "`<promise>FAILED: {reason}</promise>`" in flat_text
    assert "You MUST output one of these two signals" in flat_text


def test_prompt_explains_the_failed_signal() -> None:
    text = story_prompt(openspec_story())
    assert "whenever you are unable to complete the story" in flat(text)
    assert "include a brief description of what went wrong" in flat(text)
    assert "This allows the orchestrator to retry with context" in flat(text)


def test_prompt_contains_tool_usage_for_tasks_md() -> None:
    text = story_prompt(openspec_story())
    assert f"mark it done in `{CHANGE_DIR}/tasks.md`" in text
    assert "from `- [ ]` to `- [x]`" in flat(text)


def test_prompt_contains_shared_learnings_when_available() -> None:
    text = story_prompt(openspec_story(), learnings=learnings_with("- Use UTC everywhere."))
    assert "### Shared Learnings" in text
    assert "`.promptdeck/learnings.md`" in text
    assert "- Use UTC everywhere." in text
    for what in ("a discovery", "a decision", "a gotcha"):
        assert what in flat(text)


@pytest.mark.parametrize(
    "learnings",
    [None, Learnings(".promptdeck/learnings.md", "missing"), learnings_with("")],
    ids=["none", "file-missing", "template-only"],
)
def test_prompt_omits_learnings_section_when_empty(learnings: Learnings | None) -> None:
    text = story_prompt(openspec_story(), learnings=learnings)
    assert "Shared Learnings" not in text
    assert not [line for line in text.splitlines() if "#" in line and "earning" in line]
    assert "\n\n\n" not in text
    if learnings is None:
        assert "learnings" not in text.lower()
    else:
        # No section, but one line saying where to record: else the file never grows.
        assert "append it as a short bullet to `.promptdeck/learnings.md`" in flat(text)


def test_learnings_template_only_has_no_entries() -> None:
    assert learnings_entries(LEARNINGS_TEMPLATE) == ""
    assert learnings_entries(LEARNINGS_TEMPLATE.replace("\n", "\r\n") + "\n\n  \n") == ""
    assert learnings_entries("") == ""
    assert learnings_entries(LEARNINGS_TEMPLATE + "\n- Dates are UTC.\n") == "- Dates are UTC."
    assert learnings_entries("# Our notes\n- x\n") == "# Our notes\n- x"


def _workspace(root: Path, **config: str) -> Workspace:
    return Workspace(root=root.resolve(), config=Config(**config))  # type: ignore[arg-type]


def test_read_learnings_both_ways(tmp_path: Path) -> None:
    workspace = _workspace(tmp_path)
    assert read_learnings(workspace).status == "missing"
    target = tmp_path / ".promptdeck" / "learnings.md"
    target.parent.mkdir()
    target.write_text(LEARNINGS_TEMPLATE)
    assert not read_learnings(workspace).has_entries
    target.write_text(LEARNINGS_TEMPLATE + "\n- The importer is lazy.\n")
    found = read_learnings(workspace)
    assert found.has_entries and found.entries == "- The importer is lazy."
    target.write_bytes(b"\xff\xfe")
    broken = read_learnings(workspace)
    assert not broken.has_entries and broken.warning and "not valid UTF-8" in broken.warning


def test_learnings_path_is_configurable(tmp_path: Path) -> None:
    (tmp_path / "notes.md").write_text("- Keep it short.\n")
    found = read_learnings(_workspace(tmp_path, paths_learnings="notes.md"))
    assert found.path == "notes.md" and found.has_entries


# --- Requirement: Prompt is self-contained ----------------------------------------------------


def test_no_environment_variables_or_special_commands_required() -> None:
    text = story_prompt(openspec_story(), verify_commands=("make test",))
    assert not re.search(r"\$[A-Z_]{2,}|\$\{|%[A-Z_]+%|\benv\b|export ", text)
    assert "no special command or environment variable" in flat(text)
    assert "file edits and the commands above are all it takes" in flat(text)


def test_story_scoped_work_does_not_proceed_to_the_next_story() -> None:
    text = story_prompt(openspec_story())
    assert "do not proceed to the next story" in flat(text)
    assert "orchestrator's job" in flat(text)


# --- Requirement: Retry context in prompt -----------------------------------------------------


def test_retry_section_includes_header_reason_and_different_approach() -> None:
    text = story_prompt(openspec_story(), retry_reason="migration 004 fails on SQLite")
    assert "### Retry: the previous attempt failed" in text
    assert "> migration 004 fails on SQLite" in text
    assert "Try a different approach" in flat(text)
    assert text.index("### Retry") < text.index("### Tasks")


@pytest.mark.parametrize("reason", [None, "", "   \n"])
def test_no_retry_section_after_abnormal_termination(reason: str | None) -> None:
    text = story_prompt(openspec_story(), retry_reason=reason)
    assert "Retry" not in text
    assert "previous attempt" not in text
    assert "\n\n\n" not in text


def test_multiline_reason_is_quoted_line_by_line() -> None:
    text = story_prompt(openspec_story(), retry_reason="first\nsecond")
    assert "> first\n> second" in text


# --- BMAD equivalent ---------------------------------------------------------------------------


def test_bmad_story_prompt_uses_the_story_file_and_seed_002_signals() -> None:
    text = story_prompt(bmad_story(), verify_commands=("pytest",), retry_reason="no db")
    assert "## Story 1-2: User registration" in text
    assert "story 1-2 of epic 1: Accounts." in text
    assert "`_bmad-output/implementation-artifacts/1-2-user-registration.md`" in text
    assert "- [ ] Task 1: Add the form (AC: 1)" in text
    assert "`## Tasks / Subtasks`" in text
    assert "`IMPLEMENTATION COMPLETE: 1-2`" in text
    assert "`IMPLEMENTATION BLOCKED: 1-2 - {reason}`" in text
    assert "<promise>" not in text
    assert "acceptance criteria are in the story file" in flat(text)
    assert "> no db" in text
    assert "do not proceed to the next story" in flat(text)


def test_story_brief_has_no_dev_instructions() -> None:
    brief = story_brief(openspec_story())
    assert "add-auth:2" in brief and "2.1 Add POST /login" in brief
    assert "Scenario: Expired token" in brief
    assert "<promise>" not in brief
    assert "Complete only" not in brief
    bmad = story_brief(bmad_story())
    assert "Change context" not in bmad and "\n\n\n" not in bmad
