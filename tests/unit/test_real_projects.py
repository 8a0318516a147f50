"""Real public projects read the way their authors meant them (tests/fixtures/real/).

Each fixture is a trimmed copy of a public project's planning files (see its README): file
names, headings and layouts as the projects wrote them, which seed 000's literal patterns
misread.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from promptdeck.core.injection.builder import build_story_injection
from promptdeck.core.injection.model import Selection
from promptdeck.core.plans.catalog import load_catalog, load_story_catalog
from promptdeck.core.project.config import Config
from promptdeck.core.project.workspace import Workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import PromptRequest
from promptdeck.core.run.flow import story_flow

REAL = Path(__file__).resolve().parents[1] / "fixtures" / "real"
ART = "_bmad-output/implementation-artifacts"


def real(tmp_path: Path, name: str) -> Workspace:
    """A private copy of one fixture project (tests may change files)."""
    root = tmp_path / name
    shutil.copytree(REAL / name, root)
    return Workspace(root=root.resolve(), config=Config())


def injected(workspace: Workspace, story_id: str, **selection: bool) -> dict[str, str]:
    story = load_catalog(workspace).find(story_id)
    injection = build_story_injection(
        workspace, story, Selection(**selection), command_name="dev", count_tokens=False
    )
    return {f.path: f.status for f in injection.files}


# --------------------------------------------------------------------------- which file is whose


def test_a_key_inside_another_storys_slug_does_not_make_it_that_storys_file(
    tmp_path: Path,
) -> None:
    ws = real(tmp_path, "bmad-todo-app")
    wcag = f"{ART}/5-4-wcag-2-1-aa-compliance-prefers-reduced-motion.md"
    files = injected(ws, "2-1")
    assert f"{ART}/2-1-task-list-view-database-foundation.md" in files
    assert wcag not in files
    assert injected(ws, "5-4")[wcag] == "included"
    catalog = load_catalog(ws)
    assert catalog.find("5-4").path == wcag
    assert catalog.find("2-1").path == f"{ART}/2-1-task-list-view-database-foundation.md"


def test_epic_scope_injection_holds_only_the_epics_own_story_files(tmp_path: Path) -> None:
    ws = real(tmp_path, "bmad-todo-app")
    prompt = compose_prompt(ws, None, PromptRequest("2-1", phase="retro"), count_tokens=False)
    paths = [f.path for f in prompt.injection.included()]
    assert not any("5-4" in path for path in paths)
    assert f"{ART}/2-2-create-task.md" in paths


@pytest.mark.parametrize(
    ("story_id", "name", "title"),
    [
        (
            "22-3",
            "22-3-create-agents-md-for-cross-tool-agent-discovery.md",
            "Create AGENTS.md for Cross-Tool Agent Discovery",
        ),
        (
            "32-3",
            "32-3-fix-cli-wiring-subcommand-dry-run-and-discovery.md",
            "Fix CLI Wiring — Subcommand, Dry-Run, and Discovery",
        ),
    ],
)
def test_a_slug_holding_discovery_is_still_the_storys_own_file(
    tmp_path: Path, story_id: str, name: str, title: str
) -> None:
    ws = real(tmp_path, "docvet")
    for catalog in (load_catalog(ws), load_story_catalog(ws, story_id)):
        story = catalog.find(story_id)
        assert story.path == f"{ART}/{name}"
        assert story.title == title
        assert story.tasks, "the story's own task list is read"
    files = injected(ws, story_id)
    assert files[f"{ART}/{name}"] == "included"
    prompt = compose_prompt(ws, None, PromptRequest(story_id), count_tokens=False)
    assert "(no story file yet)" not in prompt.system
    assert "(this story lists no tasks)" not in prompt.system
    assert not any("has no story file" in w for w in prompt.warnings)


def test_tech_spec_and_retro_files_are_not_stories(tmp_path: Path) -> None:
    ws = real(tmp_path, "docvet")
    catalog = load_catalog(ws)
    paths = {s.path for s in catalog.stories}
    assert not any("tech-spec" in (p or "") or "retro" in (p or "") for p in paths)
    # `tech-spec-4-cli-scaffold.md` names no story key of its own: it is no story's file.
    assert f"{ART}/tech-spec-4-cli-scaffold.md" not in injected(ws, "2-1", tech_spec=True)


def test_the_file_named_after_the_sprint_entry_wins_a_shared_key(tmp_path: Path) -> None:
    # Both files open with "# Story 32.1: …"; the one named after the sprint-status entry
    # (32-1-fix-feasibility-spike) is the story file, the other is listed as a duplicate.
    ws = real(tmp_path, "docvet")
    for catalog in (load_catalog(ws), load_story_catalog(ws, "32-1")):
        assert catalog.find("32-1").path == f"{ART}/32-1-fix-feasibility-spike.md"
    skipped = {f.path: f.reason for f in load_catalog(ws).skipped}
    assert skipped[f"{ART}/32-1-spike-decision.md"].startswith("duplicate:")


def test_letter_suffixed_epic_keys(tmp_path: Path) -> None:
    ws = real(tmp_path, "gepa-adk")
    catalog = load_catalog(ws)
    story = catalog.find("1a-2")
    assert story.path == f"{ART}/1a-2-reorganize-adapters-into-sub-packages.md"
    assert story.group == "1A"
    assert story.group_title == "Structural Refactoring"
    assert not any("not a story key" in w for w in catalog.warnings)
    files = injected(ws, "2-1")
    assert f"{ART}/epic-2-retro-2026-03-06.md" not in files


def test_a_story_without_a_file_says_so(tmp_path: Path) -> None:
    ws = real(tmp_path, "docvet")
    prompt = compose_prompt(ws, None, PromptRequest("1-2"), count_tokens=False)
    assert prompt.story.path is None
    assert any("story 1-2 has no story file" in w for w in prompt.warnings)


def test_a_file_named_after_its_entry_with_another_heading_is_the_story_file(
    tmp_path: Path,
) -> None:
    ws = real(tmp_path, "bmad-todo-app")
    path = ws.root / ART / "2-2-create-task.md"
    path.write_text(path.read_text().replace("# Story 2.2: Create Task", "# Create a task"))
    for catalog in (load_catalog(ws), load_story_catalog(ws, "2-2")):
        story = catalog.find("2-2")
        assert story.path == f"{ART}/2-2-create-task.md"
        assert story.title == "Create a task"
        assert story.tasks


# --------------------------------------------------------------------------- epics


def test_epic_titles_come_from_sprint_status_comments(tmp_path: Path) -> None:
    ws = real(tmp_path, "docvet")
    catalog = load_catalog(ws)
    # epics-next.md restarts at "Epic 2: Documentation Site Navigation"; sprint-status.yaml
    # says what epic 2 of this project is.
    assert catalog.find("2-1").group_title == "Class & Module Enrichment Detection"
    assert catalog.find("32-1").group_title == "Linter Lifecycle -- Fix & Suppress"
    todo = load_catalog(real(tmp_path, "bmad-todo-app"))
    assert todo.find("5-4").group_title == "Resilience & Accessibility"


def test_disagreeing_planning_files_give_the_id_only_and_a_warning(tmp_path: Path) -> None:
    ws = real(tmp_path, "docvet")
    status = ws.root / ART / "sprint-status.yaml"
    status.write_text(
        "".join(line for line in status.read_text().splitlines(True) if "# Epic" not in line)
    )
    catalog = load_catalog(ws)
    assert catalog.find("2-1").group_title == ""
    assert any(
        w.startswith("epic 2: the planning files disagree")
        or w.startswith("epic 2: its planning file restarts")
        for w in catalog.warnings
    )
    # Epic 22 is defined by one planning file only: its title is taken from there.
    assert catalog.find("22-3").group_title == "Discoverable and Understandable"
    prompt = compose_prompt(ws, catalog, PromptRequest("2-1"), count_tokens=False)
    assert "Documentation Site Navigation" not in prompt.system


# --------------------------------------------------------------------------- OpenSpec


def test_openspec_changes_without_tasks_are_listed_as_skipped(tmp_path: Path) -> None:
    ws = real(tmp_path, "linux-health-checks")
    catalog = load_catalog(ws)
    assert {s.group for s in catalog.stories} == {"add-version-check-notification"}
    # Its tasks.md groups are `## Phase 1: Title` with `### Task 1.1` blocks of checkboxes.
    first = catalog.find("add-version-check-notification:1")
    assert first.title == "Version Comparison Logic ✅"
    assert first.tasks and first.status == "done"
    reasons = {f.path: f.reason for f in catalog.skipped}
    assert reasons["openspec/changes/add-user-config-file/"].startswith("no-tasks:")


@pytest.mark.parametrize("name", ["expense-tracker", "linux-health-checks"])
def test_openspec_project_context_is_openspec_project_md(tmp_path: Path, name: str) -> None:
    ws = real(tmp_path, name)
    story = load_catalog(ws).stories[0]
    injection = build_story_injection(
        ws, story, Selection(), command_name="dev", count_tokens=False
    )
    context = [(f.path, f.status) for f in injection.files if f.category == "project-context"]
    expected = [("openspec/project.md", "included")]
    if (ws.root / "openspec/AGENTS.md").is_file():
        expected.insert(0, ("openspec/AGENTS.md", "included"))  # each group sorted (AC9)
    assert context == expected
    assert not any("_bmad-output" in f.path for f in injection.files)


# --------------------------------------------------------------------------- done stories


def test_done_stories_are_flagged_and_not_offered_a_kickoff(tmp_path: Path) -> None:
    ws = real(tmp_path, "docvet")
    prompt = compose_prompt(ws, None, PromptRequest("22-3"), count_tokens=False)
    assert any(w.startswith("story 22-3 is already done") for w in prompt.warnings)
    flow = story_flow(prompt.story, [], ws.config)
    assert flow.done
    # Not told that its whole epic is done, a done story suggests nothing, and says why.
    assert flow.suggestion is None
    assert flow.note == "story done; UAT and retro follow once every story of the epic is done"
    review = compose_prompt(ws, None, PromptRequest("32-4"), count_tokens=False)
    assert not any("already done" in w for w in review.warnings)
    # Its tracking calls it review: the work is implemented, so review is next, not a kickoff.
    assert review.story.status == "review"
    assert story_flow(review.story, [], ws.config).suggestion.phase == "review"  # type: ignore[union-attr]


def test_openspec_prompt_names_only_the_change_documents_that_exist(tmp_path: Path) -> None:
    ws = real(tmp_path, "expense-tracker")  # its changes have no design.md
    change = "openspec/changes/add-monthly-cashflow-chart"
    for phase in ("dev", "review"):
        prompt = compose_prompt(
            ws, None, PromptRequest("add-monthly-cashflow-chart:2", phase=phase), count_tokens=False
        )
        assert f"{change}/design.md" not in prompt.system
        assert f"`{change}/proposal.md` (why the change is made) is in `<file_injections>`" in (
            prompt.system
        )
    with_design = real(tmp_path, "linux-health-checks")
    prompt = compose_prompt(
        with_design, None, PromptRequest("add-version-check-notification:1"), count_tokens=False
    )
    assert "design.md` (how it is designed) are in `<file_injections>` below" in prompt.system


# --------------------------------------------------------------------------- a Story/ subfolder


def test_story_files_in_a_subfolder_are_found_and_a_second_claim_is_shown(
    tmp_path: Path,
) -> None:
    ws = real(tmp_path, "freesport")
    catalog = load_catalog(ws)
    assert [s.id for s in catalog.stories] == ["1-1", "1-2", "5-0", "5-1", "34-1", "34-2", "35-4"]
    stories = {s.id: s for s in catalog.stories}
    assert stories["35-4"].path == f"{ART}/Story/35-4-cookie-banner.md"
    # The same name in the implementation folder and in Story/: the first is used, the other
    # is shown with the choice.
    assert stories["1-1"].path == f"{ART}/1-1-setup-1c-exchange-endpoint-and-auth.md"
    claims = [u for u in catalog.unreadable if u.key == "1-1"]
    assert [u.path for u in claims] == [f"{ART}/Story/1-1-setup-1c-exchange-endpoint-and-auth.md"]
    # Entries that are no story keys keep their line; a status outside BMAD's words is kept.
    lines = sorted(u.line for u in catalog.unreadable if u.key is None and u.line)
    assert lines == [38, 39]
    assert (stories["5-0"].status, stories["5-0"].status_known) == ("included", False)
    assert stories["34-2"].status_drift  # the file says review, sprint-status done
    files = injected(ws, "35-4", project_context=False)
    assert [path for path, status in files.items() if status == "included"] == [
        f"{ART}/Story/35-4-cookie-banner.md"
    ]
