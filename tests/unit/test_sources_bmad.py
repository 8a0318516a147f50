"""The BMAD source: sprint-status.yaml, story files, merging, and malformed input."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from builders import make_workspace
from promptdeck.core.plans import bmad
from promptdeck.core.plans.bmad_story_file import parse_story_text
from promptdeck.core.plans.sprint_status import SprintStatusError, parse_sprint_status
from promptdeck.core.project.config import Config
from promptdeck.core.project.workspace import Workspace
from promptdeck.core.stories.model import Task, read_status

ARTIFACTS = "_bmad-output/implementation-artifacts"
PLANNING = "_bmad-output/planning-artifacts"


def art(name: str) -> str:
    return f"{ARTIFACTS}/{name}"


SPRINT_STATUS = """\
# generated: 2024-03-04
# STATUS DEFINITIONS: backlog | ready-for-dev | in-progress | review | done
---
generated: 2024-03-04
project: 'demo: project'
story_location: "{project-root}/_bmad-output/implementation-artifacts"
notes: |
  free text: with colons
  - and list-looking lines

development_status:
  epic-1: in-progress
  1-1-user-login: done   # shipped
  "1-2-user-registration": 'review'
  1-10-password-reset: backlog
  1-9-remember-me: ready-for-dev
  epic-1-retrospective: optional

  epic-2: backlog
  2-1-profile-page: "in-progress"
"""


# --------------------------------------------------------------------------- sprint-status


def test_sprint_status_entries_in_file_order_with_quotes_and_comments() -> None:
    entries = parse_sprint_status(SPRINT_STATUS)
    assert [(e.name, e.value) for e in entries] == [
        ("epic-1", "in-progress"),
        ("1-1-user-login", "done"),
        ("1-2-user-registration", "review"),
        ("1-10-password-reset", "backlog"),
        ("1-9-remember-me", "ready-for-dev"),
        ("epic-1-retrospective", "optional"),
        ("epic-2", "backlog"),
        ("2-1-profile-page", "in-progress"),
    ]
    assert entries[1].line == 13


@pytest.mark.parametrize(
    ("text", "line", "message"),
    [
        ("development_status:\n\t1-1-a: done\n", 2, "tab in indentation"),
        ("development_status:\n  1-1-a: done\n    1-2-b: done\n", 3, "unexpected indentation"),
        ("development_status:\n  1-1-a: 'done\n", 2, "unterminated"),
        ("development_status:\n  1-1-a: done\n  1-1-a: review\n", 3, "appears twice"),
        ("development_status:\n  1-1-a:\n", 2, "has no status"),
        ("development_status:\n  1-1-a: |\n", 2, "has no status"),
        ("development_status: done\n", 1, "must be a mapping"),
        ("- 1-1-a\ndevelopment_status:\n", 1, "expected 'key: value'"),
        ("development_status:\n  '1-1-a': 'done' trailing\n", 2, "unexpected text"),
        ("development_status:\n  1-1-a:done\n", 2, "expected 'key: value'"),
    ],
)
def test_sprint_status_malformed_lines_are_named(text: str, line: int, message: str) -> None:
    with pytest.raises(SprintStatusError, match=message) as caught:
        parse_sprint_status(text)
    assert caught.value.line == line
    assert str(caught.value).startswith(f"line {line}: ")


def test_sprint_status_without_development_status_is_malformed() -> None:
    with pytest.raises(SprintStatusError, match="no development_status mapping"):
        parse_sprint_status("project: x\n")


def test_empty_development_status_flow_mapping_is_accepted() -> None:
    assert parse_sprint_status("development_status: {}\n") == []


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("done", "done"),
        ("Done", "done"),
        ("In Progress", "in-progress"),
        ("InProgress", "in-progress"),
        ("ready-for-dev", "ready-for-dev"),
        ("Ready for Review", "review"),
        ("drafted", "ready-for-dev"),
        ("Draft", "backlog"),
        ("Approved", "ready-for-dev"),
        ("**done** (reviewed)", "done"),
        ("✅ Done", "done"),
        ("optional", None),
        ("shipped-ish", None),
    ],
)
def test_read_status(raw: str, expected: str | None) -> None:
    reading = read_status(raw)
    assert (reading.status if reading.known else None) == expected


def test_stories_from_sprint_status_only(tmp_path: Path) -> None:
    ws = make_workspace(tmp_path, {art("sprint-status.yaml"): SPRINT_STATUS})
    result = bmad.load_stories(ws)
    assert [s.id for s in result.stories] == ["1-1", "1-2", "1-9", "1-10", "2-1"]
    first = result.stories[0]
    assert (first.title, first.status, first.group, first.source) == (
        "User login",
        "done",
        "1",
        "bmad",
    )
    assert first.path is None and first.files == () and first.tasks == ()
    assert result.skipped == () and result.warnings == ()


def test_malformed_sprint_status_is_skipped_and_story_files_still_load(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {
            art("sprint-status.yaml"): "development_status:\n  1-1-a: done\n\t1-2-b: done\n",
            art("1-3-c.md"): "# Story 1.3: Third\n\nStatus: review\n",
        },
    )
    result = bmad.load_stories(ws)
    # One id style everywhere: a story known only from its file keeps the dashed form.
    assert [s.id for s in result.stories] == ["1-3"]
    assert len(result.skipped) == 1
    assert result.skipped[0].path == art("sprint-status.yaml")
    assert result.skipped[0].reason.startswith("malformed: line 3: tab in indentation")


def test_unknown_entries_are_unreadable_with_their_line_and_unknown_statuses_kept(
    tmp_path: Path,
) -> None:
    text = "development_status:\n  tech-debt-cleanup: backlog\n  1-1-a: shipped\n"
    ws = make_workspace(tmp_path, {art("sprint-status.yaml"): text})
    result = bmad.load_stories(ws)
    # An unknown status is shown as written, never as backlog or done.
    assert [(s.id, s.status, s.status_known) for s in result.stories] == [("1-1", "shipped", False)]
    assert result.stories[0].status_source == art("sprint-status.yaml") + ":3"
    [entry] = result.unreadable
    assert (entry.path, entry.line) == (art("sprint-status.yaml"), 2)
    assert "'tech-debt-cleanup' is not a story key" in entry.reason


# --------------------------------------------------------------------------- story files

BMAD_STORY = """\
<!-- Powered by BMAD-CORE -->

# Story 1.2: User Registration

Status: in-progress

## Story

As a visitor, I want to register.

## Acceptance Criteria

1. Given a form, when submitted, then an account exists.

## Tasks / Subtasks

- [x] Task 1: Form (AC: 1)
  - [x] 1.1 Fields
  - [ ] 1.2 Validation
    * [X] 1.2.1 Email format
Some continuation prose that is not a task.
- [ ] Task 2: Persistence
\t- [ ] 2.1 Tab-indented subtask

## Dev Notes

- [ ] not a task: outside the Tasks section
"""


def test_parse_bmad_story_file_with_nested_tasks() -> None:
    story = parse_story_text(BMAD_STORY, "x.md")
    assert story is not None
    assert (story.id, story.key, story.title, story.raw_status) == (
        "1.2",
        "1-2",
        "User Registration",
        "in-progress",
    )
    assert story.tasks == (
        Task(
            "Task 1: Form (AC: 1)",
            True,
            (
                Task("1.1 Fields", True),
                Task("1.2 Validation", False, (Task("1.2.1 Email format", True),)),
            ),
        ),
        Task("Task 2: Persistence", False, (Task("2.1 Tab-indented subtask", False),)),
    )


@pytest.mark.parametrize(
    ("status_block", "expected"),
    [
        ("**Status:** Done", "Done"),
        ("**Status**: review", "review"),
        ("- **Status:** in-progress", "in-progress"),
        ("## Status\n\nDraft", "Draft"),
        ("## Status: Approved", "Approved"),
        ("", None),
    ],
)
def test_status_line_variants(status_block: str, expected: str | None) -> None:
    text = f"# Story A-1: Build the thing\n\n{status_block}\n\n## Story\n\nStatus: not this one\n"
    story = parse_story_text(text, "a.md")
    assert story is not None and story.id == "A-1"
    assert story.raw_status == expected


def test_first_heading_after_front_matter_and_not_in_code_fences() -> None:
    text = "---\ntitle: x\n# not a heading\n---\n\n```\n# nor this\n```\n# Story 3_4: Fenced\n"
    story = parse_story_text(text, "a.md")
    assert story is not None and (story.id, story.key, story.title) == ("3_4", "3-4", "Fenced")


@pytest.mark.parametrize(
    "text",
    [
        "# Notes about story 1.2\n",
        "## Story 1.2: Second-level heading\n",
        "# Story: no key\n",
        "# Story 12: single-part key\n",
        "Intro\n\n# Tech-Spec: Story A-1\n",
    ],
)
def test_not_a_story_heading(text: str) -> None:
    assert parse_story_text(text, "a.md") is None


def test_story_file_merges_with_sprint_status_entry(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {
            art("sprint-status.yaml"): "development_status:\n  1-2-user-registration: review\n",
            art("1-2-user-registration.md"): BMAD_STORY,
        },
    )
    result = bmad.load_stories(ws)
    assert len(result.stories) == 1
    story = result.stories[0]
    # The sprint-status spelling is the id; the file gives the title and tasks.
    assert (story.id, story.key, story.title) == ("1-2", "1-2", "User Registration")
    assert story.path == art("1-2-user-registration.md")
    assert story.files == (art("1-2-user-registration.md"),)
    assert len(story.tasks) == 2
    # sprint-status.yaml wins a disagreement; the story says where its status came from
    # and that its file drifts.
    assert story.status == "review"
    assert story.status_source == art("sprint-status.yaml") + ":2"
    assert story.status_drift == (
        f"{art('1-2-user-registration.md')}:5 says 'in-progress'; "
        f"{art('sprint-status.yaml')}:2 says 'review'",
    )
    assert result.warnings == ()


def test_file_only_story_keeps_heading_id_and_defaults_to_ready_for_dev(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path, {art("sprint-A-1-story.md"): "# Story A-1: Seed-style\n\nSome text.\n"}
    )
    (story,) = bmad.load_stories(ws).stories
    assert (story.id, story.key, story.group, story.status) == ("A-1", "a-1", "A", "ready-for-dev")
    assert story.group_title == ""  # no title known: the id alone is shown


def test_epic_titles_from_planning_epic_files(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {
            f"{PLANNING}/epics.md": "# Epics\n\n## Epic 1: Accounts\n\n## Epic 2 - Billing\n",
            f"{PLANNING}/prd.md": "## Epic 3: Not an epic file\n",
            art("sprint-status.yaml"): (
                "development_status:\n  1-1-a: done\n  2-1-b: done\n  3-1-c: done\n"
            ),
        },
    )
    titles = [s.group_title for s in bmad.load_stories(ws).stories]
    assert titles == ["Accounts", "Billing", ""]


def test_natural_order_and_epic_grouping(tmp_path: Path) -> None:
    entries = "".join(f"  {key}-x: backlog\n" for key in ("10-1", "2-1", "1-10", "1-9", "1-2"))
    ws = make_workspace(tmp_path, {art("sprint-status.yaml"): f"development_status:\n{entries}"})
    stories = bmad.load_stories(ws).stories
    assert [s.id for s in stories] == ["1-2", "1-9", "1-10", "2-1", "10-1"]
    assert [s.group for s in stories] == ["1", "1", "1", "2", "10"]


def test_discovery_and_tech_spec_shaped_files_are_never_stories(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {
            art("sprint-1-1-discovery-story.md"): "# Story 1.1: Looks like one\n",
            art("tech-spec-1-2-x.md"): "# Story 1.2: Looks like one\n",
            art("notes-on-discovery.md"): "# Story 1.4: Looks like one\n",
        },
    )
    result = bmad.load_stories(ws)
    assert result.stories == () and result.skipped == ()


def test_a_file_named_after_its_key_is_a_story_whatever_its_slug_says(tmp_path: Path) -> None:
    # A story file is found by its heading: a word in its slug does not make a story's own
    # file a discovery note or a tech-spec (the injection keeps it as the story's own file).
    ws = make_workspace(
        tmp_path,
        {
            art("1-3-tech-spec.md"): "# Story 1.3: Write the tech spec\n",
            art("22-3-create-agents-md-for-cross-tool-agent-discovery.md"): (
                "# Story 22.3: Create AGENTS.md\n\nStatus: done\n"
            ),
        },
    )
    stories = {s.id: s for s in bmad.load_stories(ws).stories}
    assert stories["1-3"].path == art("1-3-tech-spec.md")
    assert stories["22-3"].path == art("22-3-create-agents-md-for-cross-tool-agent-discovery.md")
    assert stories["22-3"].title == "Create AGENTS.md"


def test_malformed_candidates_are_skipped_with_reasons(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {
            art("1-1-good.md"): "# Story 1.1: Good\n",
            art("1-2-empty.md"): "",
            art("1-3-blank.md"): "  \n\n",
            art("1-4-binary.md"): b"# Story 1.4: x\n\x00\x01",
            art("1-5-latin1.md"): "# Story 1.5: Café\n".encode("latin-1"),
            art("3-9-draft.md"): "notes from the planning call\n",
            art("2-1-review.md"): "# Code review of story 2.1\n",
            art("context-notes.md"): "# Architecture notes\n",
            art("untitled.md"): "just prose, no heading\n",
            art("run.log"): "\x00 binary log, never opened",
        },
    )
    result = bmad.load_stories(ws)
    assert [s.id for s in result.stories] == ["1-1"]
    reasons = {Path(s.path).name: s.reason for s in result.skipped}
    assert reasons == {
        "1-2-empty.md": "empty",
        "1-3-blank.md": "empty",
        "1-4-binary.md": "binary: NUL byte at offset 15",
        "1-5-latin1.md": "not-utf8: invalid byte at offset 16",
        "3-9-draft.md": "no-story-heading: no heading, expected '# Story <key>: <title>'",
    }
    # A code review named for story 2-1 is no malformed story: it is a companion, and with
    # no story 2-1 it belongs to none.
    assert all(not s.companions for s in result.stories)


def test_unreadable_candidate_is_skipped(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = make_workspace(tmp_path, {art("1-1-locked.md"): "# Story 1.1: Locked\n"})
    real_open = os.open

    def deny(path: str | os.PathLike[str], flags: int, *args: int) -> int:
        if str(path).endswith("1-1-locked.md"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args)

    monkeypatch.setattr(os, "open", deny)
    result = bmad.load_stories(ws)
    assert result.stories == ()
    assert [(s.path, s.reason) for s in result.skipped] == [
        (art("1-1-locked.md"), "unreadable: Permission denied")
    ]


def test_duplicate_story_key_keeps_the_first_file(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {
            art("1-2-a.md"): "# Story 1.2: First\n",
            art("1.2.b.md"): "# Story 1-2: Second\n",
        },
    )
    result = bmad.load_stories(ws)
    assert [s.title for s in result.stories] == ["First"]
    assert [s.path for s in result.skipped] == [art("1.2.b.md")]
    assert result.skipped[0].reason.startswith("duplicate: story 1-2 is also")


def test_a_file_named_for_its_key_beats_one_that_only_claims_it(tmp_path: Path) -> None:
    from promptdeck.core.plans.catalog import load_catalog, load_story_catalog

    ws = make_workspace(
        tmp_path,
        {
            art("0-9-dup.md"): "# Story 1.1: Impostor\n",
            art("1-1-real.md"): "# Story 1.1: Real\n",
        },
    )
    result = bmad.load_stories(ws)
    assert [s.title for s in result.stories] == ["Real"]
    assert [s.path for s in result.skipped] == [art("0-9-dup.md")]
    # The full catalog and the narrowed one-story lookup agree.
    assert load_catalog(ws).find("1-1") == load_story_catalog(ws, "1-1").find("1-1")


def test_story_heading_deep_in_a_long_file_and_tasks_past_the_head(tmp_path: Path) -> None:
    front = "---\n" + "".join(f"key{i}: value {i}\n" for i in range(600)) + "---\n"
    tail = "## Tasks / Subtasks\n\n" + "".join(f"- [x] Task {i}\n" for i in range(400))
    ws = make_workspace(
        tmp_path, {art("1-1-long.md"): f"{front}# Story 1.1: Long\n\nStatus: done\n\n{tail}"}
    )
    (story,) = bmad.load_stories(ws).stories
    assert story.title == "Long" and story.status == "done"
    assert len(story.tasks) == 400 and story.tasks[-1] == Task("Task 399", True)


def test_symlink_to_outside_the_root_is_skipped(tmp_path: Path) -> None:
    outside = tmp_path / "outside.md"
    outside.write_text("# Story 9.9: Elsewhere\n", encoding="utf-8")
    root = tmp_path / "project"
    ws = make_workspace(root, {art("sprint-status.yaml"): "development_status: {}\n"})
    (root / ARTIFACTS / "9-9-link.md").symlink_to(outside)
    result = bmad.load_stories(ws)
    assert result.stories == ()
    assert [(s.path, s.reason.split(":")[0]) for s in result.skipped] == [
        (art("9-9-link.md"), "outside-project")
    ]


def test_no_artifacts_folder_means_no_stories(tmp_path: Path) -> None:
    result = bmad.load_stories(make_workspace(tmp_path, {}))
    assert result.stories == () and result.skipped == () and result.warnings == ()


def test_configured_artifacts_folder(tmp_path: Path) -> None:
    make_workspace(tmp_path, {"docs/stories/1-1-a.md": "# Story 1.1: Moved\n"})
    ws = Workspace(root=tmp_path.resolve(), config=Config(paths_artifacts="docs/stories"))
    (story,) = bmad.load_stories(ws).stories
    assert story.path == "docs/stories/1-1-a.md"
