"""Keys as projects write them: tracks inside an epic (``15-TD-3``), word tracks (``HF-18``,
``TD-15b-2a``), two entries never merged on a guessed key, a real collision as one line; and
epic titles without the notes sprint-status comments carry."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from builders import make_workspace
from promptdeck.core.plans.catalog import group_notes, load_catalog, load_story_catalog
from promptdeck.core.plans.epic_titles import clean_epic_title
from promptdeck.core.project.config import Config
from promptdeck.core.project.workspace import Workspace
from promptdeck.core.stories.keys import epic_tracks, read_entry_keys

LAYOUTS = Path(__file__).resolve().parents[1] / "fixtures" / "layouts"
ART = "_bmad-output/implementation-artifacts"
PLAN = f"{ART}/sprint-status.yaml"


@pytest.fixture
def nested(tmp_path: Path) -> Workspace:
    shutil.copytree(LAYOUTS / "v6-nested", tmp_path / "v6-nested")
    return Workspace(root=(tmp_path / "v6-nested").resolve(), config=Config())


def ids(names: list[str], tracks: tuple[str, ...] = ()) -> list[str | None]:
    return [key.id if key else None for key in read_entry_keys(names, epic_tracks(tracks))]


def test_a_track_inside_an_epic_is_a_story_of_that_epic() -> None:
    [key] = read_entry_keys(["15-TD-3-remove-legacy-cache"])
    assert key is not None
    assert (key.id, key.key, key.slug) == ("15-TD-3", "15-td-3", "remove-legacy-cache")
    assert key.off_grammar.startswith("track key 15-TD-3 (track 'TD' of epic 15)")


def test_a_word_track_keeps_both_of_its_numbers() -> None:
    [key] = read_entry_keys(["TD-15b-2a-rename-flags"])
    assert key is not None
    assert (key.id, key.slug) == ("TD-15b-2a", "rename-flags")


def test_two_entries_are_never_merged_on_a_guessed_key() -> None:
    assert ids(["HF-18-v4-login-crash", "HF-18-recent-items-order"]) == [
        "HF-18-v4",
        "HF-18-recent",
    ]
    # Apart as far as it takes, up to the entry's whole name.
    assert ids(["HF-18-v4-a", "HF-18-v4-b", "HF-18-v4"]) == ["HF-18-v4-a", "HF-18-v4-b", "HF-18-v4"]
    # A letter epic's two entries too.
    assert ids(["a-1-login", "a-1-logout"]) == ["a-1-login", "a-1-logout"]
    # Told apart by the words they do not share, whatever their order; an entry written
    # twice stays whole (the source reports that collision).
    assert ids(["HF-18-x-b-1", "HF-18-y", "HF-18-x-a", "HF-18-x-b-2", "HF-18-y"]) == [
        "HF-18-x-b-1",
        "HF-18-y",
        "HF-18-x-a",
        "HF-18-x-b-2",
        "HF-18-y",
    ]


def test_thousands_of_entries_on_one_guessed_key_are_told_apart_at_once() -> None:
    # Each entry was compared with every other one: 40,000 of them took the better part of
    # an hour. Sorted, each needs only its neighbours.
    names = [f"HF-18-w{number}-fix" for number in range(40_000)]
    assert ids(names) == [f"HF-18-w{number}" for number in range(40_000)]


@pytest.mark.parametrize(
    ("names", "tracks", "expected"),
    [
        # BMAD's grammar, and what promptdeck already read past it, read as they did.
        (["1-2-user-login", "2-6a-split", "5-4-wcag-2-1-aa"], (), ["1-2", "2-6a", "5-4"]),
        (["1-2-a", "1-2-b"], (), ["1-2", "1-2"]),
        (["10-1-1-offline", "10-1-5-pwa"], (), ["10-1-1", "10-1-5"]),
        (["10-1-10-minute-guide"], (), ["10-1"]),
        (["gov-1-1-rank", "petition-2a-1-x"], ("gov-epic-1",), ["gov-1-1", "petition-2a-1"]),
        (["hardening-1-x", "a-1-x", "1a-1-x"], (), ["hardening-1", "a-1", "1a-1"]),
        (["0-4bis-x", "1bis-2bis-y"], (), ["0-4bis", "1bis-2bis"]),
        (["story-1-2-login", "notes"], (), [None, None]),
    ],
)  # fmt: skip
def test_todays_keys_read_as_they_did(
    names: list[str], tracks: tuple[str, ...], expected: list[str | None]
) -> None:
    assert ids(names, tracks) == expected


def test_track_stories_of_the_nested_layout(nested: Workspace) -> None:
    catalog = load_catalog(nested)
    stories = {s.id: s for s in catalog.stories}
    assert stories["15-TD-1"].path == f"{ART}/epic15/15-TD-1-drop-legacy-cache.md"
    assert (stories["15-TD-1"].group, stories["15-TD-1"].status) == ("15", "done")
    assert stories["15-TD-2"].path == f"{ART}/epic15/15-TD-2-split-config.md"
    assert stories["HF-18-v4"].path == f"{ART}/hotfixes/HF-18-v4-login-crash.md"
    assert stories["HF-18-recent"].path == f"{ART}/hotfixes/HF-18-recent-items-order.md"
    assert (stories["HF-18-v4"].status, stories["HF-18-recent"].status) == ("done", "in-progress")
    assert stories["TD-15b-2a"].path == f"{ART}/hotfixes/TD-15b-2a-rename-flags.md"
    assert not any("not a story key" in u.reason for u in catalog.unreadable)
    assert "HF-18" not in stories
    assert load_story_catalog(nested, "HF-18-recent").find("HF-18-recent").path == (
        f"{ART}/hotfixes/HF-18-recent-items-order.md"
    )


def test_a_story_file_of_a_track_key_with_no_entry_is_marked_a_track(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {
            f"{ART}/sprint-status.yaml": "development_status:\n  15-1-a: done\n",
            f"{ART}/15-TD-7-trim-logs.md": "# Story 15-TD-7: Trim logs\n",
        },
    )
    story = load_catalog(ws).find("15-TD-7")
    assert (story.group, story.path) == ("15", f"{ART}/15-TD-7-trim-logs.md")
    assert story.off_grammar.startswith("track key 15-TD-7")


def test_a_real_collision_is_one_line_naming_both_lines(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {
            PLAN: (
                "development_status:\n"
                "  HF-18-v4-login-crash: done\n"
                "  hf-18-v4-login-crash: in-progress\n"
                "  HF-18-recent-items: backlog\n"
                "  1-2-login: done\n"
                "  1-2-logout: done\n"
            ),
        },
    )
    catalog = load_catalog(ws)
    assert [s.id for s in catalog.stories] == ["1-2", "HF-18-recent", "HF-18-v4-login-crash"]
    lines = next(g.lines for g in group_notes(catalog) if g.kind == "unreadable plan entries")
    assert lines == (
        f"{PLAN}:3: 'hf-18-v4-login-crash' is story HF-18-v4-login-crash again (first on "
        "line 2, 'HF-18-v4-login-crash'); the first is used",
        f"{PLAN}:6: '1-2-logout' is story 1-2 again (first on line 5, '1-2-login'); the first "
        "is used",
    )


# ------------------------------------------------------------------------ epic titles


@pytest.mark.parametrize(
    ("written", "title"),
    [
        ("Upkeep (~57 points, 10 stories) — reviewed 2026-01-09 by the PM", "Upkeep"),
        ("Export — reviewed 2026-01-08", "Export"),
        ("Offline (~21 points)", "Offline"),
        ("Auth (9 stories)", "Auth"),
        ("Search - 12 points", "Search"),
        ("Review Queue", "Review Queue"),
    ],
)  # fmt: skip
def test_clean_epic_title(written: str, title: str) -> None:
    assert clean_epic_title(written) == title


def test_epic_titles_come_from_the_planning_headings_first(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {
            PLAN: (
                "development_status:\n"
                "  # Epic 1: Accounts (~30 pts) · owner: Ana\n"
                "  epic-1: in-progress\n  1-1-a: done\n"
                "  # Epic 2: Billing, phase one\n"
                "  epic-2: backlog\n  2-1-b: backlog\n"
            ),
            "_bmad-output/planning-artifacts/epics.md": "## Epic 1: Accounts\n",
        },
    )
    titles = {s.group: s.group_title for s in load_catalog(ws).stories}
    # epics.md names epic 1; epic 2 has only its comment.
    assert titles == {"1": "Accounts", "2": "Billing, phase one"}


def test_nested_layout_epic_titles_carry_no_comment_notes(nested: Workspace) -> None:
    titles = {s.group: s.group_title for s in load_catalog(nested).stories}
    assert titles["15"] == "Platform Upkeep"
    assert titles["13"] == "Export"
    assert titles["9"] == "Offline"


def test_a_decimal_epic_written_with_a_dash_is_an_epic_entry_not_an_unreadable_story() -> None:
    # `epic-3-5` tracks epic 3.5 (its stories are `3-5-0-…`, `3-5-1-…`); it names no story.
    from promptdeck.core.stories.keys import is_story_entry, story_entry_keys

    names = ["epic-3", "3-5-help-overlay", "epic-3-5", "3-5-0-cleanup", "epic-3-5-retrospective"]
    assert not is_story_entry("epic-3-5")
    keys = story_entry_keys(names)
    assert keys[2] is None and keys[4] is None
    assert keys[1] is not None and keys[3] is not None and keys[1].key != keys[3].key
