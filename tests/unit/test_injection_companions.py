"""A story file's companions, its epic's tech spec and a v4 project's always-load files as
rows of the injection: one row per file, the category its kind gives it, in or out by
default, and the usual statuses for a file that is missing, outside or not a regular file."""

from __future__ import annotations

import os
from dataclasses import replace
from pathlib import Path

import pytest
from _prompt_workspace import ARTIFACTS, FILES, STORY_1_2
from builders import make_workspace
from promptdeck.core.injection.builder import build_story_injection
from promptdeck.core.injection.gather import epic_injection
from promptdeck.core.injection.model import CATEGORIES, LISTED_COMPANIONS, Injection, Selection
from promptdeck.core.phases.table import get_phase
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import Workspace
from promptdeck.core.stories.model import Companion, Story
from promptdeck.core.tokens.counter import get_counter

CONTEXT_XML = f"{ARTIFACTS}/1-2-user-registration.context.xml"
CONTEXT_MD = f"{ARTIFACTS}/1-2-user-registration-context.md"
REVIEW = f"{ARTIFACTS}/1-2-code-review.md"
REPORT = f"{ARTIFACTS}/bmad-dev-auto-result-1-2-user-registration.md"
VALIDATION = f"{ARTIFACTS}/validation-report-1-2.md"
RETRO = f"{ARTIFACTS}/epic-1-retro-1-2.md"
PROPOSAL = f"{ARTIFACTS}/1-2-change-proposal.md"
EPIC_SPEC = f"{ARTIFACTS}/tech-spec-epic-1.md"
COMPANIONS = (
    Companion(CONTEXT_XML, "context"),
    Companion(CONTEXT_MD, "context"),
    Companion(REVIEW, "review"),
    Companion(REPORT, "report"),
    Companion(VALIDATION, "validation"),
    Companion(RETRO, "retro"),
    Companion(PROPOSAL, "proposal"),
)
EXTRA = {
    CONTEXT_XML: "<story-context>CTX-XML</story-context>\n",
    CONTEXT_MD: "# Story 1.2 - Context\n\nCTX-MD\n",
    REVIEW: "# Code Review\n\nREVIEW-TEXT\n",
    REPORT: "# Run result\n\nREPORT-TEXT\n",
    VALIDATION: "# Validation Report\n\nVALIDATION-TEXT\n",
    RETRO: "# Epic 1 Retrospective\n\nRETRO-TEXT\n",
    PROPOSAL: "# Sprint Change Proposal\n\nPROPOSAL-TEXT\n",
    EPIC_SPEC: "# Epic 1 tech spec\n\nEPIC-SPEC-TEXT\n",
    "docs/standards.md": "# Standards\n\nSTANDARDS-TEXT\n",
}


@pytest.fixture
def workspace(tmp_path: Path) -> Workspace:
    return make_workspace(tmp_path / "ws", {**FILES, **EXTRA})


def story_of(workspace: Workspace, **changes: object) -> Story:
    """Story 1-2 with its companions and epic tech spec as the story source names them."""
    story = load_catalog(workspace).find("1-2")
    fields = {"companions": COMPANIONS, "epic_tech_spec": EPIC_SPEC, **changes}
    return replace(story, **fields)  # type: ignore[arg-type]


def inject(workspace: Workspace, story: Story, selection: Selection | None = None) -> Injection:
    return build_story_injection(
        workspace, story, selection or Selection(), command_name="dev", count_tokens=False
    )


def rows(injection: Injection) -> dict[str, tuple[str, str, str]]:
    return {f.path: (f.category, f.status, f.why) for f in injection.files}


def test_context_companions_are_in_and_the_other_kinds_listed_out(workspace: Workspace) -> None:
    injection = inject(workspace, story_of(workspace))
    shown = rows(injection)
    assert shown[CONTEXT_XML] == ("context", "included", "companion")
    assert shown[CONTEXT_MD] == ("context", "included", "companion")
    assert "CTX-XML" in injection.text and "CTX-MD" in injection.text
    for path, kind in ((REVIEW, "review"), (REPORT, "report"), (VALIDATION, "validation")):
        assert shown[path] == (kind, "excluded", "companion")
    assert shown[RETRO] == ("retro", "excluded", "companion")
    assert shown[PROPOSAL] == ("proposal", "excluded", "companion")
    for text in ("REVIEW-TEXT", "REPORT-TEXT", "VALIDATION-TEXT", "RETRO-TEXT", "PROPOSAL-TEXT"):
        assert text not in injection.text
    reason = next(f.reason for f in injection.files if f.path == REVIEW)
    assert reason == "a review of the story: listed, not sent unless you take it in"
    # The story's own row is its story file alone.
    assert [f.path for f in injection.files if f.category == "story"] == [STORY_1_2]
    assert set(LISTED_COMPANIONS) <= set(CATEGORIES)


def test_every_file_is_one_row_even_when_the_key_scan_finds_it(workspace: Workspace) -> None:
    # `1-2-code-review.md` and `1-2-change-proposal.md` start with the key: the key scan alone
    # would make them files of the story, sent.
    plain = inject(workspace, story_of(workspace, companions=(), epic_tech_spec=None))
    assert rows(plain)[REVIEW][:2] == ("story", "included")
    injection = inject(workspace, story_of(workspace))
    paths = [f.path for f in injection.files]
    assert len(paths) == len(set(paths))
    assert rows(injection)[REVIEW][:2] == ("review", "excluded")
    # Named by the source among the story's files too, a companion is still the companion.
    story = story_of(workspace)
    doubled = inject(workspace, replace(story, files=(*story.files, REVIEW, CONTEXT_XML)))
    assert [f.path for f in doubled.files if f.category == "story"] == [STORY_1_2]
    assert [f.path for f in doubled.files].count(CONTEXT_XML) == 1


def test_a_listed_companion_can_be_taken_in_and_a_context_left_out(workspace: Workspace) -> None:
    chosen = Selection(included=(REVIEW,), excluded=(CONTEXT_XML,))
    injection = inject(workspace, story_of(workspace), chosen)
    shown = {f.path: (f.status, f.reason) for f in injection.files}
    assert shown[REVIEW] == ("included", "included by you")
    assert shown[CONTEXT_XML] == ("excluded", "left out by you")
    assert "REVIEW-TEXT" in injection.text and "CTX-XML" not in injection.text


def test_the_epics_tech_spec_follows_the_tech_spec_toggle(workspace: Workspace) -> None:
    off = inject(workspace, story_of(workspace))
    row = next(f for f in off.files if f.path == EPIC_SPEC)
    assert (row.category, row.status, row.reason) == (
        "tech-spec",
        "excluded",
        "tech-spec files are off",
    )
    assert off.toggle_notes()["tech-spec"] == ""
    on = inject(workspace, story_of(workspace), Selection(tech_spec=True))
    row = next(f for f in on.files if f.path == EPIC_SPEC)
    assert (row.status, row.why) == ("included", "epic tech spec")
    assert "EPIC-SPEC-TEXT" in on.text


def test_companion_files_that_are_missing_or_not_regular_get_the_usual_statuses(
    workspace: Workspace,
) -> None:
    (workspace.root / CONTEXT_XML).unlink()
    os.mkfifo(workspace.root / CONTEXT_XML)
    (workspace.root / CONTEXT_MD).unlink()
    injection = inject(workspace, story_of(workspace))
    shown = {f.path: (f.category, f.status) for f in injection.files}
    assert shown[CONTEXT_XML] == ("context", "unreadable")
    assert shown[CONTEXT_MD] == ("context", "missing")
    assert sum(CONTEXT_XML in w for w in injection.warnings) == 1


def test_a_companion_that_is_no_planning_document_is_no_row(workspace: Workspace) -> None:
    picture = f"{ARTIFACTS}/1-2-review.png"
    (workspace.root / picture).write_bytes(b"\x89PNG\x00")
    story = story_of(workspace, companions=(Companion(picture, "review"), *COMPANIONS))
    assert picture not in [f.path for f in inject(workspace, story).files]


def always_load(workspace: Workspace, *files: str) -> Workspace:
    config = replace(
        workspace.config,
        bmad_always_load=files,
        bmad_always_load_origin=".bmad-core/core-config.yaml:16",
    )
    return replace(workspace, config=config)


def test_always_load_files_outside_missing_or_a_fifo_are_listed_never_read(
    workspace: Workspace, tmp_path: Path
) -> None:
    secret = tmp_path / "outside.md"
    secret.write_text("OUTSIDE-SECRET\n", encoding="utf-8")
    (workspace.root / "docs/linked.md").symlink_to(secret)
    os.mkfifo(workspace.root / "docs/pipe.md")
    ws = always_load(
        workspace,
        "docs/standards.md",
        "docs/linked.md",
        "../outside.md",
        "docs/pipe.md",
        "docs/gone.md",
    )
    injection = inject(ws, story_of(ws, companions=(), epic_tech_spec=None))
    shown = {f.path: (f.category, f.status) for f in injection.files if f.category == "always-load"}
    assert shown == {
        "docs/standards.md": ("always-load", "included"),
        "docs/linked.md": ("always-load", "outside-project"),
        "../outside.md": ("always-load", "outside-project"),
        "docs/pipe.md": ("always-load", "unreadable"),
        "docs/gone.md": ("always-load", "missing"),
    }
    assert "STANDARDS-TEXT" in injection.text and "OUTSIDE-SECRET" not in injection.text
    for path in ("docs/linked.md", "../outside.md", "docs/pipe.md", "docs/gone.md"):
        assert sum(w.startswith(f"{path}:") for w in injection.warnings) == 1


def test_an_epic_injection_lists_each_storys_companions_and_no_always_load_files(
    workspace: Workspace,
) -> None:
    ws = always_load(workspace, "docs/standards.md")
    epic = tuple(story_of(ws) if s.id == "1-2" else s for s in load_catalog(ws).in_group("1"))
    injection = epic_injection(
        ws, get_phase("uat"), epic, Selection(), get_counter(ws.config.tokens_encoding), False
    )
    shown = rows(injection)
    assert shown[REVIEW][:2] == ("review", "excluded")
    assert shown[CONTEXT_XML][:2] == ("context", "included")
    assert not [f for f in injection.files if f.category == "always-load"]


def test_inspect_json_lists_the_companions_the_story_source_finds(tmp_path: Path) -> None:
    import json

    from in_process import cli_in_process

    root = tmp_path / "project"
    make_workspace(root, {**FILES, CONTEXT_XML: EXTRA[CONTEXT_XML], REVIEW: EXTRA[REVIEW]})
    done = cli_in_process(root, "inspect", "1-2", "--json", "--root", str(root))
    assert done.returncode == 0, done.stderr
    listed = {
        row["path"]: (row["category"], row["status"]) for row in json.loads(done.stdout)["files"]
    }
    assert listed[CONTEXT_XML] == ("context", "included")
    assert listed[REVIEW] == ("review", "excluded")
    assert [path for path, (category, _) in listed.items() if category == "story"] == [STORY_1_2]
