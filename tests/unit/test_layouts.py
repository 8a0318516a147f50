"""BMAD v6 classic as projects write it (tests/fixtures/layouts/v6-classic): split keys,
three-level keys, a letter epic, a ``stories/`` subfolder named by ``story_location``,
statuses as written, and every story's own files only."""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from builders import make_workspace
from promptdeck.core.errors import StoryNotFound
from promptdeck.core.injection.builder import build_injection, build_story_injection
from promptdeck.core.injection.model import Selection
from promptdeck.core.plans import bmad
from promptdeck.core.plans.catalog import (
    group_notes,
    load_catalog,
    load_story_catalog,
    summary_lines,
)
from promptdeck.core.plans.epic_titles import clean_epic_title
from promptdeck.core.project.config import Config
from promptdeck.core.project.workspace import Workspace
from promptdeck.core.run.flow import story_flow
from promptdeck.core.stories.keys import read_entry_keys
from promptdeck.core.stories.model import read_status

LAYOUTS = Path(__file__).resolve().parents[1] / "fixtures" / "layouts"
ART = "_bmad-output/implementation-artifacts"
PLAN = f"{ART}/sprint-status.yaml"


@pytest.fixture
def classic(tmp_path: Path) -> Workspace:
    root = tmp_path / "v6-classic"
    shutil.copytree(LAYOUTS / "v6-classic", root)
    return Workspace(root=root.resolve(), config=Config())


def own_files(workspace: Workspace, story_id: str, **selection: bool) -> dict[str, str]:
    story = load_catalog(workspace).find(story_id)
    injection = build_story_injection(
        workspace, story, Selection(**selection), command_name="dev", count_tokens=False
    )
    return {
        f.path: f.why for f in injection.files if f.included and f.category != "project-context"
    }


# --------------------------------------------------------------------------- every story once


def test_every_story_is_listed_once_with_its_layout_status_and_status_source(
    classic: Workspace,
) -> None:
    catalog = load_catalog(classic)
    rows = {s.id: (s.layout, s.status, s.status_known, s.status_source) for s in catalog.stories}
    assert list(rows) == [
        "1-1", "1-1a", "1-2", "3-1", "3-1-1", "3-1-5", "3-5", "3-5-a", "3-5-b", "4a-1"
    ]  # fmt: skip
    assert rows == {
        "1-1": ("classic", "done", True, f"{PLAN}:15"),
        "1-1a": ("classic", "review", True, f"{PLAN}:16"),
        "1-2": ("classic", "in-progress", True, f"{PLAN}:17"),
        "3-1": ("classic", "done", True, f"{PLAN}:23"),
        "3-1-1": ("classic", "ready-for-dev", True, f"{PLAN}:24"),
        # Written statuses BMAD does not know stay as they are: never backlog, never done.
        "3-1-5": ("classic", "deployed-awaiting-user-smoke", False, f"{PLAN}:25"),
        # Legacy words read as BMAD's own sprint planning reads them.
        "3-5": ("classic", "in-progress", True, f"{PLAN}:26"),
        "3-5-a": ("classic", "backlog", True, f"{PLAN}:27"),
        "3-5-b": ("classic", "ready-for-dev", True, f"{PLAN}:28"),
        "4a-1": ("classic", "done-parcial", False, f"{PLAN}:33"),
    }


def test_keys_past_bmads_grammar_are_read_and_marked_not_lost(classic: Workspace) -> None:
    notes = {s.id: s.off_grammar for s in load_catalog(classic).stories if s.off_grammar}
    assert notes == {
        "3-1-1": "three-level key 3-1-1: BMAD's grammar reads it as story 3-1",
        "3-1-5": "three-level key 3-1-5: BMAD's grammar reads it as story 3-1",
        "3-5-a": "three-level key 3-5-a: BMAD's grammar reads it as story 3-5",
        "3-5-b": "three-level key 3-5-b: BMAD's grammar reads it as story 3-5",
        "4a-1": "letter epic '4a': BMAD's grammar wants an epic number",
    }


def test_the_story_file_and_sprint_status_drift_and_the_story_says_so(classic: Workspace) -> None:
    story = load_catalog(classic).find("1-2")
    assert story.path == f"{ART}/stories/1-2-user-login.md"
    assert story.status_drift == (
        f"{ART}/stories/1-2-user-login.md:3 says 'review'; {PLAN}:17 says 'in-progress'",
    )


def test_an_entry_that_is_no_story_is_kept_with_its_line(classic: Workspace) -> None:
    [entry] = load_catalog(classic).unreadable
    assert (entry.path, entry.line) == (PLAN, 18)
    assert entry.reason.startswith("'tech-debt-cleanup' is not a story key")


def test_epic_titles_are_clean(classic: Workspace) -> None:
    titles = {s.group: s.group_title for s in load_catalog(classic).stories}
    assert titles == {"1": "Foundation", "3": "Offline app", "4A": "Storage spikes"}
    assert clean_epic_title("Auth (9 stories)") == "Auth"
    assert clean_epic_title("Reports — 3 stories") == "Reports"
    assert clean_epic_title("Step-by-step (v2) flows") == "Step-by-step (v2) flows"


def test_the_one_story_lookup_answers_as_the_full_catalog(classic: Workspace) -> None:
    full = load_catalog(classic)
    for story in full.stories:
        assert load_story_catalog(classic, story.id).find(story.id) == story


# --------------------------------------------------------------------------- whose file is it


@pytest.mark.parametrize(
    ("story_id", "expected"),
    [
        # The parent never gets its sub-stories' files, nor the split story's.
        ("1-1", {f"{ART}/1-1-project-setup.md": "own key"}),
        ("1-1a", {f"{ART}/1-1a-ci-pipeline.md": "own key"}),
        ("3-1", {f"{ART}/3-1-pwa-shell.md": "own key"}),
        (
            "3-1-5",
            {
                f"{ART}/stories/3-1-5-install-prompt.md": "own key",
                f"{ART}/3-1-5-review-notes.md": "own key",
            },
        ),
        ("1-2", {f"{ART}/stories/1-2-user-login.md": "own key"}),
        ("3-5", {}),
    ],
)
def test_inspect_lists_exactly_the_storys_own_files(
    classic: Workspace, story_id: str, expected: dict[str, str]
) -> None:
    assert own_files(classic, story_id) == expected


def test_discovery_and_tech_spec_files_wait_for_their_toggles(classic: Workspace) -> None:
    assert own_files(classic, "1-1", discovery=True) == {
        f"{ART}/1-1-project-setup.md": "own key",
        f"{ART}/sprint-1-1-discovery.md": "category pattern",
    }
    # `1-2-tech-spec.md` starts with the key, but its words make it a tech-spec.
    assert f"{ART}/1-2-tech-spec.md" not in own_files(classic, "1-2")
    assert f"{ART}/1-2-tech-spec.md" in own_files(classic, "1-2", tech_spec=True)


def test_a_toggle_with_nothing_behind_it_says_so(classic: Workspace) -> None:
    story = load_catalog(classic).find("1-1a")
    injection = build_story_injection(
        classic, story, Selection(), command_name="dev", count_tokens=False
    )
    assert injection.toggle_notes() == {
        "discovery": "no discovery files for this story",
        "tech-spec": "no tech-spec files for this story",
    }
    assert (
        build_story_injection(
            classic, load_catalog(classic).find("1-1"), Selection(), command_name="dev"
        ).toggle_notes()["discovery"]
        == ""
    )


def test_seed_000_categories_decide_before_the_leading_key(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {
            f"{ART}/a-1-story.md": "# Story A.1: Append\n",
            f"{ART}/a-1-tech-spec.md": "tech spec\n",
            f"{ART}/A-1-discovery.md": "discovery\n",
        },
    )
    off = build_injection(ws, "dev", ["A-1"], include_project_context=False, count_tokens=False)
    assert [f.path for f in off.included()] == [f"{ART}/a-1-story.md"]
    status = {f.path: (f.category, f.status) for f in off.files}
    assert status[f"{ART}/a-1-tech-spec.md"] == ("tech-spec", "excluded")
    assert status[f"{ART}/A-1-discovery.md"] == ("discovery", "excluded")
    on = build_injection(ws, "dev", ["A-1"], False, True, True, count_tokens=False)
    assert len(on.included()) == 3


# --------------------------------------------------------------------------- statuses


@pytest.mark.parametrize(
    ("raw", "status", "known"),
    [
        ("done", "done", True),
        ("drafted", "ready-for-dev", True),
        ("contexted", "in-progress", True),
        ("built", "review", True),
        ("in-review", "review", True),
        ("blocked", "blocked", False),  # only a v7 plan's board shows it as in-progress
        ("**done** (reviewed)", "done", True),
        ("done-parcial", "done-parcial", False),
        ("deployed-awaiting-user-smoke", "deployed-awaiting-user-smoke", False),
        ("dropped", "dropped", False),
    ],
)
def test_statuses_are_read_as_written(raw: str, status: str, known: bool) -> None:
    reading = read_status(raw)
    assert (reading.status, reading.known) == (status, known)


def test_an_unknown_status_is_never_offered_a_fresh_kickoff(classic: Workspace) -> None:
    story = load_catalog(classic).find("3-1-5")
    flow = story_flow(story, [], classic.config)
    assert flow.suggestion is None and not flow.done
    assert "deployed-awaiting-user-smoke" in flow.note


# --------------------------------------------------------------------------- BMAD's grammar

# BMAD's sprint-planning script reads story keys with this pattern (STORY_KEY_RE), re-typed
# here from its definition so the parity does not lean on promptdeck's own copy.
BMAD_GRAMMAR = re.compile(r"^(\d+)-(\d+)([a-z]?)-.+")
KEYS = [
    "1-1-project-setup",
    "1-1a-ci-pipeline",
    "2-6a-split-story",
    "1-10-password-reset",
    "5-4-wcag-2-1-aa-compliance",
    "01-02-zero-padded",
    "10-1-pwa-base",
    "10-1-1-offline",
    "10-1-5-pwa",
    "10-5-a-nav",
    "10-5-b-drawer",
    "10-5-settings",
    "10-9-10-minute-guide",
    "1a-1-letter-epic",
    "a-1-append",
    "3-2",
    "story-1-2-login",
    "tech-debt-cleanup",
]


def test_parity_with_bmads_own_key_grammar() -> None:
    for name, ours in zip(KEYS, read_entry_keys(KEYS), strict=True):
        theirs = BMAD_GRAMMAR.match(name)
        if theirs is None:
            # Past BMAD's grammar: read leniently and marked, or not a story at all.
            assert ours is None or ours.off_grammar, name
            continue
        bmad_key = f"{int(theirs.group(1))}-{int(theirs.group(2))}{theirs.group(3)}"
        assert ours is not None, name
        if ours.off_grammar:
            # A three-level key is a distinct story under the one BMAD reads.
            assert ours.key.startswith(bmad_key + "-"), name
        else:
            assert ours.key == bmad_key, name
    by_name = dict(zip(KEYS, read_entry_keys(KEYS), strict=True))
    assert by_name["5-4-wcag-2-1-aa-compliance"].key == "5-4"  # type: ignore[union-attr]
    assert by_name["10-9-10-minute-guide"].key == "10-9"  # type: ignore[union-attr]
    assert by_name["10-1-1-offline"].key == "10-1-1"  # type: ignore[union-attr]
    assert by_name["10-5-settings"].key == "10-5"  # type: ignore[union-attr]
    assert by_name["01-02-zero-padded"].key == "1-2"  # type: ignore[union-attr]
    assert by_name["tech-debt-cleanup"] is None


# --------------------------------------------------------------------------- bad input


def _with_location(tmp_path: Path, location: str) -> Workspace:
    return make_workspace(
        tmp_path,
        {
            f"{ART}/sprint-status.yaml": (
                f'story_location: "{location}"\ndevelopment_status:\n  1-1-a: backlog\n'
            ),
            f"{ART}/1-1-a.md": "# Story 1.1: A\n",
        },
    )


@pytest.mark.parametrize(
    ("location", "why"),
    [
        ("/etc", "points outside the project; not read"),
        ("{project-root}/../elsewhere", "points outside the project; not read"),
        ("/dev/null", "points outside the project; not read"),
        ("{project-root}/missing", "does not exist"),
        ("{project-root}/fifo", "is not a folder (a file, device or FIFO); not read"),
        ("{output_folder}/stories", "holds the placeholder {output_folder}"),
    ],
)
def test_a_story_location_that_cannot_be_used_is_one_line_and_nothing_outside_is_read(
    tmp_path: Path, location: str, why: str
) -> None:
    ws = _with_location(tmp_path, location)
    os.mkfifo(ws.root / "fifo")
    catalog = load_catalog(ws)
    assert [s.id for s in catalog.stories] == ["1-1"]  # the rest of the plan is still read
    [entry] = catalog.unreadable
    assert (entry.path, entry.line) == (PLAN, 1)
    assert why in entry.reason


def test_two_files_claiming_one_story_are_both_shown_with_the_choice(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {
            f"{ART}/sprint-status.yaml": "development_status:\n  1-1-setup: done\n",
            f"{ART}/1-1-setup.md": "# Story 1.1: Setup\n",
            f"{ART}/stories/1-1-setup.md": "# Story 1.1: Setup (moved)\n",
            f"{ART}/stories/1-1-old-notes.md": "# Story 1.1: Old\n",
        },
    )
    catalog = load_catalog(ws)
    assert [s.path for s in catalog.stories] == [f"{ART}/1-1-setup.md"]
    reasons = {u.path: u.reason for u in catalog.unreadable}
    assert reasons == {
        f"{ART}/stories/1-1-old-notes.md": (
            f"also claims story 1-1; {ART}/1-1-setup.md is used (its name is the "
            "sprint-status entry's)"
        ),
        f"{ART}/stories/1-1-setup.md": (
            f"also claims story 1-1; {ART}/1-1-setup.md is used (both names are as good; "
            f"{ART}/1-1-setup.md comes first by folder and name)"
        ),
    }


def test_a_file_that_lost_its_claim_is_listed_with_the_story_and_never_sent(
    tmp_path: Path,
) -> None:
    ws = make_workspace(
        tmp_path,
        {
            f"{ART}/sprint-status.yaml": "development_status:\n  1-1-login: ready-for-dev\n",
            f"{ART}/1-1-login.md": "# Story 1.1: Login\n\nStatus: ready-for-dev\n",
            f"{ART}/1-1-login-old.md": "# Story 1.1: Login, first draft\n\nStatus: done\n",
        },
    )
    story = load_catalog(ws).find("1-1")
    assert [claim.path for claim in story.second_claims] == [f"{ART}/1-1-login-old.md"]
    # The loser's name starts with the story key, so the key scan finds it: it is a row that
    # says which file the story uses, and doctor's choice holds in the prompt too.
    assert own_files(ws, "1-1") == {f"{ART}/1-1-login.md": "own key"}
    injection = build_story_injection(ws, story, Selection(), command_name="dev")
    [old] = [f for f in injection.files if f.path == f"{ART}/1-1-login-old.md"]
    assert not old.included
    assert old.reason.startswith("also claims story 1-1")


def test_an_unreadable_key_says_where_and_an_unknown_one_gets_the_nearest(
    classic: Workspace,
) -> None:
    catalog = load_catalog(classic)
    with pytest.raises(StoryNotFound, match=rf"is in {PLAN}:18 but could not be read"):
        catalog.find("tech-debt-cleanup")
    with pytest.raises(StoryNotFound, match=r"nearest: 3-1-5"):
        catalog.find("3-1-6")


def test_loading_notes_are_one_line_per_kind(classic: Workspace) -> None:
    groups = group_notes(load_catalog(classic), run_warnings=("agent not found",))
    kinds = [g.kind for g in groups]
    assert kinds[0] == "run warnings"
    assert {"unreadable plan entries", "unknown statuses", "keys past BMAD's grammar"} <= set(kinds)
    lines = summary_lines(groups)
    assert len(lines) == len(groups)
    assert "5 keys past BMAD's grammar (details: promptdeck doctor)" in lines


def test_a_lone_entry_takes_the_deeper_key_its_file_heading_gives(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {
            f"{ART}/sprint-status.yaml": "development_status:\n  10-5-a-nav: review\n",
            f"{ART}/10-5-a-nav.md": "# Story 10.5.a: Nav\n\nStatus: review\n",
        },
    )
    [story] = bmad.load_stories(ws).stories
    assert (story.id, story.status, story.path) == ("10-5-a", "review", f"{ART}/10-5-a-nav.md")
    assert "three-level key 10-5-a" in story.off_grammar
