"""One listing of the artifacts folder per command."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from promptdeck.core.demo import prepare_demo
from promptdeck.core.listing import folder_names, one_scan
from promptdeck.core.prompt import PromptRequest, compose_prompt
from promptdeck.core.workspace import open_workspace


def _count_scans(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    scanned: list[str] = []
    real = os.listdir

    def spy(path: str) -> list[str]:
        scanned.append(os.path.basename(os.fspath(path)))
        return real(path)

    monkeypatch.setattr(os, "listdir", spy)
    return scanned


def test_a_command_lists_the_artifacts_folder_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    workspace = open_workspace(prepare_demo(tmp_path / "demo"))
    request = PromptRequest("1-2")
    alone = compose_prompt(workspace, None, request)

    scanned = _count_scans(monkeypatch)
    with one_scan():
        shared = compose_prompt(workspace, None, request)
    assert scanned.count("implementation-artifacts") == 1
    assert shared.injection.to_dict() == alone.injection.to_dict()
    assert shared.system == alone.system

    # Outside a command's scope (the app), every build lists afresh.
    scanned.clear()
    compose_prompt(workspace, None, request)
    assert scanned.count("implementation-artifacts") == 2


def test_a_folder_changed_inside_the_scope_is_listed_again(tmp_path: Path) -> None:
    (tmp_path / "b.md").write_text("b")
    with one_scan():
        assert folder_names(tmp_path) == ["b.md"]
        (tmp_path / "A.md").write_text("a")
        os.utime(tmp_path, ns=(0, 10**9))  # a distinct mtime even on a coarse clock
        again = folder_names(tmp_path)
        assert again is not None and sorted(again) == ["A.md", "b.md"]
    assert folder_names(tmp_path / "missing") is None
