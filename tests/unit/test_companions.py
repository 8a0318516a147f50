"""A story's own file is a story: contexts, retrospectives, run reports, validations, reviews
and change proposals named like a story are its companions, never its file, never where its
status comes from; a key in the middle of a name makes no file a story's."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from builders import make_workspace
from promptdeck.core.plans.catalog import group_notes, load_catalog, load_story_catalog
from promptdeck.core.project.config import Config
from promptdeck.core.project.workspace import Workspace
from promptdeck.core.stories.companions import COMPANION_KINDS, companion_kind
from promptdeck.core.stories.model import Companion

LAYOUTS = Path(__file__).resolve().parents[1] / "fixtures" / "layouts"
ART = "_bmad-output/implementation-artifacts"
V5_ART = "docs/sprint-artifacts"


@pytest.mark.parametrize(
    ("name", "heading", "kind"),
    [
        ("story-9.16-offline-sync-context.md", None, "context"),
        ("1-1-add-a-book.context.xml", None, "context"),
        ("2-3-notes.md", "Story 2.3: Placement - Context", "context"),
        ("2-3-notes.md", "Story Context: 2.3", "context"),
        ("epic12-13-14-retro-2026-01.md", None, "retro"),
        ("epic-3-retrospective.md", None, "retro"),
        ("notes-2-3.md", "Epic 3 Retrospective", "retro"),
        ("bmad-dev-auto-result-2-2-search.md", "Story 2-2 - Dev run result", "report"),
        ("2-2-search-run-log.md", None, "report"),
        ("2-2-search-report.md", None, "report"),
        ("validation-report-2-2-2026-01-05.md", None, "validation"),
        ("2-2-search-code-review.md", None, "review"),
        ("2-2-search-review.md", None, "review"),
        ("2-2-notes.md", "Senior Developer Review", "review"),
        ("sprint-change-proposal-2026-01-05.md", None, "proposal"),
        # Stories whose titles use those words are stories.
        ("2-2-search.md", "Story 2.2: Search", None),
        ("2-3-code-review.md", "Story 2.3: Code review", None),
        ("4-1-input-validation.md", None, None),
        ("2-1-add-stop-reason-to-results.md", "Story 2.1: Add stop reason to results", None),
        ("3-1-5-review-notes.md", "Review notes of 3.1.5", None),
    ],
)
def test_companion_kind(name: str, heading: str | None, kind: str | None) -> None:
    assert companion_kind(name, heading) == kind
    assert kind is None or kind in COMPANION_KINDS


def test_companion_to_dict() -> None:
    assert Companion("a/b.context.xml", "context").to_dict() == {
        "path": "a/b.context.xml",
        "kind": "context",
    }


@pytest.fixture
def nested(tmp_path: Path) -> Workspace:
    shutil.copytree(LAYOUTS / "v6-nested", tmp_path / "v6-nested")
    return Workspace(root=(tmp_path / "v6-nested").resolve(), config=Config())


def test_a_context_companion_is_never_chosen_over_the_story_file(nested: Workspace) -> None:
    catalog = load_catalog(nested)
    story = catalog.find("9-16")
    assert story.path == f"{ART}/stories/story-9.16-offline-sync.md"
    # The companion's own `Status: done` decides nothing.
    assert (story.status, story.status_drift) == ("review", ())
    assert story.companions == (
        Companion(f"{ART}/stories/story-9.16-offline-sync-context.md", "context"),
    )
    assert story.files == (story.path,)
    assert not any("9.16" in u.path for u in catalog.unreadable)
    assert not any("9.16" in s.path for s in catalog.skipped)


def test_a_retro_or_run_report_with_a_key_inside_its_name_is_no_storys_file(
    nested: Workspace,
) -> None:
    catalog = load_catalog(nested)
    for story_id in ("13-14", "2-2"):
        story = catalog.find(story_id)
        assert story.path is None, story.path
        assert story.companions == ()
        assert story.status_source.startswith(f"{ART}/sprint-status.yaml:")
    every = [c.path for s in catalog.stories for c in s.companions]
    assert not any("retro" in path or "result" in path for path in every)


def test_only_the_storys_own_companions_are_listed(nested: Workspace) -> None:
    story = load_catalog(nested).find("19-2")
    assert story.companions == (
        Companion(f"{ART}/epic19/stories/19-2-json-import-code-review.md", "review"),
        Companion(f"{ART}/epic19/stories/19-2-json-import.context.xml", "context"),
    )
    assert story.to_dict()["companions"] == [c.to_dict() for c in story.companions]
    assert load_catalog(nested).find("19-1").companions == ()


def test_v5_story_contexts_are_the_storys_context_companions(tmp_path: Path) -> None:
    shutil.copytree(LAYOUTS / "v5-sprint-artifacts", tmp_path / "v5")
    ws = Workspace(
        root=(tmp_path / "v5").resolve(),
        config=Config(paths_artifacts=V5_ART, paths_planning="docs"),
    )
    catalog = load_catalog(ws)
    companions = {s.id: s.companions for s in catalog.stories}
    assert companions == {
        "1-1": (Companion(f"{V5_ART}/1-1-add-a-book.context.xml", "context"),),
        "1-2": (Companion(f"{V5_ART}/1-2-reorder-books-context.md", "context"),),
        "1-3": (),
        "2-1": (Companion("docs/stories/2-1-share-link.context.xml", "context"),),
        "2-2": (),
    }
    # Neither the `-context.md` companion (its own Status says ready-for-dev) nor the epic
    # retrospective claims a story: no second claim, no drift, nothing unreadable.
    story = catalog.find("1-2")
    assert (story.status, story.status_drift, story.second_claims) == ("review", (), ())
    assert catalog.unreadable == ()
    assert [g.kind for g in group_notes(catalog)] == []
    narrowed = load_story_catalog(ws, "1-2").find("1-2")
    assert narrowed.companions == story.companions


def test_a_file_named_exactly_for_its_entry_is_the_story_whatever_its_words(
    tmp_path: Path,
) -> None:
    ws = make_workspace(
        tmp_path,
        {
            f"{ART}/sprint-status.yaml": "development_status:\n  5-3-weekly-report: review\n",
            f"{ART}/5-3-weekly-report.md": "# Weekly report export\n\nStatus: review\n",
        },
    )
    story = load_catalog(ws).find("5-3")
    assert story.path == f"{ART}/5-3-weekly-report.md"
    assert story.companions == ()


def test_a_companion_with_the_story_heading_never_beats_the_story_file(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {
            f"{ART}/sprint-status.yaml": "development_status:\n  3-1-sync: in-progress\n",
            # Comes first by name and opens like the story: still its companion.
            f"{ART}/story-3.1-a-sync-context.md": "# Story 3.1: Sync\n\nStatus: done\n",
            f"{ART}/story-3.1-b-sync.md": "# Story 3.1: Sync\n\nStatus: in-progress\n",
        },
    )
    story = load_catalog(ws).find("3-1")
    assert story.path == f"{ART}/story-3.1-b-sync.md"
    assert story.status_drift == ()
    assert story.companions == (Companion(f"{ART}/story-3.1-a-sync-context.md", "context"),)


def test_a_v4_story_whose_slug_ends_in_context_is_the_story(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {
            "docs/stories/2.3.chat.md": "# Story 2.3: Chat\n\n## Status\n\nDone\n",
            "docs/stories/2.4.conversation-context.md": (
                "# Story 2.4: Conversation context\n\n## Status\n\nApproved\n"
            ),
        },
        paths_artifacts="docs/stories",
    )
    catalog = load_catalog(ws)
    assert [s.id for s in catalog.stories] == ["2-3", "2-4"]
    story = catalog.find("2-4")
    assert (story.path, story.status) == (
        "docs/stories/2.4.conversation-context.md",
        "ready-for-dev",
    )
    assert story.companions == ()
    assert load_story_catalog(ws, "2-4").find("2-4").path == story.path


def test_a_story_named_for_a_context_it_updates_is_its_own_story(tmp_path: Path) -> None:
    # A real plan's entry `7.1-11-update-project-context` is off BMAD's grammar; its file is
    # headed `# Story 7.1-11: …`: story 7-1-11, never a context of story 7-1.
    ws = make_workspace(
        tmp_path,
        {
            f"{ART}/sprint-status.yaml": (
                "development_status:\n  7-1-ops: done\n  7.1-11-update-project-context: done\n"
            ),
            f"{ART}/stories/epic-7/7-1-ops.md": "# Story 7.1: Ops\n\nStatus: done\n",
            f"{ART}/stories/epic-7/7.1-11-update-project-context.md": (
                "# Story 7.1-11: Update project-context.md\n\nStatus: done\n"
            ),
        },
    )
    catalog = load_catalog(ws)
    assert [s.key for s in catalog.stories] == ["7-1", "7-1-11"]
    story = catalog.find("7-1-11")
    assert story.path == f"{ART}/stories/epic-7/7.1-11-update-project-context.md"
    assert catalog.find("7-1").companions == ()
    assert load_story_catalog(ws, "7-1-11").find("7-1-11").path == story.path


def test_a_context_named_after_its_entry_stays_a_context_with_no_story_file(
    tmp_path: Path,
) -> None:
    # `<entry>-context.md` is BMAD's own name for the story's context: even headed like the
    # story and alone, it never becomes the story's file.
    ws = make_workspace(
        tmp_path,
        {
            f"{ART}/sprint-status.yaml": "development_status:\n  1-2-reorder: ready-for-dev\n",
            f"{ART}/1-2-reorder-context.md": "# Story 1.2: Reorder\n\nStatus: done\n",
        },
    )
    story = load_catalog(ws).find("1-2")
    assert (story.path, story.status) == (None, "ready-for-dev")
    assert story.companions == (Companion(f"{ART}/1-2-reorder-context.md", "context"),)


def test_a_report_headed_like_the_story_never_wins_it_by_its_name_sorting_first(
    tmp_path: Path,
) -> None:
    # A real plan keeps `1-6-code-review-fixes-report.md` headed `# Story 1.6: Code Review
    # Fixes Report` beside the story: the report's name sorting first must not make it the
    # story's file, nor its status the story's.
    ws = make_workspace(
        tmp_path,
        {
            "docs/stories/1.6.code-review-fixes-report.md": (
                "# Story 1.6: Code Review Fixes Report\n\n## Status\n\nInProgress\n"
            ),
            "docs/stories/1.6.state-recovery.md": (
                "# Story 1.6: State recovery\n\n## Status\n\nDone\n"
            ),
        },
        paths_artifacts="docs/stories",
    )
    catalog = load_catalog(ws)
    story = catalog.find("1-6")
    assert (story.path, story.status) == ("docs/stories/1.6.state-recovery.md", "done")
    assert load_story_catalog(ws, "1-6").find("1-6").path == story.path
    [claim] = [u for u in catalog.unreadable if u.key == "1-6"]
    assert claim.path == "docs/stories/1.6.code-review-fixes-report.md"
