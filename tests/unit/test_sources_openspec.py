"""The OpenSpec source: task groups as stories, specs as requirements, archive ignored."""

from __future__ import annotations

from pathlib import Path

from builders import make_workspace
from promptdeck.core.plans import openspec
from promptdeck.core.plans.openspec import parse_requirements, status_from_tasks
from promptdeck.core.project.config import Config
from promptdeck.core.project.workspace import Workspace
from promptdeck.core.stories.model import Scenario, Task

CHANGE = "openspec/changes/add-auth"

TASKS = """\
# Tasks

Intro text before the first group is ignored.

## 1. Login form
- [x] 1.1 Add the form
- [x] 1.2 Validate input
  - [x] 1.2.1 Email format

## 2. Sessions
- [x] 2.1 Issue a token
- [ ] 2.2 Refresh tokens
  - [ ] 2.2.1 Rotate on refresh

## 3. Documentation
- [ ] 3.1 Write the README section
"""

SPEC = """\
## ADDED Requirements

### Requirement: Login
Users SHALL log in with e-mail and password.

#### Scenario: Valid credentials
- **WHEN** the user submits valid credentials
- **THEN** a session starts

#### Scenario: Wrong password
- **WHEN** the password is wrong
- **THEN** an error is shown

## MODIFIED Requirements

### Requirement: Session length
Sessions SHALL last 8 hours.

#### Scenario: Expiry
- **WHEN** 8 hours pass
- **THEN** the user is logged out

## REMOVED Requirements

### Requirement: Guest access
**Reason**: replaced by login.
"""


def full_change(root: Path) -> Workspace:
    return make_workspace(
        root,
        {
            f"{CHANGE}/proposal.md": "# Change: Add authentication\n\n## Why\n",
            f"{CHANGE}/design.md": "# Design\n",
            f"{CHANGE}/tasks.md": TASKS,
            f"{CHANGE}/specs/auth/spec.md": SPEC,
            f"{CHANGE}/specs/audit/spec.md": (
                "## ADDED Requirements\n\n### Requirement: Audit log\nEvery login is logged.\n"
            ),
            f"{CHANGE}/specs/empty-capability/README.md": "no spec.md here\n",
        },
    )


def test_each_group_is_a_story(tmp_path: Path) -> None:
    result = openspec.load_stories(full_change(tmp_path))
    assert [(s.id, s.key, s.title) for s in result.stories] == [
        ("add-auth:1", "add-auth-1", "Login form"),
        ("add-auth:2", "add-auth-2", "Sessions"),
        ("add-auth:3", "add-auth-3", "Documentation"),
    ]
    first = result.stories[0]
    assert first.source == "openspec"
    assert (first.group, first.group_title) == ("add-auth", "Add authentication")
    assert first.path == f"{CHANGE}/tasks.md"
    assert first.change_dir == CHANGE
    assert first.to_dict()["change"] == "add-auth"
    assert result.skipped == () and result.warnings == ()


def test_status_follows_the_checkboxes(tmp_path: Path) -> None:
    stories = openspec.load_stories(full_change(tmp_path)).stories
    assert [s.status for s in stories] == ["done", "in-progress", "ready-for-dev"]
    assert status_from_tasks(0, 0) == "ready-for-dev"
    assert status_from_tasks(1, 3) == "in-progress"
    assert status_from_tasks(3, 3) == "done"


def test_group_tasks_are_nested(tmp_path: Path) -> None:
    story = openspec.load_stories(full_change(tmp_path)).stories[1]
    assert story.tasks == (
        Task("2.1 Issue a token", True),
        Task("2.2 Refresh tokens", False, (Task("2.2.1 Rotate on refresh", False),)),
    )


def test_files_are_the_change_documents_that_exist(tmp_path: Path) -> None:
    ws = full_change(tmp_path)
    first, second = openspec.load_stories(ws).stories[:2]
    # tasks.md is the story's path, not one of its injected files: the prompt carries the
    # story's own group of it.
    assert first.path == f"{CHANGE}/tasks.md"
    # In the order of OpenSpec's default schema: proposal, specs, design.
    assert first.files == (
        f"{CHANGE}/proposal.md",
        f"{CHANGE}/specs/audit/spec.md",
        f"{CHANGE}/specs/auth/spec.md",
        f"{CHANGE}/design.md",
    )
    # A story's record file joins its files once a phase has written it.
    assert first.record_path == f"{CHANGE}/records/group-1.md"
    (ws.root / CHANGE / "records").mkdir()
    (ws.root / CHANGE / "records" / "group-2.md").write_text("## Dev Agent Record\n")
    again = openspec.load_stories(ws).stories
    assert again[1].files[-1] == f"{CHANGE}/records/group-2.md"
    assert f"{CHANGE}/records/group-2.md" not in again[0].files
    assert second.record_path == f"{CHANGE}/records/group-2.md"


def test_missing_design_is_left_out_of_files(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, {f"{CHANGE}/tasks.md": "## 1. Only\n- [ ] 1.1 x\n"})
    (story,) = openspec.load_stories(ws).stories
    assert story.files == ()
    assert story.group_title == "add-auth"
    assert story.requirements == ()


def test_requirements_carry_capability_and_scenarios(tmp_path: Path) -> None:
    story = openspec.load_stories(full_change(tmp_path)).stories[0]
    assert [(r.capability, r.name) for r in story.requirements] == [
        ("audit", "Audit log"),
        ("auth", "Login"),
        ("auth", "Session length"),
    ]
    login = story.requirements[1]
    assert login.text == "Users SHALL log in with e-mail and password."
    assert login.scenarios == (
        Scenario(
            "Valid credentials",
            "- **WHEN** the user submits valid credentials\n- **THEN** a session starts",
        ),
        Scenario(
            "Wrong password", "- **WHEN** the password is wrong\n- **THEN** an error is shown"
        ),
    )
    assert story.requirements[0].scenarios == ()


def test_removed_requirements_are_not_requirements() -> None:
    names = [r.name for r in parse_requirements(SPEC, "auth")]
    assert "Guest access" not in names


def test_archive_is_not_a_source(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {
            "openspec/changes/archive/2024-01-01-old/tasks.md": "## 1. Old\n- [x] 1.1 done\n",
            "openspec/changes/zeta/tasks.md": "## 1. Z\n",
            "openspec/changes/Alpha/tasks.md": "## 1. A\n",
            "openspec/changes/.hidden/tasks.md": "## 1. H\n",
            "openspec/changes/no-tasks-yet/proposal.md": "# Change: Later\n",
        },
    )
    result = openspec.load_stories(ws)
    assert [s.id for s in result.stories] == ["Alpha:1", "zeta:1"]
    # A change without tasks.md has no stories, and says so rather than vanishing.
    assert [(f.path, f.reason.split(":")[0]) for f in result.skipped] == [
        ("openspec/changes/no-tasks-yet/", "no-tasks")
    ]


def test_malformed_tasks_files_are_skipped(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {
            "openspec/changes/a-empty/tasks.md": "",
            "openspec/changes/b-binary/tasks.md": b"## 1. X\n\x00",
            "openspec/changes/c-latin1/tasks.md": "## 1. Caf\xe9\n".encode("latin-1"),
            "openspec/changes/d-no-groups/tasks.md": "# Tasks\n- [ ] loose item\n",
            "openspec/changes/e-good/tasks.md": "## 1. Fine\n",
        },
    )
    result = openspec.load_stories(ws)
    assert [s.id for s in result.stories] == ["e-good:1"]
    assert [(s.path.split("/")[2], s.reason.split(":")[0]) for s in result.skipped] == [
        ("a-empty", "empty"),
        ("b-binary", "binary"),
        ("c-latin1", "not-utf8"),
        ("d-no-groups", "no-task-groups"),
    ]


def test_bad_spec_or_proposal_is_skipped_but_the_stories_stay(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {
            f"{CHANGE}/proposal.md": b"\xff\xfe",
            f"{CHANGE}/tasks.md": "## 1. Still here\n",
            f"{CHANGE}/specs/auth/spec.md": b"\x00",
        },
    )
    result = openspec.load_stories(ws)
    assert [s.id for s in result.stories] == ["add-auth:1"]
    assert {s.path for s in result.skipped} == {
        f"{CHANGE}/proposal.md",
        f"{CHANGE}/specs/auth/spec.md",
    }


def test_duplicate_group_number_warns_and_keeps_the_first(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, {f"{CHANGE}/tasks.md": "## 1. First\n\n## 1. Again\n"})
    result = openspec.load_stories(ws)
    assert [s.title for s in result.stories] == ["First"]
    assert result.warnings == (
        f"{CHANGE}/tasks.md line 3: group 1 appears twice; the first is kept",
    )


def test_configured_openspec_root(tmp_path: Path) -> None:
    make_workspace(tmp_path, {"specs-root/changes/x/tasks.md": "## 2. Two\n"})
    ws = Workspace(root=tmp_path.resolve(), config=Config(paths_openspec="specs-root"))
    assert [s.id for s in openspec.load_stories(ws).stories] == ["x:2"]
