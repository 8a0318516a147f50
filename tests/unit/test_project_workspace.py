"""Finding the workspace root: a marker walking up, the git top level, or one clear error."""

from __future__ import annotations

from pathlib import Path

import pytest
from promptdeck.core.errors import UsageError, WorkspaceError
from promptdeck.core.project.workspace import find_root, open_workspace


def test_root_is_found_walking_up_from_a_marker(tmp_path: Path) -> None:
    (tmp_path / "_bmad-output").mkdir()
    deep = tmp_path / "src" / "pkg"
    deep.mkdir(parents=True)
    assert find_root(deep) == tmp_path.resolve()


def test_root_falls_back_to_git_top_level(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "a").mkdir()
    assert find_root(tmp_path / "a") == tmp_path.resolve()


def test_no_root_is_a_workspace_error(tmp_path: Path) -> None:
    lonely = tmp_path / "lonely"
    lonely.mkdir()
    # tmp_path lives under /tmp, which holds no marker; guard against a stray one.
    if any((p / m).exists() for p in lonely.parents for m in (".git", "_bmad-output", "openspec")):
        pytest.skip("a marker folder exists above the temporary directory")
    with pytest.raises(WorkspaceError, match="--root"):
        find_root(lonely)


def test_explicit_root_must_be_a_folder(tmp_path: Path) -> None:
    with pytest.raises(UsageError, match="not a folder"):
        open_workspace(tmp_path / "missing")
    assert open_workspace(tmp_path).root == tmp_path.resolve()
