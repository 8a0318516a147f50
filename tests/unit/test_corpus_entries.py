"""Sprint-status entries and story ids as real plans write them: dotted epics (``5.5-1-…``,
``6.2-p2-…``), a track fused to its number (``15-R1-…``), a heading naming the whole entry,
a split story its name writes (``105-3b``) and stories listed under ``epics:``."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import make_workspace
from promptdeck.core.plans.catalog import load_catalog, load_story_catalog
from promptdeck.core.plans.sprint_status import (
    SprintStatusError,
    parse_plan_entries,
    parse_story_list,
)
from promptdeck.core.plans.writeback import set_sprint_status
from promptdeck.core.project.workspace import Workspace
from promptdeck.core.stories.keys import is_story_entry, read_entry_keys, story_entry_keys

ART = "_bmad-output/implementation-artifacts"
PLAN = f"{ART}/sprint-status.yaml"


def story_file(key: str, title: str, status: str) -> str:
    return f"# Story {key}: {title}\n\nStatus: {status}\n\n## Story\n\nAs a user.\n"


def workspace(tmp_path: Path, plan: str, **files: str) -> Workspace:
    return make_workspace(
        tmp_path / "p", {PLAN: plan, **{f"{ART}/{n}": t for n, t in files.items()}}
    )


# 1. Dotted epics


@pytest.mark.parametrize(
    ("name", "story_id", "key", "epic"),
    [
        ("5.5-1-legacy-cleansing-rules-documentation", "5.5-1", "5-5-1", "5.5"),
        ("2.5-1-event-stream-command-queue", "2.5-1", "2-5-1", "2.5"),
        ("7.6-0-alembic-migration-script", "7.6-0", "7-6-0", "7.6"),
        ("6.2-p2-real-data-validation-config", "6.2-p2", "6-2-p2", "6.2"),
    ],
)
def test_an_entry_of_a_dotted_epic_is_a_story_of_that_epic(
    name: str, story_id: str, key: str, epic: str
) -> None:
    [read] = read_entry_keys([name])
    assert read is not None
    assert (read.id, read.key, read.epic) == (story_id, key, epic)
    assert read.off_grammar.startswith(f"dotted epic {epic}")


def test_a_dotted_epic_entry_and_its_retrospective_name_no_story() -> None:
    names = ["epic-5.5", "5.5-1-rules", "epic-5.5-retrospective"]
    assert not is_story_entry("epic-5.5")
    keys = story_entry_keys(names)
    assert keys[0] is None and keys[2] is None
    assert keys[1] is not None and keys[1].id == "5.5-1"


def test_a_dotted_epic_story_takes_its_status_from_sprint_status(tmp_path: Path) -> None:
    plan = (
        "development_status:\n"
        "  epic-5.5: done\n"
        "  5.5-3-legacy-parity-validation: done\n"
        "  epic-5.5-retrospective: optional\n"
    )
    ws = workspace(
        tmp_path,
        plan,
        **{
            "5.5-3-legacy-parity-validation.md": story_file(
                "5.5.3", "Legacy Parity Validation", "in-review"
            )
        },
    )
    catalog = load_catalog(ws)
    assert not catalog.unreadable
    [story] = catalog.stories
    assert (story.id, story.status, story.group) == ("5.5-3", "done", "5.5")
    assert story.path == f"{ART}/5.5-3-legacy-parity-validation.md"
    assert story.status_source == f"{PLAN}:3"
    assert catalog.find("5.5.3") is story


# 2. A track fused to its story number


def test_a_track_letter_fused_to_its_number_is_read_like_a_track_key(tmp_path: Path) -> None:
    [read] = read_entry_keys(["15-R1-unify-value-types"])
    assert read is not None
    assert (read.id, read.key, read.slug) == ("15-R1", "15-r1", "unify-value-types")
    assert read.off_grammar.startswith("track key 15-R1 (track 'R' of epic 15)")
    plan = "development_status:\n  epic-15: done\n  15-R1-unify-value-types: done\n"
    catalog = load_catalog(workspace(tmp_path, plan))
    assert not catalog.unreadable
    assert [(s.id, s.status, s.group) for s in catalog.stories] == [("15-R1", "done", "15")]


# 3. A heading that names the whole entry


def test_a_heading_naming_the_whole_entry_is_that_entrys_story(tmp_path: Path) -> None:
    name = "7-1-arkit-video-recording-session"
    plan = f"development_status:\n  epic-7: done\n  {name}: done\n"
    ws = workspace(
        tmp_path, plan, **{f"{name}.md": story_file(name, "ARKit Video Recording", "done")}
    )
    catalog = load_catalog(ws)
    assert [(s.id, s.key, s.path) for s in catalog.stories] == [("7-1", "7-1", f"{ART}/{name}.md")]
    assert catalog.stories[0].title == "ARKit Video Recording"
    assert load_story_catalog(ws, "7-1").find("7-1").path == f"{ART}/{name}.md"


# 4. A split story its file name writes


def test_a_split_story_keeps_the_key_its_name_writes(tmp_path: Path) -> None:
    plan = "development_status:\n  epic-105: in-progress\n  105-3-stage-groupes: ready-for-dev\n"
    ws = workspace(
        tmp_path,
        plan,
        **{
            "story-105-3-stage-groupes.md": story_file("105.3", "Groupes", "ready-for-dev"),
            "story-105-3b-fix-move-race-condition.md": story_file("105.3.b", "Fix race", "done"),
        },
    )
    catalog = load_catalog(ws)
    assert [(s.id, s.key, s.status) for s in catalog.stories] == [
        ("105-3", "105-3", "ready-for-dev"),
        ("105-3b", "105-3b", "done"),
    ]
    path = f"{ART}/story-105-3b-fix-move-race-condition.md"
    assert load_story_catalog(ws, "105-3b").find("105-3b").path == path


# 5. Stories listed under `epics:`

LISTED = """---
# Sprint Status Tracking
epics:
  - id: epic-1
    title: 'Foundation'
    status: done
    stories:
      - id: story-1.1
        title: 'Monorepo Scaffolding'
        depends_on:
          - story-1.0
        status: done
      - id: story-1.2
        status: review
  - id: epic-2
    status: backlog
    stories:
      - id: story-2.1
        title: 'Relay Connection'
        status: backlog
"""


def test_stories_listed_under_epics_are_read_with_their_status_lines() -> None:
    assert parse_story_list(LISTED) is not None
    entries, listed = parse_plan_entries(LISTED)
    assert listed
    assert [(e.name, e.value, e.line) for e in entries] == [
        ("1-1", "done", 12),
        ("1-2", "review", 14),
        ("2-1", "backlog", 20),
    ]


def test_a_listed_story_with_no_status_is_malformed_on_its_line() -> None:
    text = "epics:\n  - id: epic-1\n    stories:\n      - id: story-1.1\n        title: x\n"
    with pytest.raises(SprintStatusError) as raised:
        parse_plan_entries(text)
    assert raised.value.line == 4


def test_a_sprint_status_listing_stories_under_epics_gives_each_its_status(
    tmp_path: Path,
) -> None:
    ws = workspace(
        tmp_path,
        LISTED,
        **{"1-1-monorepo-scaffolding.md": story_file("1.1", "Monorepo Scaffolding", "review")},
    )
    catalog = load_catalog(ws)
    assert not catalog.unreadable
    assert [(s.id, s.status, s.path) for s in catalog.stories] == [
        ("1-1", "done", f"{ART}/1-1-monorepo-scaffolding.md"),
        ("1-2", "review", None),
        ("2-1", "backlog", None),
    ]
    assert catalog.stories[0].status_source == f"{PLAN}:12"
    assert "listed as a story under 'epics:'" in catalog.stories[0].off_grammar
    # The status write-back only edits BMAD's own development_status mapping.
    with pytest.raises(SprintStatusError):
        set_sprint_status(LISTED, "1-2", "done")
