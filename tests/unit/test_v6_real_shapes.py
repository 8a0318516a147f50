"""BMAD v6 plans in the shapes real projects give them, read from the fixtures
``tests/fixtures/layouts/v6-tracks`` (prefixed tracks beside numbered epics, a ``stories/``
folder) and ``v6-bmad-config`` (BMAD's own configuration naming the output folder, bold and
annotated ``Status:`` lines, ``bis`` story numbers, story files with no entry).
"""

from __future__ import annotations

import os
import re
import shutil
from pathlib import Path

import pytest
from builders import make_workspace, write_files
from promptdeck.core.errors import StoryNotFound
from promptdeck.core.injection.builder import build_story_injection
from promptdeck.core.injection.model import Selection
from promptdeck.core.plans import bmad
from promptdeck.core.plans.bmad_story_file import clean_status
from promptdeck.core.plans.catalog import load_catalog, load_story_catalog
from promptdeck.core.plans.sprint_status import parse_sprint_status
from promptdeck.core.plans.writeback import write_back
from promptdeck.core.project.bmad_folders import read_bmad_folders
from promptdeck.core.project.workspace import Workspace, open_workspace
from promptdeck.core.stories.keys import epic_tracks, read_entry_keys
from promptdeck.core.stories.model import Story
from test_plan_layouts import by_id, fixture

LAYOUTS = Path(__file__).resolve().parents[1] / "fixtures" / "layouts"
TRACKS = "_bmad-output/implementation-artifacts"
PLAN = "plan_docs/implementation-artifacts"
# BMAD's sprint-planning grammar (STORY_KEY_RE), re-typed from its definition.
BMAD_GRAMMAR = re.compile(r"^(\d+)-(\d+)([a-z]?)-.+")


def included(workspace: Workspace, story: Story) -> dict[str, str]:
    injection = build_story_injection(
        workspace, story, Selection(), command_name="dev", count_tokens=False
    )
    return {f.path: f.reason for f in injection.files if f.included}


# ------------------------------------------------------------------ prefixed tracks


def test_prefixed_track_keys_are_stories_with_their_sprint_status(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "v6-tracks")
    catalog = load_catalog(ws)
    stories = by_id(catalog)
    ss = f"{TRACKS}/sprint-status.yaml"
    assert {sid: (s.status, s.status_source) for sid, s in stories.items()} == {
        "1-1": ("done", f"{ss}:14"),
        "1-8": ("done", f"{ss}:15"),
        "gov-1-1": ("done", f"{ss}:20"),
        "gov-1-2": ("in-progress", f"{ss}:21"),
        "consent-gov-1-1": ("done", f"{ss}:26"),
        "hardening-1": ("done", f"{ss}:30"),
        "petition-1-8": ("done", f"{ss}:35"),
        "petition-2a-1": ("done", f"{ss}:39"),
        "petition-2a-2": ("review", f"{ss}:40"),
    }
    # Each file matches its story by the full prefixed key, never a bare number's story.
    assert stories["petition-2a-1"].path == f"{TRACKS}/stories/petition-2a-1-session-model.md"
    assert stories["hardening-1"].path == f"{TRACKS}/stories/hardening-1-clock-injection.md"
    assert stories["gov-1-2"].path is None
    assert (stories["petition-2a-1"].group, stories["hardening-1"].group) == (
        "petition-2a",
        "hardening",
    )
    assert not any(s.id.lower() in ("2a-1", "2a-2") for s in catalog.stories)


def test_track_epic_entries_are_epics_not_unreadable_stories(tmp_path: Path) -> None:
    catalog = load_catalog(fixture(tmp_path, "v6-tracks"))
    assert catalog.unreadable == ()
    assert epic_tracks(["gov-epic-1", "hardening-epic", "petition-epic-2a", "epic-1"]) == {
        "gov",
        "hardening",
        "petition",
    }


def test_a_file_named_for_a_track_key_is_never_claimed_by_its_heading(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "v6-tracks")
    stories = by_id(load_catalog(ws))
    halt = stories["1-8"]
    # `petition-1-8-….md` is headed `# Story 1.8:` but its name names petition-1-8.
    assert (halt.path, halt.files, halt.title) == (None, (), "Halt check stub")
    assert not any("petition" in path for path in included(ws, halt))
    petition = stories["petition-1-8"]
    assert petition.title == "Status endpoint"
    assert f"{TRACKS}/stories/petition-1-8-status-endpoint.md" in included(ws, petition)
    # The one-story lookup answers as the full catalog does.
    assert load_story_catalog(ws, "1-8").find("1-8") == halt
    # The number a track's heading gives is no story id; the track's story is the nearest.
    with pytest.raises(StoryNotFound, match=r"nearest: petition-2a-1\b"):
        load_catalog(ws).find("2A-1")


def test_a_track_story_is_found_by_its_id_in_the_one_story_lookup(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "v6-tracks")
    story = load_story_catalog(ws, "petition-2a-1").find("petition-2a-1")
    assert story.status == "done"
    assert included(ws, story) == {
        f"{TRACKS}/stories/petition-2a-1-session-model.md": (
            "the story file: its name starts with story key petition-2a-1"
        )
    }


def test_key_notes_say_what_bmads_grammar_really_does(tmp_path: Path) -> None:
    names = [
        "gov-1-1-rank-table",
        "gov-1-2-rank-port",
        "consent-gov-1-1-envelope",
        "hardening-1-clock",
        "petition-2a-1-session",
        "10-1-1-offline",
        "10-1-pwa",
        "a-1-2-first",
        "a-1-3-second",
        "0-4bis-ios",
        "1bis-2bis-shell",
        "1-1A-upper",
    ]
    keys = read_entry_keys(names, epic_tracks(["gov-epic-1", "petition-epic-2a"]))
    for name, key in zip(names, keys, strict=True):
        assert key is not None, name
        theirs = BMAD_GRAMMAR.match(name)
        if theirs is not None and key.key == f"{theirs.group(1)}-{theirs.group(2)}":
            assert key.off_grammar == "", name  # read as BMAD reads it
            continue
        assert key.off_grammar, name
        said = re.search(r"reads it as story (\S+)", key.off_grammar)
        if theirs is None:
            assert said is None, key.off_grammar
            assert "reads no story" in key.off_grammar or "wants" in key.off_grammar, name
        else:
            assert said is not None, key.off_grammar
            assert said.group(1) == f"{theirs.group(1)}-{theirs.group(2)}{theirs.group(3)}"
    read = dict(zip(names, keys, strict=True))
    assert read["gov-1-1-rank-table"].id == "gov-1-1"  # type: ignore[union-attr]
    assert read["hardening-1-clock"].id == "hardening-1"  # type: ignore[union-attr]
    assert read["petition-2a-1-session"].epic == "petition-2a"  # type: ignore[union-attr]
    assert read["0-4bis-ios"].id == "0-4bis"  # type: ignore[union-attr]
    # A track with no epic entry is read by its word's length: `gov` could be a letter epic.
    assert read_entry_keys(["petition-3-1-x"])[0].id == "petition-3-1"  # type: ignore[union-attr]
    assert read_entry_keys(["story-1-2-login"]) == [None]


def test_the_fixtures_notes_agree_with_the_grammar(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "v6-tracks")
    text = (ws.root / TRACKS / "sprint-status.yaml").read_text(encoding="utf-8")
    lines = {entry.line: entry.name for entry in parse_sprint_status(text)}
    for story in load_catalog(ws).stories:
        name = lines[int(story.status_source.rsplit(":", 1)[1])]
        if BMAD_GRAMMAR.match(name):
            assert story.off_grammar == "", story.id
        else:
            assert "BMAD's grammar reads no story in it" in story.off_grammar, story.id


# ------------------------------------------------------------------ BMAD's configuration


def test_bmads_configured_output_folder_is_where_the_plan_is_read(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "v6-bmad-config")
    assert (ws.config.paths_artifacts, ws.config.paths_planning) == (
        PLAN,
        "plan_docs/planning-artifacts",
    )
    assert ws.config.paths_project_context[-1] == "plan_docs/project-context.md"
    assert "output_folder = plan_docs (from _bmad/custom/config.toml)" in ws.config.bmad_origins
    stories = by_id(load_catalog(ws))
    assert list(stories) == [
        "0-1",
        "0-4bis",
        "1-1",
        "1-2",
        "1bis-1",
        "1bis-2bis",
        "1bis-3bis-a",
        "1bis-3bis-b",
    ]
    assert stories["0-1"].group_title == "Foundation"


def test_the_projects_own_paths_win_over_bmads(tmp_path: Path) -> None:
    root = tmp_path / "v6-bmad-config"
    shutil.copytree(LAYOUTS / "v6-bmad-config", root)
    write_files(root, {".promptdeck/config.toml": '[paths]\nartifacts = "elsewhere"\n'})
    ws = open_workspace(root)
    assert ws.config.paths_artifacts == "elsewhere"
    assert ws.config.paths_planning == "plan_docs/planning-artifacts"


def test_v6_yaml_config_alone_names_the_output_folder(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "_bmad/core/config.yaml": "user_name: Sam\noutput_folder: '{project-root}/docs/bmad'\n",
            "docs/bmad/implementation-artifacts/sprint-status.yaml": (
                "development_status:\n  1-1-start: review\n"
            ),
        },
    )
    ws = open_workspace(tmp_path)
    assert ws.config.paths_artifacts == "docs/bmad/implementation-artifacts"
    assert [(s.id, s.status) for s in load_catalog(ws).stories] == [("1-1", "review")]


@pytest.mark.parametrize(
    ("value", "why"),
    [
        ("/etc", "points outside the project; not read"),
        ("{project-root}/../elsewhere", "points outside the project; not read"),
        ("{project-root}/missing", "does not exist"),
        ("{project-root}/fifo", "is not a folder (a file, device or FIFO); not read"),
        ("{project-root}/device", "points outside the project; not read"),
        (
            "{config_source}/out",
            "holds the placeholder {config_source}, which promptdeck cannot fill",
        ),
    ],
)
def test_a_configured_folder_that_cannot_be_used_is_one_line_and_never_read(
    tmp_path: Path, value: str, why: str
) -> None:
    project = tmp_path / "project"
    write_files(
        project,
        {
            "_bmad/custom/config.toml": f'[modules.bmm]\nimplementation_artifacts = "{value}"\n',
            "_bmad-output/implementation-artifacts/sprint-status.yaml": (
                "development_status:\n  1-1-start: done\n"
            ),
        },
    )
    (tmp_path / "elsewhere").mkdir()
    os.mkfifo(project / "fifo")
    (project / "device").symlink_to("/dev/null")
    ws = open_workspace(project)
    # The default folder stays in use; the configured one is named with why, once.
    assert ws.config.paths_artifacts == "_bmad-output/implementation-artifacts"
    catalog = load_catalog(ws)
    assert [s.id for s in catalog.stories] == ["1-1"]
    [line] = [u for u in catalog.unreadable if u.path == "_bmad/custom/config.toml"]
    assert line.reason == f"implementation_artifacts '{value}' {why}"


def test_a_bmad_config_file_that_is_a_fifo_is_one_line_never_opened(tmp_path: Path) -> None:
    (tmp_path / "_bmad").mkdir()
    os.mkfifo(tmp_path / "_bmad" / "config.toml")
    folders = read_bmad_folders(tmp_path)
    assert folders.artifacts is None
    [(where, why)] = folders.problems
    assert where == "_bmad/config.toml" and "FIFO" in why


# ------------------------------------------------------------------ statuses and files


def test_bold_and_annotated_status_lines_read_the_status_alone(tmp_path: Path) -> None:
    stories = by_id(load_catalog(fixture(tmp_path, "v6-bmad-config")))
    cancelled = stories["1-1"]
    assert (cancelled.status, cancelled.status_drift) == ("cancelled", ())
    assert stories["0-1"].status_drift == ()
    # A real drift keeps the file's note beside its status, never inside it.
    assert stories["1-2"].status_drift == (
        f"{PLAN}/1-2-level-picker.md:3 says 'review' (second pass); "
        f"{PLAN}/sprint-status.yaml:16 says 'done'",
    )
    assert clean_status("**cancelled** (superseded — see above)") == (
        "cancelled",
        "superseded — see above",
    )
    assert clean_status("`in-progress`") == ("in-progress", "")
    assert clean_status("(none yet)") == ("(none yet)", "")


def test_every_story_file_is_a_story_or_passed_over_with_a_reason(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "v6-bmad-config")
    catalog = load_catalog(ws)
    stories = by_id(catalog)
    owned = {path for story in catalog.stories for path in story.files}
    named = {entry.path for entry in (*catalog.skipped, *catalog.unreadable)}
    for path in sorted((ws.root / PLAN).glob("*.md")):
        rel = path.relative_to(ws.root).as_posix()
        assert rel in owned or rel in named, rel
    assert stories["0-4bis"].path == f"{PLAN}/0-4bis-ios-bootstrap.md"
    assert stories["1bis-2bis"].status == "review"
    # A story file with no entry is a story of its own, its status the file's default.
    seed = stories["1bis-3bis-a"]
    assert seed.path == f"{PLAN}/1bis-3bis-a-seed-tertiary.md"
    assert seed.title == "Seed tertiary tracks"
    assert "letter epic '1bis'" in seed.off_grammar


# ------------------------------------------------------------------ story_location, reasons


def test_an_absolute_story_location_inside_the_project_is_used(tmp_path: Path) -> None:
    root = tmp_path.resolve()
    ws = make_workspace(
        root,
        {
            f"{TRACKS}/sprint-status.yaml": (
                f'story_location: "{root}/work/stories"\ndevelopment_status:\n  1-1-a: review\n'
            ),
            "work/stories/1-1-a.md": "# Story 1.1: A\n\nStatus: review\n",
        },
    )
    result = bmad.load_stories(ws)
    assert [s.path for s in result.stories] == ["work/stories/1-1-a.md"]
    assert result.unreadable == ()


def test_an_absolute_story_location_from_another_machine_is_one_line(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {
            f"{TRACKS}/sprint-status.yaml": (
                'story_location: "/workspaces/app/_bmad-output/implementation-artifacts"\n'
                "development_status:\n  1-1-a: review\n"
            ),
            f"{TRACKS}/1-1-a.md": "# Story 1.1: A\n",
        },
    )
    result = bmad.load_stories(ws)
    assert [s.path for s in result.stories] == [f"{TRACKS}/1-1-a.md"]
    [line] = result.unreadable
    assert line.line == 1
    assert line.reason == (
        "story_location '/workspaces/app/_bmad-output/implementation-artifacts' points outside "
        f"the project; not read (its tail is this project's {TRACKS}, which is read)"
    )


def test_the_own_key_reason_spells_the_key_as_the_story_does(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {
            f"{TRACKS}/sprint-status.yaml": "development_status:\n  A-1-edit-profile: done\n",
            f"{TRACKS}/A-1-edit-profile.md": "# Story A.1: Edit profile\n\nStatus: done\n",
        },
    )
    story = load_catalog(ws).find("A-1")
    assert included(ws, story) == {
        f"{TRACKS}/A-1-edit-profile.md": "the story file: its name starts with story key A-1"
    }


def test_a_track_story_writes_its_status_back_on_its_own_line(tmp_path: Path) -> None:
    ws = fixture(tmp_path, "v6-tracks")
    sprint = ws.root / TRACKS / "sprint-status.yaml"
    before = sprint.read_text(encoding="utf-8").splitlines()
    update = write_back(ws, by_id(load_catalog(ws))["gov-1-2"], "dev", succeeded=True)
    assert update is not None
    after = sprint.read_text(encoding="utf-8").splitlines()
    assert [n for n, (old, new) in enumerate(zip(before, after, strict=True)) if old != new] == [20]
    assert after[20] == "  gov-1-2-rank-port: review"
