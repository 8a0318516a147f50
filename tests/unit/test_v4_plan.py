"""A BMAD v4 plan as v4 writes it (tests/fixtures/layouts/v4-classic/): story files in
``docs/stories`` with a ``## Status`` section in v4's words, and the files its dev agent
loads on every story (``devLoadAlwaysFiles``) as rows of their own."""

from __future__ import annotations

import shutil
from dataclasses import replace
from pathlib import Path

import pytest
from promptdeck.core.injection.builder import build_story_injection
from promptdeck.core.injection.model import CATEGORIES, Injection, Selection
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import Workspace, open_workspace
from promptdeck.core.stories.model import read_status

LAYOUTS = Path(__file__).resolve().parents[1] / "fixtures" / "layouts"
STORIES = "docs/stories"
ALWAYS = (
    "docs/architecture/coding-standards.md",
    "docs/architecture/tech-stack.md",
    "docs/architecture/source-tree.md",
)
ORIGIN = ".bmad-core/core-config.yaml:16"


def v4(tmp_path: Path) -> Workspace:
    """The fixture, told where its plan is (so the test needs no v4 config discovery)."""
    root = tmp_path / "v4-classic"
    shutil.copytree(LAYOUTS / "v4-classic", root)
    (root / ".promptdeck").mkdir()
    (root / ".promptdeck/config.toml").write_text(
        '[paths]\nartifacts = "docs/stories"\nplanning = "docs/prd"\n', encoding="utf-8"
    )
    return open_workspace(root)


def with_always_load(workspace: Workspace) -> Workspace:
    """``workspace`` with the always-load list its core-config.yaml names."""
    config = replace(workspace.config, bmad_always_load=ALWAYS, bmad_always_load_origin=ORIGIN)
    return replace(workspace, config=config)


def inject(workspace: Workspace, story_id: str, selection: Selection | None = None) -> Injection:
    story = load_catalog(workspace).find(story_id)
    return build_story_injection(
        workspace, story, selection or Selection(), command_name="dev", count_tokens=False
    )


def test_the_fixture_core_config_names_the_always_load_files_on_the_line_used_here() -> None:
    lines = (LAYOUTS / "v4-classic/.bmad-core/core-config.yaml").read_text().splitlines()
    line = int(ORIGIN.rsplit(":", 1)[1])
    assert lines[line - 1] == "devLoadAlwaysFiles:"
    assert [item.strip("- ") for item in lines[line : line + 3]] == list(ALWAYS)


def test_each_v4_status_word_reads_as_its_story_status_and_draft_keeps_its_word(
    tmp_path: Path,
) -> None:
    stories = {s.id: s for s in load_catalog(v4(tmp_path)).stories}
    seen = {s.id: (s.status, s.status_known, s.status_note) for s in stories.values()}
    assert seen == {
        "1-1": ("done", True, ""),
        "1-2": ("review", True, ""),
        "1-3": ("backlog", True, "v4 'Draft' shown as backlog"),
        "1-4": ("ready-for-dev", True, ""),
        "2-1": ("in-progress", True, ""),
        "2-2": ("review", True, ""),
        "2-3": ("done", True, ""),
    }
    # The value is the first non-empty line of the `## Status` section.
    assert stories["2-3"].status_source == f"{STORIES}/2.3.share-note.story.md:5"
    assert stories["1-2"].path == f"{STORIES}/1.2.user-login.story.md"


@pytest.mark.parametrize(
    ("written", "status", "note"),
    [
        ("Draft", "backlog", "v4 'Draft' shown as backlog"),
        ("Approved", "ready-for-dev", ""),
        ("InProgress", "in-progress", ""),
        ("In Progress", "in-progress", ""),
        ("Review", "review", ""),
        ("Ready for Review", "review", ""),
        ("Done", "done", ""),
        ("Complete", "done", ""),
        ("COMPLETE", "done", ""),
        ("**✅ COMPLETE** (2026-01-16)", "done", ""),
        ("✅ Done (2026-02-01)", "done", ""),
        # A remark in parentheses and one after a dash, as a real v4 story writes them.
        ("✅ COMPLETE (v6.1.0) - All 11 Tasks Complete", "done", ""),
        ("Ready for Review (QA Fixes Applied) - see gate", "review", ""),
    ],
)
def test_v4_words_and_their_decorations(written: str, status: str, note: str) -> None:
    reading = read_status(written)
    assert (reading.status, reading.known, reading.note) == (status, True, note)


def test_only_v4s_capitalised_draft_is_noted_as_v4s() -> None:
    # A spec's or v7 plan's lower-case `draft` and a v6 legacy word keep their own notes.
    assert read_status("draft").note == "plan status 'draft' shown as backlog"
    assert read_status("drafted").note == "legacy 'drafted' read as ready-for-dev"


def test_always_load_files_are_rows_of_their_own_before_the_story(tmp_path: Path) -> None:
    workspace = with_always_load(v4(tmp_path))
    injection = inject(workspace, "1-2")
    rows = [(f.path, f.category, f.status) for f in injection.files if f.status != "missing"]
    assert rows == [
        *((path, "always-load", "included") for path in sorted(ALWAYS, key=str.lower)),
        (f"{STORIES}/1.2.user-login.story.md", "story", "included"),
    ]
    reasons = {f.reason for f in injection.files if f.category == "always-load"}
    assert reasons == {f"v4 dev agent loads it always ({ORIGIN})"}
    assert CATEGORIES.index("always-load") < CATEGORIES.index("story")
    assert injection.text.index("Coding Standards") < injection.text.index("Story 1.2")
    # inspect --json and the app list the same rows.
    listed = [row for row in injection.to_dict()["files"] if row["category"] == "always-load"]
    assert [row["why"] for row in listed] == ["always load"] * 3


def test_an_always_load_file_can_be_left_out_and_stays_listed(tmp_path: Path) -> None:
    workspace = with_always_load(v4(tmp_path))
    lean = inject(workspace, "1-2", Selection(excluded=(ALWAYS[1],)))
    row = next(f for f in lean.files if f.path == ALWAYS[1])
    assert (row.category, row.status, row.reason) == ("always-load", "excluded", "left out by you")
    assert "| Language | Python" not in lean.text
    assert "Coding Standards" in lean.text


def test_the_qa_gate_and_other_stories_files_are_not_the_storys(tmp_path: Path) -> None:
    injection = inject(v4(tmp_path), "1-1")
    paths = [f.path for f in injection.files if f.category != "always-load"]
    assert f"{STORIES}/1.1.project-setup.md" in paths
    assert [p for p in paths if p.startswith("docs/")] == [f"{STORIES}/1.1.project-setup.md"]


def test_inspect_json_of_a_v4_story_lists_its_always_load_rows(tmp_path: Path) -> None:
    import json

    from in_process import cli_in_process

    workspace = v4(tmp_path)
    done = cli_in_process(workspace.root, "inspect", "2-1", "--json", "--root", str(workspace.root))
    assert done.returncode == 0, done.stderr
    files = json.loads(done.stdout)["files"]
    story = [row["path"] for row in files if row["category"] == "story"]
    assert story == [f"{STORIES}/2.1.create-note.md"]
    # One row per file of the list the project's configuration read from core-config.yaml.
    always = [row for row in files if row["category"] == "always-load"]
    assert sorted(row["path"] for row in always) == sorted(workspace.config.bmad_always_load)
    assert all(row["status"] == "included" for row in always)
    origin = workspace.config.bmad_always_load_origin
    assert all(row["reason"] == f"v4 dev agent loads it always ({origin})" for row in always)


def test_a_v4_story_file_whose_heading_names_no_key_is_the_story_its_name_gives(
    tmp_path: Path,
) -> None:
    # A real v4 plan: `# Story: Evidence Extraction …` names no key, yet the file is story
    # 1.5 by v4's naming; in v4 the story files are the plan, so it is never passed over.
    workspace = v4(tmp_path)
    (workspace.root / STORIES / "1.5.evidence-plan.story.md").write_text(
        "# Story: Evidence Extraction - Implementation Plan\n\n**Status**: Done\n",
        encoding="utf-8",
    )
    story = load_catalog(workspace).find("1-5")
    assert story.path == f"{STORIES}/1.5.evidence-plan.story.md"
    assert story.status == "done" and story.title.startswith("Story: Evidence Extraction")
