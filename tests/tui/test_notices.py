"""Startup warnings: one summary toast, and a notices screen (key and palette) that keeps every
warning of the session."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from app_helpers import Toasts, make_app, run_async, wait_for, wait_for_preview
from promptdeck.tui.screens.notices import Notice, NoticesScreen, notices_text
from textual.widgets import Static


def _add_bad_entries(root: Path, count: int) -> None:
    status = root / "_bmad-output" / "implementation-artifacts" / "sprint-status.yaml"
    text = status.read_text(encoding="utf-8")
    extra = "".join(f"  not a story {n}: done\n" for n in range(count))
    status.write_text(
        text.replace("development_status:\n", "development_status:\n" + extra, 1),
        encoding="utf-8",
    )


@run_async
async def test_startup_warnings_make_one_toast_and_stay_readable(demo_root: Path) -> None:
    _add_bad_entries(demo_root, 14)
    app = make_app(demo_root)
    shown = Toasts(app)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        await pilot.pause()
        toasts = shown.containing("loading the stories")
        # The demo's own note (its malformed draft story, passed over) and the 14 added.
        assert len(toasts) == 1 and "15 new notes" in toasts[0]
        assert "· w to read" in toasts[0] and "\n" not in toasts[0]
        assert len(app.notices) == 15

        await pilot.press("w")
        await wait_for(pilot, lambda: isinstance(app.screen, NoticesScreen), "the notices")
        body = str(app.screen.query_one("#notices-body", Static).render())
        for n in range(14):
            assert f"'not a story {n}' is not a story key" in body
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen, "closing")

        # The palette offers the same screen.
        titles = [title for title, _help, _run in _palette_commands(app)]
        assert "Notices (w)" in titles


def _palette_commands(app):  # type: ignore[no-untyped-def]
    from promptdeck.tui.commands import PromptdeckCommands

    provider = PromptdeckCommands(app.screen)
    return list(provider._commands())


def test_notices_read_as_plain_text_grouped_by_source() -> None:
    text = notices_text(
        [
            Notice("stories", "[bold]not markup[/bold]"),
            Notice("stories", "second"),
            Notice("run 1-1 dev #1", "a run warning", "error"),
        ]
    )
    plain = text.plain
    assert "[bold]not markup[/bold]" in plain
    # The newest source first: the run above the startup notes.
    assert plain.index("run 1-1 dev #1") < plain.index("stories") < plain.index("second")
    assert "✗ a run warning" in plain


@run_async
async def test_notes_read_once_stay_quiet_in_this_project_until_they_change(
    demo_root: Path,
) -> None:
    _add_bad_entries(demo_root, 3)

    app = make_app(demo_root)
    shown = Toasts(app)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_preview(pilot, "1-1")
        assert shown.containing("loading the stories") == [
            # The demo's own note (its malformed draft story) and the 3 added.
            "loading the stories: 4 new notes · w to read"
        ]
        await pilot.press("w")
        await wait_for(pilot, lambda: isinstance(app.screen, NoticesScreen), "the notices")
        await app.workers.wait_for_complete()

    again = make_app(demo_root)
    shown_again = Toasts(again)
    async with again.run_test(size=(120, 40)) as pilot:
        await wait_for_preview(pilot, "1-1")
        await pilot.pause()
        assert shown_again.containing("loading the stories") == []
        assert len(again.notices) == 4  # still there to read

    status = demo_root / "_bmad-output" / "implementation-artifacts" / "sprint-status.yaml"
    text = status.read_text(encoding="utf-8")
    # One note changes (another entry named): only it is news.
    status.write_text(text.replace("not a story 2:", "not a story 9:"), encoding="utf-8")
    changed = make_app(demo_root)
    shown_changed = Toasts(changed)
    async with changed.run_test(size=(200, 50)) as pilot:
        await wait_for_preview(pilot, "1-1")
        await pilot.pause()
        toasts = shown_changed.containing("loading the stories")
        assert len(toasts) == 1 and "'not a story 9'" in toasts[0]


@run_async
async def test_no_toast_outstays_the_limit(
    demo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from promptdeck.tui.app import TOAST_LIMIT_SECONDS
    from textual.app import App

    timeouts: dict[str, float | None] = {}
    show = App.notify

    def recorded(self: App[object], message: str, **options: Any) -> None:
        # What the app hands Textual's own notify, the toast's real timeout.
        timeouts[message] = options.get("timeout")
        show(self, message, **options)

    monkeypatch.setattr(App, "notify", recorded)
    app = make_app(demo_root)
    async with app.run_test(size=(80, 24)) as pilot:
        await wait_for_preview(pilot, "1-1")
        app.notify("a failure", severity="error", timeout=60)
        app.notify("no timeout given", severity="error")
        await pilot.pause()
    assert timeouts["a failure"] == TOAST_LIMIT_SECONDS
    assert timeouts["no timeout given"] == TOAST_LIMIT_SECONDS
