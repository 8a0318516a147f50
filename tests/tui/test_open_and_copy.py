"""``o`` opens the selected story file, injected file or layer source in $EDITOR and the app
resumes on the same story; ``y`` offers what to copy. A missing or failing editor is one line."""

from __future__ import annotations

from pathlib import Path

import pyperclip
import pytest
from app_helpers import Toasts, make_app, run_async, wait_for, wait_for_preview
from promptdeck.tui.screens.copy_menu import CopyMenuScreen
from promptdeck.tui.widgets.files_table import FilesTable
from promptdeck.tui.widgets.layers_table import LayersTable

SIZES = [(80, 24), (120, 40), (200, 50)]


def _fake_editor(folder: Path, status: int = 0) -> tuple[Path, Path]:
    record = folder / "opened.txt"
    script = folder / "fake-editor"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" >> "{record}"\nexit {status}\n')
    script.chmod(0o755)
    return script, record


@pytest.mark.parametrize("size", SIZES)
@run_async
async def test_o_opens_the_story_file_a_file_and_a_layer_source(
    demo_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    script, record = _fake_editor(tmp_path)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", f"{script} --wait")
    app = make_app(demo_root, stable=True)
    shown = Toasts(app)
    async with app.run_test(size=size) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        await pilot.press("o")
        story_file = (
            demo_root / "_bmad-output/implementation-artifacts/1-1-parse-csv-statement-rows.md"
        )
        await wait_for(pilot, record.exists, "the editor")
        assert record.read_text().splitlines() == ["--wait", str(story_file)]
        assert screen.story is not None and screen.story.id == "1-1"

        files = screen.query_one(FilesTable)
        files.focus()
        files.move_cursor(row=0)
        await pilot.press("o")
        first = files.shown_files[0].path
        assert record.read_text().splitlines()[-1] == str(demo_root / first)

        layers = screen.query_one(LayersTable)
        layers.focus()
        layers.move_cursor(row=1)  # Layer-0B: the workspace rules file
        await pilot.press("o")
        assert record.read_text().splitlines()[-1] == str(demo_root / ".promptdeck/rules.md")
        layers.move_cursor(row=2)  # Layer-1: a bundled template, no project file
        await pilot.press("o")
        await pilot.pause()
        assert any("not a project file" in t for t in shown.messages)
        assert len(record.read_text().splitlines()) == 6


@run_async
async def test_a_missing_or_failing_editor_is_one_line_and_the_app_goes_on(
    demo_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    app = make_app(demo_root, stable=True)
    shown = Toasts(app)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        await pilot.press("o")
        await pilot.pause()
        assert any("set $EDITOR" in t for t in shown.messages)
        monkeypatch.setenv("EDITOR", "no-such-editor-anywhere")
        await pilot.press("o")
        await pilot.pause()
        assert any("not an executable" in t for t in shown.messages)
        script, _record = _fake_editor(tmp_path, status=3)
        monkeypatch.setenv("EDITOR", str(script))
        await pilot.press("o")
        await pilot.pause()
        assert any("exited with status 3" in t for t in shown.messages)
        assert all("\n" not in t for t in shown.messages)
        assert app.screen is screen and screen.story is not None and screen.story.id == "1-1"


@pytest.mark.parametrize("size", SIZES)
@run_async
async def test_y_offers_what_to_copy(
    demo_root: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    def no_clipboard(_text: str) -> None:
        raise pyperclip.PyperclipException("no clipboard here")

    monkeypatch.setattr(pyperclip, "copy", no_clipboard)
    app = make_app(demo_root, stable=True)
    async with app.run_test(size=size) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        prompt = screen.prompt
        assert prompt is not None
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, CopyMenuScreen), "the menu")
        menu = app.screen
        assert isinstance(menu, CopyMenuScreen)
        assert [choice for choice, _label in menu.choices] == ["path", "layer", "user", "system"]
        await pilot.press("down", "down", "enter")  # the user message
        await wait_for(pilot, lambda: app.screen is screen, "the menu to close")
        assert app.clipboard == prompt.user
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, CopyMenuScreen), "the menu")
        await pilot.press("enter")  # the story file's path
        await wait_for(pilot, lambda: app.screen is screen, "the menu to close")
        assert (
            app.clipboard == "_bmad-output/implementation-artifacts/1-1-parse-csv-statement-rows.md"
        )
