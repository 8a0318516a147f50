"""Where the plan is: BMAD's configuration of every generation (v4 ``core-config.yaml``, v5 and
v6-alpha ``bmad/bmm/config.yaml``), else the default folder, else a bounded search of the
project; which folder was taken and why, and the others."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from builders import write_files
from promptdeck.core.project import find_root, load_config
from promptdeck.core.project import plan_location as plan_location_module
from promptdeck.core.project.bmad_folders import read_bmad_folders
from promptdeck.core.project.plan_location import choose_plan, search_plans
from promptdeck.core.tokens import ReadRecorder

V4_CONFIG = """\
markdownExploder: true
qa:
  qaLocation: docs/qa
prd:
  prdFile: docs/prd.md
  prdVersion: v4
  prdSharded: true
  prdShardedLocation: docs/prd
  epicFilePattern: epic-{n}*.md
architecture:
  architectureFile: docs/architecture.md
  architectureSharded: true
  architectureShardedLocation: docs/architecture
devLoadAlwaysFiles:
  - docs/architecture/coding-standards.md
  - docs/architecture/tech-stack.md
  - docs/architecture/source-tree.md
devDebugLog: .ai/debug-log.md
devStoryLocation: docs/stories
slashPrefix: BMad
"""
V4_STORY = "# Story 1.1: First\n\n## Status\n\nApproved\n"
SPRINT_STATUS = "development_status:\n  epic-1: in-progress\n  1-1-first: ready-for-dev\n"
V5_STORY = "# Story 1.1: First\n\nStatus: ready-for-dev\n"


def v4_project(root: Path, config: str = V4_CONFIG) -> Path:
    write_files(
        root,
        {
            ".bmad-core/core-config.yaml": config,
            "docs/stories/1.1.first.md": V4_STORY,
            "docs/prd/epic-1-start.md": "# Epic 1\n",
            "docs/architecture/coding-standards.md": "rules\n",
        },
    )
    return root


def v5_project(root: Path, folder: str = "docs/sprint-artifacts") -> Path:
    write_files(
        root,
        {f"{folder}/sprint-status.yaml": SPRINT_STATUS, f"{folder}/1-1-first.md": V5_STORY},
    )
    return root


def age(path: Path, seconds: float) -> None:
    """Make ``path`` look last changed ``seconds`` ago."""
    stamp = os.stat(path).st_mtime - seconds
    os.utime(path, (stamp, stamp))


# ------------------------------------------------------------------ BMAD v4 core-config.yaml


def test_v4_story_location_is_the_plan_and_the_sharded_prd_the_planning_folder(
    tmp_path: Path,
) -> None:
    config = load_config(v4_project(tmp_path))
    assert config.paths_artifacts == "docs/stories"
    assert config.paths_planning == "docs/prd"
    assert config.plan_origin == "devStoryLocation in .bmad-core/core-config.yaml:19"
    assert config.plan_alternatives == ()


def test_v4_dev_load_always_files_keep_their_origin(tmp_path: Path) -> None:
    config = load_config(v4_project(tmp_path))
    assert config.bmad_always_load == (
        "docs/architecture/coding-standards.md",
        "docs/architecture/tech-stack.md",
        "docs/architecture/source-tree.md",
    )
    assert config.bmad_always_load_origin == ".bmad-core/core-config.yaml:14"


def test_v4_unsharded_prd_gives_its_folder_as_planning(tmp_path: Path) -> None:
    text = "prd:\n  prdFile: docs/prd.md\n  prdSharded: false\ndevStoryLocation: docs/stories\n"
    config = load_config(v4_project(tmp_path, text))
    assert config.paths_planning == "docs"
    assert config.bmad_always_load == () and config.bmad_always_load_origin == ""


def test_v4_always_load_outside_the_project_is_a_problem_line_not_a_file(tmp_path: Path) -> None:
    text = "devLoadAlwaysFiles:\n  - docs/a.md\n  - ../secrets.md\n  - /etc/passwd\n"
    folders = read_bmad_folders(v4_project(tmp_path, text))
    assert folders.always_load == ("docs/a.md",)
    assert folders.always_load_origin == ".bmad-core/core-config.yaml:1"
    wheres = [where for where, _ in folders.problems]
    assert wheres == [".bmad-core/core-config.yaml:3", ".bmad-core/core-config.yaml:4"]
    assert all("devLoadAlwaysFiles" in why and "outside" in why for _, why in folders.problems)


# ------------------------------------------------------------------ BMAD v5 / v6-alpha


@pytest.mark.parametrize("config_file", ["bmad/bmm/config.yaml", "_bmad/bmm/config.yaml"])
def test_v5_sprint_artifacts_with_placeholders_is_the_plan(
    tmp_path: Path, config_file: str
) -> None:
    v5_project(tmp_path, "docs/sprint-artifacts")
    write_files(
        tmp_path,
        {
            config_file: (
                "project_name: demo\n"
                "output_folder: '{project-root}/docs'\n"
                'sprint_artifacts: "{output_folder}/sprint-artifacts"\n'
                "dev_story_location: '{project-root}/docs/stories'\n"
            )
        },
    )
    config = load_config(tmp_path)
    assert config.paths_artifacts == "docs/sprint-artifacts"
    assert config.plan_origin == f"sprint_artifacts in {config_file}:3"
    # dev_story_location names a missing folder: one line, with its file:line.
    assert config.bmad_problems == (
        (f"{config_file}:4", "dev_story_location '{project-root}/docs/stories' does not exist"),
    )


def test_a_config_naming_the_default_output_while_the_plan_is_in_docs(tmp_path: Path) -> None:
    v5_project(tmp_path)
    write_files(
        tmp_path, {"bmad/bmm/config.yaml": "output_folder: '{project-root}/_bmad-output'\n"}
    )
    config = load_config(tmp_path)
    assert config.paths_artifacts == "docs/sprint-artifacts"
    assert config.paths_planning == "docs"
    assert config.plan_origin == "found by search: docs/sprint-artifacts/sprint-status.yaml"


# ------------------------------------------------------------------ the search


def test_no_config_finds_the_plan_under_docs(tmp_path: Path) -> None:
    config = load_config(v5_project(tmp_path))
    assert config.paths_artifacts == "docs/sprint-artifacts"
    assert config.plan_origin == "found by search: docs/sprint-artifacts/sprint-status.yaml"


def test_no_config_finds_v4_story_files_by_name(tmp_path: Path) -> None:
    write_files(
        tmp_path,
        {
            "docs/stories/1.1.first.md": V4_STORY,
            "docs/notes.md": "x\n",
            "docs/releases/1.2.0.md": "# 1.2.0\n",  # release notes, no story
        },
    )
    config = load_config(tmp_path)
    assert config.paths_artifacts == "docs/stories"
    assert config.plan_origin == "found by search: docs/stories (BMAD v4 story files)"


def test_two_sprint_status_files_the_newest_is_chosen_and_the_other_named(
    tmp_path: Path,
) -> None:
    v5_project(tmp_path, "docs/sprint-artifacts")
    v5_project(tmp_path, "web/docs/sprint-artifacts")
    age(tmp_path / "docs/sprint-artifacts/sprint-status.yaml", 86_400)
    config = load_config(tmp_path)
    assert config.paths_artifacts == "web/docs/sprint-artifacts"
    assert "(the newest of 2 plans found)" in config.plan_origin
    [(folder, why)] = config.plan_alternatives
    assert folder == "docs/sprint-artifacts"
    assert "docs/sprint-artifacts/sprint-status.yaml: changed" in why
    assert "before web/docs/sprint-artifacts/sprint-status.yaml" in why


def test_the_plan_inside_the_configured_output_folder_wins_over_a_newer_one(
    tmp_path: Path,
) -> None:
    v5_project(tmp_path, "plan/sprint-artifacts")
    v5_project(tmp_path, "old/sprint-artifacts")
    age(tmp_path / "plan/sprint-artifacts/sprint-status.yaml", 86_400)
    write_files(tmp_path, {"bmad/bmm/config.yaml": "output_folder: plan\n"})
    config = load_config(tmp_path)
    assert config.paths_artifacts == "plan/sprint-artifacts"
    assert "the one inside the configured folder" in config.plan_origin
    assert config.plan_alternatives == (
        (
            "old/sprint-artifacts",
            "sprint-status old/sprint-artifacts/sprint-status.yaml: not inside the folder"
            " BMAD's configuration names",
        ),
    )


def git(root: Path, *args: str, when: str = "2024-01-01T00:00:00Z") -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_DATE": when,
        "GIT_COMMITTER_DATE": when,
        "GIT_CONFIG_NOSYSTEM": "1",
    }
    identity = ["-c", "user.name=promptdeck tests", "-c", "user.email=tests@promptdeck.invalid"]
    subprocess.run(["git", *identity, *args], cwd=root, check=True, env=env)


def test_in_a_git_repository_the_last_commit_decides_not_the_file_time(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    v5_project(tmp_path, "a/sprint-artifacts")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "old plan", when="2024-01-01T00:00:00Z")
    v5_project(tmp_path, "b/sprint-artifacts")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-qm", "new plan", when="2025-06-01T00:00:00Z")
    # The older plan's file was touched last: only its commit says it is older.
    age(tmp_path / "b/sprint-artifacts/sprint-status.yaml", 86_400)
    config = load_config(tmp_path)
    assert config.paths_artifacts == "b/sprint-artifacts"
    [(folder, why)] = config.plan_alternatives
    assert folder == "a/sprint-artifacts" and "changed 2024-01-01 00:00" in why


def test_the_search_passes_over_dependency_build_and_hidden_folders(tmp_path: Path) -> None:
    for folder in ("node_modules/pkg", "vendor/x", ".cache/x", "build", "dist/y", ".venv/z"):
        v5_project(tmp_path, folder)
    v5_project(tmp_path, "a/b/c/d/e")  # deeper than the search goes
    search = search_plans(tmp_path, use_git=False)
    assert search.candidates == () and search.stopped == ""
    v5_project(tmp_path, "a/b/c/d")
    assert [c.folder for c in search_plans(tmp_path, use_git=False).candidates] == ["a/b/c/d"]


def test_openspec_below_the_root_is_found(tmp_path: Path) -> None:
    write_files(tmp_path, {"web/openspec/changes/add-x/tasks.md": "## 1. Do\n- [ ] 1.1 a\n"})
    config = load_config(tmp_path)
    assert config.paths_openspec == "web/openspec"
    assert config.plan_origin == "OpenSpec found by search: web/openspec"


def test_a_v7_initiative_found_by_search_sets_the_output_folder(tmp_path: Path) -> None:
    write_files(tmp_path, {"plans/initiative-app/tickets.toml": "[[epic]]\nid = 1\n"})
    config = load_config(tmp_path)
    assert config.paths_artifacts == "plans/implementation-artifacts"
    assert "found by search: plans/initiative-app/tickets.toml" in config.plan_origin


def test_nothing_found_keeps_the_default_and_says_so(tmp_path: Path) -> None:
    write_files(tmp_path, {"docs/readme.md": "x\n"})
    config = load_config(tmp_path)
    assert config.paths_artifacts == "_bmad-output/implementation-artifacts"
    assert config.plan_origin == "default (the search found no plan)"


def test_choose_plan_with_no_candidates() -> None:
    choice = choose_plan(plan_location_module.PlanSearch())
    assert choice.chosen is None and choice.alternatives == ()


# ------------------------------------------------------------------ no search when named


@pytest.fixture
def no_search(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*_args: object, **_kwargs: object) -> None:
        raise AssertionError("searched although a folder was named")

    monkeypatch.setattr(plan_location_module, "search_plans", refuse)


@pytest.mark.usefixtures("no_search")
def test_a_named_or_default_folder_is_taken_without_a_search(tmp_path: Path) -> None:
    assert load_config(v4_project(tmp_path / "v4")).paths_artifacts == "docs/stories"
    default = v5_project(tmp_path / "v6", "_bmad-output/implementation-artifacts")
    assert load_config(default).plan_origin == "default"
    paths = v5_project(tmp_path / "paths", "docs/sprint-artifacts")
    write_files(paths, {".promptdeck/config.toml": '[paths]\nartifacts = "elsewhere"\n'})
    config = load_config(paths)
    assert config.paths_artifacts == "elsewhere"
    assert config.plan_origin == "[paths] artifacts in .promptdeck/config.toml"
    openspec = tmp_path / "openspec-only"
    write_files(openspec, {"openspec/changes/a/tasks.md": "## 1. A\n"})
    assert load_config(openspec).plan_origin == "default"


# ------------------------------------------------------------------ where the root is


@pytest.mark.parametrize("marker", [".bmad-core", "_bmad", "bmad/bmm"])
def test_the_root_is_the_folder_holding_bmad_configuration(tmp_path: Path, marker: str) -> None:
    (tmp_path / marker).mkdir(parents=True)
    (tmp_path / "docs" / "stories").mkdir(parents=True)
    assert find_root(tmp_path / "docs" / "stories") == tmp_path.resolve()


# ------------------------------------------------------------------ remembered answers


def test_a_plan_that_moves_changes_the_settings_repr(tmp_path: Path) -> None:
    v5_project(tmp_path, "docs/sprint-artifacts")
    before = repr(load_config(tmp_path))
    v5_project(tmp_path, "web/sprint-artifacts")
    age(tmp_path / "docs/sprint-artifacts/sprint-status.yaml", 86_400)
    after = repr(load_config(tmp_path))
    assert "found by search: docs/sprint-artifacts" in before
    assert "found by search: web/sprint-artifacts" in after


def test_the_search_lists_what_a_remembered_answer_must_watch(tmp_path: Path) -> None:
    v5_project(tmp_path, "docs/sprint-artifacts")
    recorder = ReadRecorder()
    with recorder.recording():
        load_config(tmp_path)
    listed = {path for path, how in recorder.paths if how == "list"}
    # A new plan in docs/ or web/ changes these folders' times: the answer is read again.
    assert str(tmp_path / "docs") in listed and str(tmp_path) in listed


def test_an_empty_configured_folder_gives_way_to_a_plan_found_by_search(tmp_path: Path) -> None:
    write_files(tmp_path, {"_bmad/bmm/config.yaml": "implementation_artifacts: out/impl\n"})
    (tmp_path / "out" / "impl").mkdir(parents=True)
    assert load_config(tmp_path).plan_origin == (
        "implementation_artifacts in _bmad/bmm/config.yaml:1"
        " (empty; the search found no other plan)"
    )
    v5_project(tmp_path, "docs/sprint-artifacts")
    config = load_config(tmp_path)
    assert config.paths_artifacts == "docs/sprint-artifacts"
    assert config.plan_alternatives == (
        ("out/impl", "implementation_artifacts in _bmad/bmm/config.yaml:1: the folder is empty"),
    )


def test_in_a_repository_the_search_notes_the_index_for_remembered_answers(
    tmp_path: Path,
) -> None:
    git(tmp_path, "init", "-q")
    v5_project(tmp_path, "docs/sprint-artifacts")
    git(tmp_path, "add", "-A")
    recorder = ReadRecorder()
    with recorder.recording():
        config = load_config(tmp_path)
    assert config.plan_origin == "found by search: docs/sprint-artifacts/sprint-status.yaml"
    # git's file list is no listing the recorder sees: a file added to git changes the index.
    assert (str(tmp_path / ".git" / "index"), "stat") in recorder.paths


def test_v6_alpha_hidden_bmad_folder_names_the_plan(tmp_path: Path) -> None:
    # 6.0.0-alpha installs as `.bmad/` and its config names the plan; the project also keeps
    # sample plans of its own under test/fixtures/, newer than the real one.
    v5_project(tmp_path, "docs/sprint-artifacts")
    v5_project(tmp_path, "test/fixtures/mid-sprint/docs/sprint-artifacts")
    age(tmp_path / "docs/sprint-artifacts/sprint-status.yaml", 86_400)
    write_files(
        tmp_path,
        {".bmad/bmm/config.yaml": "sprint_artifacts: '{project-root}/docs/sprint-artifacts'\n"},
    )
    config = load_config(tmp_path)
    assert config.paths_artifacts == "docs/sprint-artifacts"
    assert config.plan_origin == "sprint_artifacts in .bmad/bmm/config.yaml:1"
    assert find_root(tmp_path / ".bmad" / "bmm") == tmp_path


def test_a_plan_in_a_test_fixture_folder_gives_way_to_the_project_s_own(tmp_path: Path) -> None:
    v5_project(tmp_path, "docs/sprint-artifacts")
    v5_project(tmp_path, "test/fixtures/all-done")
    age(tmp_path / "docs/sprint-artifacts/sprint-status.yaml", 86_400)
    config = load_config(tmp_path)
    assert config.paths_artifacts == "docs/sprint-artifacts"
    [(folder, why)] = config.plan_alternatives
    assert folder == "test/fixtures/all-done"
    assert why.endswith("inside a test, fixture or example folder")
