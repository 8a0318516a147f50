"""Which file is a story's, and what status it states, as real plans write them: files named
after their entry whatever their heading, status lines inside a first "info" section or
followed by other bold fields, companions that never stand in for a story, and status words
read as BMAD shows them."""

from __future__ import annotations

from pathlib import Path

import pytest
from builders import make_workspace
from promptdeck.core.plans.bmad_story_file import parse_story_text
from promptdeck.core.plans.catalog import load_catalog, load_story_catalog
from promptdeck.core.stories.companions import companion_kind, sibling_companion
from promptdeck.core.stories.model import Companion, plan_status, read_status

ART = "_bmad-output/implementation-artifacts"
SPRINT = f"{ART}/sprint-status.yaml"


def sprint(*entries: str) -> str:
    return "development_status:\n" + "".join(f"  {entry}\n" for entry in entries)


# --------------------------------------------------------------------------- named files


def test_a_file_named_after_its_entry_is_the_story_whatever_its_heading(tmp_path: Path) -> None:
    shim = f"{ART}/epic15b/stories/TD-15b-1-intra-feature-shim-imports.md"
    logger = f"{ART}/stories/debug-2-ios-debug-logger.md"
    gaps = f"{ART}/epic15b/stories/TD-15b-37-input-validation-gaps.md"
    ws = make_workspace(
        tmp_path,
        {
            SPRINT: sprint(
                "TD-15b-1-intra-feature-shim-imports: done",
                "TD-15b-37-input-validation-gaps: done",
                "debug-2-ios-debug-logger: review",
            ),
            shim: "# Tech Debt Story TD-15b-1: Intra-Feature Shim Imports\n\nStatus: done\n",
            # Its slug's `validation` is no validation report: the name is the entry's.
            gaps: "# Tech Debt Story TD-15b-37: Input Validation Gaps\n\nStatus: done\n",
            logger: (
                "# iOS Debug Logger\n\n**Story Key:** debug-2-ios-debug-logger\n"
                "**Status:** drafted\n\n## Description\n"
            ),
        },
    )
    catalog = load_catalog(ws)
    assert catalog.find("TD-15b-1").path == shim
    assert catalog.find("TD-15b-37").path == gaps
    story = catalog.find("debug-2")
    assert (story.path, story.title) == (logger, "iOS Debug Logger")
    # The file's `drafted` drifts from the plan's `review`, which wins: said, not hidden.
    assert story.status == "review" and story.status_drift
    assert load_story_catalog(ws, "debug-2").find("debug-2").path == logger


def test_a_file_named_with_the_entrys_key_is_its_file_only_when_it_has_none(
    tmp_path: Path,
) -> None:
    alone = f"{ART}/debug-3-cli.md"
    ws = make_workspace(
        tmp_path,
        {SPRINT: sprint("debug-3-cli-query-tool: done"), alone: "# CLI query tool\n"},
    )
    assert load_catalog(ws).find("debug-3").path == alone

    exact = f"{ART}/debug-3-cli-query-tool.md"
    (tmp_path / exact).write_text("# CLI Query Tool\n\nStatus: done\n", encoding="utf-8")
    catalog = load_catalog(ws)
    assert catalog.find("debug-3").path == exact
    (line,) = [s for s in catalog.skipped if s.path == alone]
    assert exact in line.reason


# --------------------------------------------------------------------------- status lines


@pytest.mark.parametrize(
    ("text", "raw", "line"),
    [
        (
            "# Story 14.33a: Cards\n\n## Story Info\n- **Epic:** 14\n- **Status:** Done\n\n"
            "## User Story\n",
            "Done",
            5,
        ),
        (
            "# Story 4.2: Flow\n\n## Story Details\n\n**Epic**: Epic 4\n**Status**: COMPLETED\n"
            "\n## User Story\n",
            "COMPLETED",
            6,
        ),
        (
            "# Story 2.5-4: Tools\n\n**Status:** done **Epic:** 2.5 - Loops **Estimate:** 7 h\n",
            "done",
            3,
        ),
        (
            "# Story 2.5-5: Tools\n\n**Status**: review **Owner**: ana\n",
            "review",
            3,
        ),
    ],
)
def test_status_lines_as_real_files_write_them(text: str, raw: str, line: int) -> None:
    story = parse_story_text(text, "x.md")
    assert story is not None
    assert (story.raw_status, story.status_line) == (raw, line)


def test_a_status_in_a_later_section_is_still_not_the_storys() -> None:
    text = "# Story 1.1: A\n\n## Dev Notes\n\n## Auto Run Result\nStatus: done\n"
    story = parse_story_text(text, "x.md")
    assert story is not None and story.raw_status is None


def test_a_status_in_the_info_section_is_read_not_defaulted(tmp_path: Path) -> None:
    path = f"{ART}/story-14.33a-cards.md"
    ws = make_workspace(
        tmp_path, {path: "# Story 14.33a: Cards\n\n## Story Info\n- **Status:** Done\n"}
    )
    story = load_catalog(ws).find("14-33a")
    assert (story.status, story.status_source) == ("done", f"{path}:4")


# --------------------------------------------------------------------------- companions


def test_a_report_named_after_a_story_file_is_its_companion(tmp_path: Path) -> None:
    folder = "docs/sprint-artifacts/epic13"
    own = f"{folder}/story-13.14-design-review.md"
    report = f"{folder}/story-13.14-design-review-report.md"
    ws = make_workspace(
        tmp_path,
        {
            own: "# Story 13.14: Design Review\n\nStatus: drafted\n",
            report: "# Story 13.14 - Design Review Report\n\n**Status:** APPROVED\n",
        },
        paths_artifacts="docs/sprint-artifacts",
    )
    story = load_catalog(ws).find("13-14")
    assert (story.path, story.status) == (own, "ready-for-dev")
    assert story.companions == (Companion(report, "report"),)
    assert load_story_catalog(ws, "13-14").find("13-14").path == own


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("story-13.14-design-review-report.md", "report"),
        ("story-13.14-design-review.md", None),
        ("1-2-x-code-review.md", "review"),
        ("1-2-x-validation-report-2026-01-02.md", "validation"),
        ("1-2-y-report.md", None),
    ],
)
def test_sibling_companion(name: str, kind: str | None) -> None:
    assert sibling_companion(name, {"story-13.14-design-review", "1-2-x"}) == kind


def test_results_in_a_storys_slug_is_no_run_result() -> None:
    assert companion_kind("story-2.2-search-results-enhancement.md") is None
    assert companion_kind("bmad-dev-auto-result-2-2-search.md") == "report"


def test_a_change_proposal_spec_is_no_storys_spec(tmp_path: Path) -> None:
    proposal = f"{ART}/spec-1-16-1-20-sprint-change-proposal.md"
    ws = make_workspace(
        tmp_path,
        {
            SPRINT: sprint("1-16-projection-freshness: done", "1-20-parity-closure: done"),
            proposal: (
                "---\ntitle: 'Implement Story 1.16/1.20 Sprint Change Proposal'\n"
                "status: 'done'\n---\n\n## Intent\n"
            ),
        },
    )
    catalog = load_catalog(ws)
    for story_id in ("1-16", "1-20"):
        story = catalog.find(story_id)
        assert story.path != proposal and proposal not in story.files
    assert proposal in catalog.unattached


# --------------------------------------------------------------------------- status words


def test_blocked_is_kept_as_written_outside_a_v7_plan(tmp_path: Path) -> None:
    assert (read_status("blocked").status, read_status("blocked").known) == ("blocked", False)
    assert plan_status("blocked") == ("in-progress", True)
    ws = make_workspace(tmp_path, {SPRINT: sprint("7-9-location-sync: blocked")})
    story = load_catalog(ws).find("7-9")
    assert (story.status, story.status_known) == ("blocked", False)


@pytest.mark.parametrize("raw", ["Ready for Development", "**Ready for Development**"])
def test_ready_for_development_is_ready_for_dev(raw: str) -> None:
    reading = read_status(raw)
    assert (reading.status, reading.known) == ("ready-for-dev", True)


# --------------------------------------------------------------------------- unread files


def test_a_file_named_like_a_story_but_not_one_is_one_skipped_line(tmp_path: Path) -> None:
    path = "docs/stories/backlog/story-2.2-search-results-enhancement.md"
    ws = make_workspace(
        tmp_path,
        {path: "# Search Results Enhancement - Brownfield Addition\n\n## User Story\n"},
        paths_artifacts="docs/stories",
    )
    catalog = load_catalog(ws)
    assert catalog.stories == ()
    (line,) = [s for s in catalog.skipped if s.path == path]
    assert line.reason.startswith("no-story-heading")
