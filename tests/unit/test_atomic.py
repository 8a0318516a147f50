"""The one whole-file write (:func:`promptdeck.core.atomic.write_whole`) and its users."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from promptdeck.core.atomic import write_whole
from promptdeck.core.project.acknowledged_notes import acknowledge, acknowledgements_path


def test_text_is_written_whole_as_utf8(tmp_path: Path) -> None:
    target = tmp_path / "state.json"
    target.write_text("old", encoding="utf-8")
    write_whole(target, "nouveau é\n")
    assert target.read_bytes() == "nouveau é\n".encode()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["state.json"]


def test_a_symlink_at_the_target_is_replaced_never_written_through(tmp_path: Path) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("the user's file", encoding="utf-8")
    folder = tmp_path / "state"
    folder.mkdir()
    (folder / "record.json").symlink_to(outside)
    write_whole(folder / "record.json", b"{}\n")
    assert outside.read_text(encoding="utf-8") == "the user's file"
    assert not (folder / "record.json").is_symlink()
    assert (folder / "record.json").read_bytes() == b"{}\n"


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path: Path) -> None:
    target = tmp_path / "taken"
    target.mkdir()  # a folder cannot be replaced by a file
    (target / "inside").write_text("kept", encoding="utf-8")
    with pytest.raises(OSError) as caught:
        write_whole(target, "new")
    assert str(target) in str(caught.value)
    assert (target / "inside").read_text(encoding="utf-8") == "kept"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["taken"]


def test_the_mode_is_the_one_asked_for(tmp_path: Path) -> None:
    target = tmp_path / "private.json"
    old = os.umask(0o022)
    try:
        write_whole(target, "{}", mode=0o600)
    finally:
        os.umask(old)
    assert target.stat().st_mode & 0o777 == 0o600


def test_read_notes_are_not_written_through_a_planted_temporary_link(tmp_path: Path) -> None:
    """The acknowledgements once went through ``<name>.tmp``, followed if it was a link."""
    environ = {"XDG_STATE_HOME": str(tmp_path / "xdg")}
    project = tmp_path / "project"
    project.mkdir()
    path = acknowledgements_path(project, environ)
    path.parent.mkdir(parents=True)
    victim = tmp_path / "victim.txt"
    victim.write_text("the user's file", encoding="utf-8")
    path.with_name(path.name + ".tmp").symlink_to(victim)
    assert acknowledge(project, ["a note"], environ) is None
    assert victim.read_text(encoding="utf-8") == "the user's file"
    assert path.is_file() and not path.is_symlink()
