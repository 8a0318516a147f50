"""The bundled demo workspace keeps its promises, and prepare_demo gives a clean repository."""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import git
import pytest
from promptdeck.core.demo.bundle import (
    DEMO_AUTHOR,
    DEMO_SOURCE,
    TEMP_PREFIX,
    installed_name,
    prepare_demo,
    temporary_demo,
)
from promptdeck.core.errors import UsageError
from promptdeck.core.layers.rules import find_rules_path
from promptdeck.core.plans.catalog import load_catalog, project_context_path
from promptdeck.core.project.workspace import Workspace, open_workspace
from promptdeck.core.stories.keys import name_matches_key
from promptdeck.core.stories.model import StoryCatalog

WARN = 100 * 1024
ERROR = 150 * 1024
ENVELOPE_ALLOWANCE = 2 * 1024  # tags and paths around a handful of files


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return prepare_demo(tmp_path_factory.mktemp("demo") / "ledgerline")


@pytest.fixture(scope="module")
def workspace(demo: Path) -> Workspace:
    return open_workspace(demo)


@pytest.fixture(scope="module")
def catalog(workspace: Workspace) -> StoryCatalog:
    return load_catalog(workspace)


def matched(workspace: Workspace, key: str, *, discovery: bool = False) -> list[Path]:
    """The artifact files seed 000's rules match for ``key`` (default inclusion)."""
    artifacts = workspace.root / workspace.config.paths_artifacts
    files = []
    for path in sorted(artifacts.iterdir()):
        name = path.name.lower()
        if not name_matches_key(name, key) or "tech-spec" in name:
            continue
        if ("discovery" in name) == discovery:
            files.append(path)
    return files


def default_injection_bytes(workspace: Workspace, key: str) -> int:
    context = project_context_path(workspace)
    assert context is not None
    files = [workspace.root / context, *matched(workspace, key)]
    return sum(path.stat().st_size for path in files)


def test_two_epics_and_at_least_six_bmad_stories_with_files(catalog: StoryCatalog) -> None:
    bmad = [s for s in catalog.stories if s.source == "bmad"]
    assert len({s.group for s in bmad}) >= 2
    with_files = [s for s in bmad if s.path]
    assert len(with_files) >= 6
    assert {s.group_title for s in bmad} == {"Statement import", "Reports and budgets"}
    assert {s.status for s in bmad} >= {"done", "in-progress", "ready-for-dev", "review", "backlog"}


def test_bmad_story_files_have_the_bmad_sections(demo: Path, catalog: StoryCatalog) -> None:
    for story in catalog.stories:
        if story.source != "bmad" or story.path is None:
            continue
        text = (demo / story.path).read_text(encoding="utf-8")
        for section in (
            "## Story",
            "## Acceptance Criteria",
            "## Tasks / Subtasks",
            "## Dev Notes",
        ):
            assert f"\n{section}\n" in text, f"{story.path} lacks {section}"
        assert story.tasks, story.path


def test_openspec_change_has_three_stories_with_scenarios(catalog: StoryCatalog) -> None:
    changes = [s for s in catalog.stories if s.source == "openspec"]
    assert len(changes) >= 3
    assert {s.group for s in changes} == {"add-recurring-payments"}  # archive ignored
    story = changes[0]
    assert any(path.endswith("/spec.md") for path in story.files)
    assert story.requirements and all(r.scenarios for r in story.requirements)
    assert {s.status for s in changes} >= {"in-progress", "ready-for-dev"}


def test_malformed_draft_is_listed_under_skipped(catalog: StoryCatalog) -> None:
    assert [Path(s.path).name for s in catalog.skipped] == ["3-9-draft.md"]
    assert catalog.skipped[0].reason.startswith("no-story-heading")
    assert catalog.warnings == ()


def test_one_story_crosses_the_warning_line_and_one_the_error_line(
    workspace: Workspace,
) -> None:
    warning = default_injection_bytes(workspace, "1-3")
    assert warning > WARN and warning + ENVELOPE_ALLOWANCE < ERROR
    assert default_injection_bytes(workspace, "2-2") > ERROR
    assert default_injection_bytes(workspace, "1-4") + ENVELOPE_ALLOWANCE < WARN


def test_discovery_adds_a_few_kib_to_an_ordinary_story(workspace: Workspace) -> None:
    (discovery,) = matched(workspace, "1-4", discovery=True)
    assert 2 * 1024 <= discovery.stat().st_size <= 8 * 1024


def test_settings_rules_and_learnings(demo: Path, workspace: Workspace) -> None:
    assert workspace.config.agent_default == "replay"
    assert workspace.config.agent_replay_git  # the demo's simulation may stage and commit
    assert any("pytest" in command for command in workspace.config.verify_commands)
    assert (demo / find_rules_path(workspace)[0]).read_text(encoding="utf-8").startswith("# ")
    learnings = (demo / workspace.config.paths_learnings).read_text(encoding="utf-8")
    assert learnings.count("\n## ") >= 3
    assert (demo / ".promptdeck/.gitignore").read_text(encoding="utf-8").split() == [
        "runs/",
        "exports/",
        "locks/",
    ]


def test_prepare_demo_makes_a_clean_repository_with_one_commit(demo: Path) -> None:
    repo = git.Repo(demo)
    assert not repo.is_dirty(untracked_files=True)
    commits = list(repo.iter_commits())
    assert len(commits) == 1
    assert (commits[0].author.name, commits[0].author.email) == DEMO_AUTHOR
    reader = repo.config_reader("repository")
    assert reader.get_value("user", "email") == DEMO_AUTHOR[1]
    tracked = set(repo.git.ls_files().splitlines())
    assert {".gitignore", ".promptdeck/config.toml", ".promptdeck/.gitignore"} <= tracked
    assert not [name for name in tracked if "/dot-" in f"/{name}"]


def test_run_records_are_never_staged(demo: Path) -> None:
    run = demo / ".promptdeck/runs/20240101-000000-1-4-dev"
    run.mkdir(parents=True)
    (run / "system.md").write_text("prompt\n", encoding="utf-8")
    try:
        assert not git.Repo(demo).is_dirty(untracked_files=True)
    finally:
        (run / "system.md").unlink()
        run.rmdir()
        run.parent.rmdir()


def test_demo_tests_pass_and_leave_the_tree_clean(demo: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-q"],
        cwd=demo,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert "passed" in result.stdout
    assert not git.Repo(demo).is_dirty(untracked_files=True)


def test_prepare_demo_never_copies_over_existing_files(tmp_path: Path) -> None:
    keep = tmp_path / "notes.txt"
    keep.write_text("mine\n", encoding="utf-8")
    with pytest.raises(UsageError, match="not an empty folder"):
        prepare_demo(tmp_path)
    assert keep.read_text(encoding="utf-8") == "mine\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["notes.txt"]


def test_prepare_demo_defaults_to_a_new_temporary_folder() -> None:
    root = prepare_demo()
    try:
        assert root.name == "ledgerline"
        assert (root / ".git").is_dir() and (root / "_bmad-output").is_dir()
    finally:
        shutil.rmtree(root.parent)


@pytest.fixture
def private_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The temporary directory, pointed at a folder of this test's own."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path


def test_temporary_demo_is_deleted_on_exit(private_tmp: Path) -> None:
    with temporary_demo() as root:
        assert root.parent.parent == private_tmp and root.parent.name.startswith(TEMP_PREFIX)
        assert (root / ".git").is_dir() and (root / ".promptdeck" / "config.toml").is_file()
        (root / ".promptdeck" / "runs" / "r1").mkdir(parents=True)  # a run made in the demo
    assert list(private_tmp.iterdir()) == []


def test_temporary_demo_is_deleted_when_the_app_fails(private_tmp: Path) -> None:
    with pytest.raises(KeyboardInterrupt), temporary_demo():
        raise KeyboardInterrupt
    assert list(private_tmp.iterdir()) == []


def test_temporary_demo_kept_on_request(private_tmp: Path) -> None:
    with temporary_demo(keep=True) as root:
        pass
    assert (root / ".git").is_dir()
    assert [p.name for p in private_tmp.iterdir()] == [root.parent.name]


def test_bundled_dot_names() -> None:
    assert installed_name("dot-promptdeck") == ".promptdeck"
    assert installed_name("dot-gitignore") == ".gitignore"
    assert installed_name("dot-") == "dot-"
    assert installed_name("src") == "src"
    # Real dot-files in the package would be dropped by packaging globs.
    assert not [p for p in DEMO_SOURCE.rglob(".*")]
