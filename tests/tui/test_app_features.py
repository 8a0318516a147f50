"""Themes remembered, export, help, clipboard copy, and core staying free of Textual."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from app_helpers import Toasts, make_app, run_async, wait_for, wait_for_preview
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.prompt.export import EXPORT_NAMES, export_files, write_export
from promptdeck.themes import THEMES
from promptdeck.tui.app import PromptdeckApp
from promptdeck.tui.screens.copy_menu import CopyMenuScreen
from promptdeck.tui.screens.export import ExportScreen
from promptdeck.tui.screens.help import HelpScreen
from promptdeck.tui.settings import load_settings, settings_path


@run_async
async def test_themes_are_registered_and_the_choice_is_remembered(demo_root: Path) -> None:
    app = PromptdeckApp(open_workspace(demo_root))
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for_preview(pilot)
        assert {theme.name for theme in THEMES} <= set(app.available_themes)
        assert app.theme == "promptdeck-dark"
        app.theme = "promptdeck-high-contrast"
        await wait_for(
            pilot,
            lambda: load_settings(settings_path()).settings.theme == "promptdeck-high-contrast",
            "the theme to be saved",
        )
    again = PromptdeckApp(open_workspace(demo_root))
    async with again.run_test(size=(120, 36)) as pilot:
        await wait_for_preview(pilot)
        assert again.theme == "promptdeck-high-contrast"


@run_async
async def test_malformed_settings_show_a_notice_and_the_app_still_starts(demo_root: Path) -> None:
    path = settings_path()
    path.parent.mkdir(parents=True)
    path.write_text("theme = = broken\n", encoding="utf-8")
    app = PromptdeckApp(open_workspace(demo_root))
    toasts = Toasts(app)
    async with app.run_test(size=(120, 36)) as pilot:
        await wait_for_preview(pilot)
        # The toast may have timed out on a slow machine by now; what it said is recorded, and
        # the session's notice board (w) keeps the notice whatever the toast's timeout.
        assert len(toasts.containing(str(path))) == 1
        assert [n.source for n in app.notices if str(path) in n.text] == ["settings"]
        app.theme = "promptdeck-light"
        await wait_for(pilot, lambda: app.theme == "promptdeck-light", "the theme to change")
        await app.workers.wait_for_complete()
        await pilot.pause()
    # The app still started, and a file it could not read is never overwritten by the next save.
    assert app.theme == "promptdeck-light"
    assert path.read_text(encoding="utf-8") == "theme = = broken\n"


@run_async
async def test_export_writes_the_five_files_exactly_and_never_overwrites(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        prompt = screen.prompt
        assert prompt is not None
        await pilot.press("e")
        await wait_for(pilot, lambda: isinstance(app.screen, ExportScreen), "the export screen")
        await pilot.press("enter")
        await wait_for(pilot, lambda: not isinstance(app.screen, ExportScreen), "the export")
    folders = sorted((demo_root / ".promptdeck" / "exports").iterdir())
    assert len(folders) == 1
    folder = folders[0]
    assert sorted(p.name for p in folder.iterdir()) == sorted(EXPORT_NAMES)
    assert (folder / "system.md").read_bytes() == prompt.system.encode("utf-8")
    assert (folder / "user.md").read_bytes() == prompt.user.encode("utf-8")
    assert (folder / "injection.xml").read_text(encoding="utf-8") == prompt.injection.text
    messages = json.loads((folder / "messages.json").read_text(encoding="utf-8"))
    assert messages == list(prompt.messages)
    layers = json.loads((folder / "layers.json").read_text(encoding="utf-8"))
    assert [layer["layerId"] for layer in layers] == [layer.layer_id for layer in prompt.layers]

    (folder / "user.md").write_text("edited by hand", encoding="utf-8")
    with pytest.raises(FileExistsError):
        write_export(folder, export_files(prompt), root=demo_root)
    assert (folder / "user.md").read_text(encoding="utf-8") == "edited by hand"


@run_async
async def test_help_lists_every_key_and_y_offers_the_system_prompt(
    demo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No system clipboard here, whatever the machine has: the OSC 52 fallback is used.
    from promptdeck.tui import clipboard

    monkeypatch.setattr(clipboard, "system_copy", lambda _text, _root=None: False)
    app = make_app(demo_root)
    copied: list[str] = []
    app.copy_to_clipboard = copied.append  # type: ignore[method-assign]
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        await pilot.press("y")
        await wait_for(pilot, lambda: isinstance(app.screen, CopyMenuScreen), "the copy menu")
        # path, layer text, user message, then the whole system prompt.
        await pilot.press("down", "down", "down", "enter")
        await wait_for(pilot, lambda: app.screen is screen, "the menu to close")
        assert screen.prompt is not None and copied == [screen.prompt.system]
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help")
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, HelpScreen), "closing help")


@run_async
async def test_keys_1_2_3_show_one_region_and_narrow_screens_fold_phases(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        phases = screen.query_one("#phases")
        stories = screen.query_one("#stories")
        assert screen.has_class("-narrow") and not phases.display
        await pilot.press("3")
        await pilot.pause()
        assert phases.display and not stories.display
        await pilot.press("3")
        await pilot.pause()
        assert stories.display and not phases.display
