"""The user's editor: $VISUAL before $EDITOR, words split like a shell, never run through one."""

from __future__ import annotations

from pathlib import Path

from promptdeck.core.project.editor import editor_argv


def _script(folder: Path, name: str) -> Path:
    script = folder / name
    script.write_text("#!/bin/sh\nexit 0\n", encoding="utf-8")
    script.chmod(0o755)
    return script


def test_visual_wins_and_flags_are_kept(tmp_path: Path) -> None:
    _script(tmp_path, "ed-a")
    _script(tmp_path, "ed-b")
    env = {"PATH": str(tmp_path), "VISUAL": "ed-a --wait", "EDITOR": "ed-b"}
    assert editor_argv(Path("/p/story.md"), env) == [
        str(tmp_path / "ed-a"),
        "--wait",
        "/p/story.md",
    ]
    del env["VISUAL"]
    assert editor_argv(Path("/p/x.md"), env) == [str(tmp_path / "ed-b"), "/p/x.md"]


def test_unset_missing_and_unreadable_editors_are_one_line(tmp_path: Path) -> None:
    assert "set $EDITOR" in str(editor_argv(Path("x"), {"PATH": str(tmp_path)}))
    missing = editor_argv(Path("x"), {"PATH": str(tmp_path), "EDITOR": "no-such-editor"})
    assert isinstance(missing, str) and "not an executable" in missing
    quote = editor_argv(Path("x"), {"PATH": str(tmp_path), "EDITOR": "vim 'open"})
    assert isinstance(quote, str) and "cannot be read" in quote


def test_shell_syntax_is_not_run(tmp_path: Path) -> None:
    _script(tmp_path, "ed")
    argv = editor_argv(Path("f"), {"PATH": str(tmp_path), "EDITOR": "ed ; rm -rf /"})
    assert argv == [str(tmp_path / "ed"), ";", "rm", "-rf", "/", "f"]
