"""Where story files are found: at any depth under the artifacts folder and
``story_location`` (bounded), the same file for the full and the one-story lookup, and where
a story with no file was looked for; BMAD v5's per-epic tech specs, keyless quick specs, and
when an epic context is stale (commit times, not checkout order)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
from builders import make_workspace
from promptdeck.core.plans import bmad_spec, context_files, story_scan
from promptdeck.core.plans.catalog import (
    group_notes,
    load_bmad_plan,
    load_catalog,
    load_story_catalog,
)
from promptdeck.core.project.config import Config
from promptdeck.core.project.workspace import Workspace
from promptdeck.core.stories.model import Story, StoryCatalog

LAYOUTS = Path(__file__).resolve().parents[1] / "fixtures" / "layouts"
ART = "_bmad-output/implementation-artifacts"
PLANNING = "_bmad-output/planning-artifacts"
V5_ART = "docs/sprint-artifacts"


def copied(tmp_path: Path, name: str, config: Config | None = None) -> Workspace:
    shutil.copytree(LAYOUTS / name, tmp_path / name)
    return Workspace(root=(tmp_path / name).resolve(), config=config or Config())


def by_id(catalog: StoryCatalog) -> dict[str, Story]:
    ids = [story.id for story in catalog.stories]
    assert len(ids) == len(set(ids)), f"a story listed twice: {ids}"
    return {story.id: story for story in catalog.stories}


@pytest.fixture
def nested(tmp_path: Path) -> Workspace:
    return copied(tmp_path, "v6-nested")


@pytest.fixture
def v5(tmp_path: Path) -> Workspace:
    # The folders as the fixture's own .promptdeck/config.toml sets them, built directly so
    # the test does not depend on how promptdeck finds docs/sprint-artifacts by itself.
    return copied(
        tmp_path, "v5-sprint-artifacts", Config(paths_artifacts=V5_ART, paths_planning="docs")
    )


# ------------------------------------------------------------------------ any depth


def test_story_files_two_folders_down_are_found(nested: Workspace) -> None:
    stories = by_id(load_catalog(nested))
    assert stories["19-1"].path == f"{ART}/epic19/stories/19-1-csv-import.md"
    assert stories["19-2"].path == f"{ART}/epic19/stories/19-2-json-import.md"
    assert stories["19-1"].status_source == f"{ART}/sprint-status.yaml:21"
    assert [task.text for task in stories["19-1"].tasks] == [
        "Read the header row",
        "Map columns to fields",
    ]


def test_hidden_folders_node_modules_and_folders_past_the_depth_are_not_searched(
    nested: Workspace,
) -> None:
    # 19-3 has copies in node_modules/, .drafts/ and deep/a/b/c/d/ (five levels down): none
    # is its file.
    story = by_id(load_catalog(nested))["19-3"]
    assert story.path is None
    assert story.searched == (ART,)


def test_the_one_story_lookup_finds_the_file_the_full_scan_finds(nested: Workspace) -> None:
    full = by_id(load_catalog(nested))
    for story_id in ("19-1", "19-2", "9-16", "15-TD-1", "HF-18-v4"):
        narrowed = load_story_catalog(nested, story_id).find(story_id)
        assert narrowed.path == full[story_id].path
        assert narrowed.companions == full[story_id].companions
    only = load_bmad_plan(nested, only_key="19-1")
    assert [s.path for s in only.stories] == [f"{ART}/epic19/stories/19-1-csv-import.md"]


def test_a_story_with_no_file_says_which_folders_were_searched(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {
            f"{ART}/sprint-status.yaml": (
                'story_location: "{project-root}/docs/stories"\n'
                "development_status:\n  1-1-a: ready-for-dev\n"
            ),
            "docs/stories/readme.txt": "stories go here\n",
        },
    )
    story = load_catalog(ws).find("1-1")
    assert story.path is None
    assert story.searched == (ART, "docs/stories")
    assert story.to_dict()["searched"] == [ART, "docs/stories"]


def test_story_location_is_searched_with_its_subfolders(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {
            f"{ART}/sprint-status.yaml": (
                'story_location: "{project-root}/docs/stories"\n'
                "development_status:\n  4-2-export: review\n"
            ),
            "docs/stories/epic4/4-2-export.md": "# Story 4.2: Export\n\nStatus: review\n",
        },
    )
    assert load_catalog(ws).find("4-2").path == "docs/stories/epic4/4-2-export.md"


def test_the_folder_cap_stops_the_search_with_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = {f"{ART}/sprint-status.yaml": "development_status:\n  1-1-a: ready-for-dev\n"}
    files.update({f"{ART}/f{n}/notes.txt": "x\n" for n in range(6)})
    ws = make_workspace(tmp_path, files)
    monkeypatch.setattr(story_scan, "FOLDER_LIMIT", 3)
    catalog = load_catalog(ws)
    lines = [w for w in catalog.warnings if "search stopped" in w]
    assert lines == [
        f"story files: the search stopped after 3 folders; {ART}/f2 and the folders after it "
        "were not searched"
    ]


def test_symlinked_folders_are_followed_inside_the_project_only_and_once(tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "1-2-b.md").write_text("# Story 1.2: Outside\n", encoding="utf-8")
    ws = make_workspace(
        tmp_path / "project",
        {
            f"{ART}/sprint-status.yaml": "development_status:\n  1-1-a: done\n  1-2-b: done\n",
            "shared/stories/1-1-a.md": "# Story 1.1: A\n\nStatus: done\n",
        },
    )
    artifacts = ws.root / ART
    (artifacts / "out").symlink_to(outside, target_is_directory=True)
    (artifacts / "in").symlink_to(ws.root / "shared", target_is_directory=True)
    (artifacts / "loop").symlink_to(artifacts, target_is_directory=True)
    (artifacts / "self").symlink_to(artifacts / "self")
    (artifacts / "devices").symlink_to("/dev", target_is_directory=True)
    os.mkfifo(artifacts / "pipe")
    stories = by_id(load_catalog(ws))
    assert stories["1-1"].path == f"{ART}/in/stories/1-1-a.md"
    assert stories["1-2"].path is None  # its only file is outside the project


# ------------------------------------------------------------------- BMAD v5 layout


def test_v5_sprint_artifacts_layout_reads_every_story_with_its_status(v5: Workspace) -> None:
    stories = by_id(load_catalog(v5))
    rows = {s.id: (s.status, s.path) for s in stories.values()}
    assert rows == {
        "1-1": ("done", f"{V5_ART}/1-1-add-a-book.md"),
        "1-2": ("review", f"{V5_ART}/1-2-reorder-books.md"),
        "1-3": ("ready-for-dev", f"{V5_ART}/1-3-remove-a-book.md"),  # legacy 'drafted'
        "2-1": ("in-progress", "docs/stories/2-1-share-link.md"),
        "2-2": ("ready-for-dev", "docs/stories/2-2-revoke-link.md"),
    }


def test_v5_layout_with_its_own_config_file(tmp_path: Path) -> None:
    from promptdeck.core.project.workspace import open_workspace

    shutil.copytree(LAYOUTS / "v5-sprint-artifacts", tmp_path / "v5")
    ws = open_workspace(tmp_path / "v5")
    assert ws.config.paths_artifacts == V5_ART
    assert [s.id for s in load_catalog(ws).stories] == ["1-1", "1-2", "1-3", "2-1", "2-2"]


# ------------------------------------------------------------------ epic tech specs


def test_tech_spec_epic_n_is_the_epics_tech_spec_never_unattached(
    v5: Workspace, nested: Workspace
) -> None:
    catalog = load_catalog(v5)
    stories = by_id(catalog)
    # BMAD v5 wrote it to the output folder (docs/); one in the artifacts folder counts too.
    assert {s.id: s.epic_tech_spec for s in stories.values()} == {
        "1-1": "docs/tech-spec-epic-1.md",
        "1-2": "docs/tech-spec-epic-1.md",
        "1-3": "docs/tech-spec-epic-1.md",
        "2-1": f"{V5_ART}/tech-spec-epic-2.md",
        "2-2": f"{V5_ART}/tech-spec-epic-2.md",
    }
    assert stories["1-1"].to_dict()["epic_tech_spec"] == "docs/tech-spec-epic-1.md"
    assert catalog.unattached == ()
    assert not any("tech-spec-epic" in u.reason for u in catalog.unreadable)
    nested_stories = by_id(load_catalog(nested))
    assert nested_stories["19-1"].epic_tech_spec == f"{ART}/tech-spec-epic-19.md"
    assert nested_stories["9-16"].epic_tech_spec is None


def test_keyless_quick_specs_are_unattached_never_stories_of_a_made_up_epic(
    nested: Workspace,
) -> None:
    catalog = load_catalog(nested)
    assert catalog.unattached == (
        f"{ART}/tech-spec-dark-mode.md",
        f"{ART}/spec-mvp-2-launch.md",
    )
    assert not any(s.group.lower() == "mvp" for s in catalog.stories)
    [group] = [g for g in group_notes(catalog) if g.kind == "specs tied to no story"]
    assert group.lines == (
        f"{ART}/tech-spec-dark-mode.md: no story key; attach it in .promptdeck/config.toml",
        f"{ART}/spec-mvp-2-launch.md: its name starts with 'mvp-2', no story of the plan; "
        "attach it in .promptdeck/config.toml",
    )


def test_a_tech_spec_named_for_an_unknown_story_is_unattached(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {
            f"{ART}/sprint-status.yaml": "development_status:\n  1-1-a: done\n",
            f"{ART}/tech-spec-1-1-a.md": "# Tech spec of 1.1\n",
            f"{ART}/tech-spec-ui-3-panels.md": "# Panels\n",
        },
    )
    assert load_catalog(ws).unattached == (f"{ART}/tech-spec-ui-3-panels.md",)


# ---------------------------------------------------------------- stale epic context


def _git(root: Path, *args: str, when: int | None = None) -> None:
    env = dict(os.environ)
    if when is not None:
        env["GIT_AUTHOR_DATE"] = env["GIT_COMMITTER_DATE"] = f"@{when} +0000"
    subprocess.run(["git", *args], cwd=root, check=True, env=env, capture_output=True)


def _epic_context_project(tmp_path: Path) -> Workspace:
    return make_workspace(
        tmp_path,
        {
            f"{ART}/sprint-status.yaml": "development_status:\n  1-1-a: ready-for-dev\n",
            f"{ART}/1-1-a.md": "# Story 1.1: A\n",
            f"{ART}/epic-1-context.md": "# Epic 1 Context: Accounts\n",
            f"{PLANNING}/epics.md": "## Epic 1: Accounts\n",
        },
    )


def _stale(ws: Workspace) -> str | None:
    scan = bmad_spec.scan_artifacts(ws)
    return scan.epic_contexts["1"].newer


def test_a_fresh_clone_is_not_stale_whatever_the_checkout_order(tmp_path: Path) -> None:
    ws = _epic_context_project(tmp_path)
    _git(ws.root, "init", "-q")
    _git(ws.root, "add", "-A")
    _git(ws.root, "commit", "-q", "-m", "plan", when=1_700_000_000)
    # The checkout wrote the planning file after the context: file times say nothing.
    os.utime(ws.root / ART / "epic-1-context.md", (1_000_000, 1_000_000))
    os.utime(ws.root / PLANNING / "epics.md", (3_000_000, 3_000_000))
    assert _stale(ws) is None
    story = load_catalog(ws).find("1-1")
    reason, flags = context_files.context_reason(ws, story, f"{ART}/epic-1-context.md")
    assert (reason, flags) == ("epic context of epic 1", ())


def test_a_planning_file_committed_after_the_context_makes_it_stale(tmp_path: Path) -> None:
    ws = _epic_context_project(tmp_path)
    _git(ws.root, "init", "-q")
    _git(ws.root, "add", "-A")
    _git(ws.root, "commit", "-q", "-m", "plan", when=1_700_000_000)
    (ws.root / PLANNING / "epics.md").write_text("## Epic 1: Accounts and roles\n")
    _git(ws.root, "commit", "-q", "-am", "replan", when=1_700_000_100)
    # Even with the context's file time the newest: the commits decide.
    os.utime(ws.root / ART / "epic-1-context.md", (4_000_000_000, 4_000_000_000))
    assert _stale(ws) == f"{PLANNING}/epics.md"


def test_a_planning_file_edited_since_the_checkout_makes_it_stale(tmp_path: Path) -> None:
    ws = _epic_context_project(tmp_path)
    _git(ws.root, "init", "-q")
    _git(ws.root, "add", "-A")
    _git(ws.root, "commit", "-q", "-m", "plan", when=1_700_000_000)
    (ws.root / PLANNING / "epics.md").write_text("## Epic 1: Accounts and roles\n")
    os.utime(ws.root / PLANNING / "epics.md", (1_700_000_100, 1_700_000_100))
    assert _stale(ws) == f"{PLANNING}/epics.md"


def test_without_git_a_sub_second_time_difference_is_no_evidence(tmp_path: Path) -> None:
    ws = _epic_context_project(tmp_path)
    os.utime(ws.root / ART / "epic-1-context.md", (1_000_000.0, 1_000_000.0))
    os.utime(ws.root / PLANNING / "epics.md", (1_000_000.6, 1_000_000.6))
    assert _stale(ws) is None
    os.utime(ws.root / PLANNING / "epics.md", (1_000_010.0, 1_000_010.0))
    assert _stale(ws) == f"{PLANNING}/epics.md"


def test_telling_staleness_runs_none_of_the_repositorys_programs(tmp_path: Path) -> None:
    ws = _epic_context_project(tmp_path / "project")
    marker = tmp_path / "ran"
    (ws.root / ".gitattributes").write_text("*.md filter=probe\n")
    _git(ws.root, "init", "-q")
    _git(ws.root, "add", "-A")
    _git(ws.root, "commit", "-q", "-m", "plan", when=1_700_000_000)
    for key, value in (
        ("filter.probe.clean", f"touch {marker}; cat"),
        ("filter.probe.process", f"touch {marker}"),
        ("core.fsmonitor", f"touch {marker}; true"),
        ("log.showSignature", "true"),
        ("gpg.program", f"touch {marker}; true"),
    ):
        _git(ws.root, "config", key, value)
    # A new file time with the same text: git compares the content, through the filter.
    os.utime(ws.root / PLANNING / "epics.md", (1_800_000_000, 1_800_000_000))
    assert _stale(ws) is None
    assert not marker.exists()
