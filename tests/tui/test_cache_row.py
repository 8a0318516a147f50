"""The cacheable-prefix row under the meters, and the delivery key."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import make_app, run_async, wait_for, wait_for_preview
from promptdeck.core.cost.prefix import DEFAULT_SEQUENCE, measure_cache
from promptdeck.core.project.workspace import open_workspace
from promptdeck.tui.widgets import preview_pane
from promptdeck.tui.widgets.preview_pane import PreviewPane


def _installed(version: str | None) -> object:
    return lambda workspace, client: version


@run_async
async def test_the_cache_row_shows_what_consecutive_phases_share(
    demo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(preview_pane, "installed_client_version", _installed(None))
    app = make_app(demo_root)
    async with app.run_test(size=(200, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        pane = screen.query_one(PreviewPane)
        await wait_for(pilot, lambda: pane.cache_line.startswith("cache · "), "the cache row")
        meter = measure_cache(open_workspace(demo_root), "1-1", phases=DEFAULT_SEQUENCE)
        first = meter.pairs[0]
        # The demo runs the replay simulation: the row prices a Claude Code run, whose model
        # is unknown here (no settings name one, and no client says its version).
        assert pane.cache_line.startswith("cache · layered · sequence unknown")
        assert " · shared prefix kickoff→dev " in pane.cache_line
        assert f"{first.shared_prefix_bytes:,}/{first.system_bytes:,} B" in pane.cache_line
        assert f"parts at {first.parts_at}" in pane.cache_line
        assert "(model unknown, estimated, first requests only)" in pane.cache_line


@run_async
async def test_the_cache_row_prices_the_model_the_client_will_request(
    demo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    asked: list[str] = []

    def installed(workspace: object, client: str) -> str:
        asked.append(client)
        return "2.1.197"

    monkeypatch.setattr(preview_pane, "installed_client_version", installed)
    app = make_app(demo_root)
    async with app.run_test(size=(200, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        pane = screen.query_one(PreviewPane)
        await wait_for(pilot, lambda: pane.cache_line.startswith("cache · "), "the cache row")
        # The replay simulation is priced as a Claude Code run: the default of the installed
        # version, and the tooltip says where the model came from.
        assert "(claude-opus-4-8, estimated, first requests only)" in pane.cache_line
        tooltip = str(screen.query_one("#cache-line").tooltip)
        assert "model claude-opus-4-8: from " in tooltip
        assert "2.1.197" in tooltip.split("model claude-opus-4-8: from ", 1)[1]
        await pilot.press("L")
        await wait_for(pilot, lambda: "cache-aware" in pane.cache_line, "the row follows")
        assert asked == ["claude"]  # resolved once for the session, not per measure


@run_async
async def test_the_delivery_key_switches_what_the_preview_sends(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=(200, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        layered = screen.prompt
        assert layered is not None and "## Contract" in layered.system
        await pilot.press("L")
        await wait_for(
            pilot,
            lambda: screen.prompt is not None and screen.prompt.request.delivery == "cache-aware",
            "the cache-aware preview",
        )
        aware = screen.prompt
        assert aware is not None and aware.system != layered.system
        assert aware.user.startswith(aware.layers[3].content)
        pane = screen.query_one(PreviewPane)
        await wait_for(pilot, lambda: "cache-aware" in pane.cache_line, "the row follows")
        request = screen.current_request()
        assert request is not None and request.delivery == "cache-aware"
