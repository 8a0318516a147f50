"""The catalog: both sources side by side, project context, and the shared text checks."""

from __future__ import annotations

import builtins
import os
from pathlib import Path

import pytest
from builders import make_workspace
from promptdeck.core.plans.catalog import load_catalog, project_context_path
from promptdeck.core.project.textfiles import TextProblem, read_text_file, read_text_head
from promptdeck.core.stories.keys import natural_key

ARTIFACTS = "_bmad-output/implementation-artifacts"


# --------------------------------------------------------------------------- text checks


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b"", "empty"),
        (b" \n\t\n", "empty"),
        (b"text\x00more", "binary: NUL byte at offset 4"),
        (b"ok \xe9t\xe9", "not-utf8: invalid byte at offset 3"),
    ],
)
def test_read_text_file_problems(tmp_path: Path, content: bytes, reason: str) -> None:
    path = tmp_path / "f.md"
    path.write_bytes(content)
    result = read_text_file(path)
    assert isinstance(result, TextProblem)
    assert str(result) == reason


def test_read_text_file_missing_and_folder(tmp_path: Path) -> None:
    assert read_text_file(tmp_path / "nope.md") == TextProblem("missing")
    assert read_text_file(tmp_path) == TextProblem("unreadable", "is a folder")


def test_read_text_file_drops_a_bom_and_keeps_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "f.md"
    path.write_bytes("\ufeff# Titre é\r\nligne\n".encode())
    assert read_text_file(path) == "# Titre é\r\nligne\n"


def test_read_text_head_reads_only_the_head(tmp_path: Path) -> None:
    path = tmp_path / "f.md"
    path.write_bytes(b"# Head\n" + b"x" * 10_000 + b"\x00")
    assert read_text_head(path, 100) == ("# Head\n" + "x" * 93, False)
    assert read_text_head(tmp_path / "nope.md") == TextProblem("missing")


def test_read_text_head_does_not_call_a_cut_character_bad_utf8(tmp_path: Path) -> None:
    path = tmp_path / "f.md"
    path.write_bytes("ab€".encode())  # € is three bytes: the limit cuts it
    assert read_text_head(path, 3) == ("ab", False)
    assert read_text_head(path, 5) == ("ab€", True)
    path.write_bytes(b"ab\xff\xfe")
    assert read_text_head(path, 3) == TextProblem("not-utf8", "invalid byte at offset 2")


def test_read_text_head_reports_empty_only_for_whole_files(tmp_path: Path) -> None:
    path = tmp_path / "f.md"
    path.write_bytes(b"   ")
    assert read_text_head(path, 2) == ("  ", False)
    assert read_text_head(path, 10) == TextProblem("empty")


def test_natural_key_orders_numbers_by_value() -> None:
    keys = ["1-10", "a-1", "1-9", "10-1", "2-1", "1-2"]
    assert sorted(keys, key=natural_key) == ["1-2", "1-9", "1-10", "2-1", "10-1", "a-1"]


# --------------------------------------------------------------------------- project context


def test_project_context_is_the_first_configured_file_that_exists(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {
            "_bmad-output/project-context.md": "# BMAD context\n",
            "_bmad-output/planning-artifacts/sprint-project-context.md": "# Sprint context\n",
        },
    )
    assert project_context_path(ws) == "_bmad-output/planning-artifacts/sprint-project-context.md"
    (tmp_path / "_bmad-output/planning-artifacts/sprint-project-context.md").unlink()
    assert project_context_path(ws) == "_bmad-output/project-context.md"


def test_project_context_configured_list_and_none(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {"docs/context.md": "# ctx\n"},
        paths_project_context=("missing.md", "docs"),
    )
    assert project_context_path(ws) is None  # a folder is not a context file
    ws = make_workspace(tmp_path, {}, paths_project_context=("missing.md", "docs/context.md"))
    assert project_context_path(ws) == "docs/context.md"


# --------------------------------------------------------------------------- the catalog


def test_bmad_first_then_openspec_changes_alphabetically(tmp_path: Path) -> None:
    ws = make_workspace(
        tmp_path,
        {
            f"{ARTIFACTS}/sprint-status.yaml": (
                "development_status:\n  2-1-b: done\n  1-10-j: backlog\n  1-2-a: review\n"
            ),
            f"{ARTIFACTS}/3-9-draft.md": "no heading\n",
            "openspec/changes/zed/tasks.md": "## 2. Second\n## 1. First\n",
            "openspec/changes/alpha/tasks.md": "## 1. Only\n",
            "openspec/changes/broken/tasks.md": "",
        },
    )
    catalog = load_catalog(ws)
    assert [s.id for s in catalog.stories] == [
        "1-2",
        "1-10",
        "2-1",
        "alpha:1",
        "zed:2",
        "zed:1",
    ]
    assert [s.path for s in catalog.skipped] == [
        f"{ARTIFACTS}/3-9-draft.md",
        "openspec/changes/broken/tasks.md",
    ]
    assert catalog.find("1.2").id == "1-2"
    assert catalog.find("ZED:1").title == "First"


def test_empty_workspace_has_no_stories(tmp_path: Path) -> None:
    catalog = load_catalog(make_workspace(tmp_path, {}))
    assert catalog.stories == () and catalog.skipped == () and catalog.warnings == ()


def test_discovery_never_opens_files_that_cannot_be_stories(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    big_story = "# Story 1.1: Big\n\n## Tasks / Subtasks\n\n" + "- [ ] task\n" * 2_000
    ws = make_workspace(
        tmp_path,
        {
            f"{ARTIFACTS}/1-1-big.md": big_story,
            f"{ARTIFACTS}/notes.md": "# Story 1.1: no key in the name, never opened\n",
            f"{ARTIFACTS}/standup-000123.md": "# Story 1.1: no key in the name either\n",
            f"{ARTIFACTS}/notes-2-1.md": "# Notes\n" + "prose " * 5_000,
            f"{ARTIFACTS}/sprint-1-1-discovery-story.md": "# Discovery\n",
            f"{ARTIFACTS}/tech-spec-1-1.md": "# Tech-Spec\n",
            f"{ARTIFACTS}/agent-run-1-1.log": "log\n",
            f"{ARTIFACTS}/run-0001.json": "{}\n",
        },
    )
    opened: list[str] = []
    names: dict[int, str] = {}
    read_sizes: dict[str, int] = {}
    real_os_open, real_read, real_open = os.open, os.read, builtins.open

    def spy_os_open(path: str, flags: int, *args: int) -> int:
        fd = real_os_open(path, flags, *args)
        opened.append(os.path.basename(path))
        names[fd] = os.path.basename(path)
        return fd

    def spy_read(fd: int, size: int) -> bytes:
        data = real_read(fd, size)
        name = names.get(fd, "?")
        read_sizes[name] = read_sizes.get(name, 0) + len(data)
        return data

    def spy_open(file: object, *args: object, **kwargs: object) -> object:
        handle = real_open(file, *args, **kwargs)  # type: ignore[call-overload]
        opened.append(os.path.basename(str(file)))
        return handle

    monkeypatch.setattr(os, "open", spy_os_open)
    monkeypatch.setattr(os, "read", spy_read)
    monkeypatch.setattr(builtins, "open", spy_open)
    catalog = load_catalog(ws)
    monkeypatch.undo()

    assert [s.id for s in catalog.stories] == ["1-1"]
    assert len(catalog.stories[0].tasks) == 2_000
    # Only names holding a story key are opened.
    assert sorted(set(opened)) == ["1-1-big.md", "notes-2-1.md"]
    # notes-2-1.md is 30 KB, but its first heading is in the head, so only the head is read.
    assert (tmp_path / ARTIFACTS / "notes-2-1.md").stat().st_size > 30_000
    assert 0 < read_sizes["notes-2-1.md"] <= 4_097


def test_names_that_are_not_utf8_are_skipped_not_fatal(tmp_path: Path) -> None:
    import os

    from promptdeck.core.plans.catalog import load_catalog
    from promptdeck.core.project.workspace import open_workspace

    artifacts = tmp_path / "_bmad-output" / "implementation-artifacts"
    artifacts.mkdir(parents=True)
    (artifacts / "1-1-ok.md").write_text("# Story 1.1: Fine\n")
    Path(os.fsdecode(os.fsencode(artifacts) + b"/1-3-caf\xe9.md")).write_text("# Story 1.3: X\n")
    change = Path(os.fsdecode(os.fsencode(tmp_path / "openspec" / "changes") + b"/ch\xfe"))
    change.mkdir(parents=True)
    (change / "tasks.md").write_text("## 1. T\n- [ ] 1.1 x\n")
    catalog = load_catalog(open_workspace(tmp_path))
    assert [s.id for s in catalog.stories] == ["1-1"]
    assert sorted(s.reason for s in catalog.skipped) == [
        "not-utf8: the change folder's name",
        "not-utf8: the file name",
    ]
    assert all("\ufffd" in s.path for s in catalog.skipped)
