"""One listing of the artifacts folder per command."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from promptdeck.core.injection.artifacts import names_holding_keys
from promptdeck.core.project.listing import folder_names, one_scan
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import PromptRequest
from promptdeck.core.stories.keys import key_pattern


def _count_scans(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    scanned: list[str] = []
    real = os.listdir

    def spy(path: str) -> list[str]:
        scanned.append(os.path.basename(os.fspath(path)))
        return real(path)

    monkeypatch.setattr(os, "listdir", spy)
    return scanned


def test_a_command_lists_the_artifacts_folder_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, copy_demo: Callable[[Path], Path]
) -> None:
    workspace = open_workspace(copy_demo(tmp_path / "demo"))
    # A folder changed just now: the injection's own cache of older listings stays out.
    os.utime(workspace.root / workspace.config.paths_artifacts)
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


_NAME = st.lists(
    st.one_of(
        st.sampled_from(["1", "2", "12", "a", "A", "-", ".", "_", " ", "story", "1-2", "A.1"]),
        st.sampled_from(["İ", "ı", "ſ", "\u212a", "é", "x", ".md", "10", "01", "I-1"]),
        st.characters(blacklist_characters="\0/", blacklist_categories=("Cs",)),
    ),
    min_size=1,
    max_size=12,
).map("".join)


@settings(max_examples=300, deadline=None)
@example(names=["İ-1"], keys=["i-1"])  # the dotted capital I folds to two characters
@given(
    names=st.lists(_NAME, max_size=30, unique=True),
    keys=st.lists(
        st.sampled_from(["1-2", "1.2", "a-1", "A_1", "12-1", "1-10", "k-1", "i-1", "s-1"]),
        min_size=1,
    ),
)
def test_one_pass_over_all_names_finds_what_a_search_per_name_finds(
    names: list[str], keys: list[str]
) -> None:
    expected: dict[str, str] = {}
    for name in names:
        for key in keys:
            if key_pattern(key).search(name) is not None:
                expected[name] = key
                break
    assert names_holding_keys(names, keys) == expected
