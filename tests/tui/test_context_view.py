"""Before the run, the Composition tab shows the prompt's place in the model's context window
(the client's overhead said to be an estimate), and the notes warn when the client's own rules
file is also the workspace rules file."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import make_app, run_async, wait_for, wait_for_preview
from promptdeck.core.tokens.context_window import ESTIMATED_CLIENT_OVERHEAD
from promptdeck.tui.widgets.composition_chart import CompositionChart
from textual.widgets import Static

SIZES = [(80, 24), (120, 40), (200, 50)]


@pytest.mark.parametrize("size", SIZES)
@run_async
async def test_the_composition_tab_shows_the_context_window(
    demo_root: Path, size: tuple[int, int]
) -> None:
    app = make_app(demo_root, stable=True, agent="claude")
    async with app.run_test(size=size) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        await pilot.press("b")
        chart = screen.query_one(CompositionChart)
        await wait_for(pilot, lambda: chart.context is not None, "the context window")
        prompt = screen.prompt
        assert prompt is not None and chart.context is not None
        tokens = (prompt.system_meter.tokens or 0) + (prompt.user_meter.tokens or 0)
        assert chart.context.prompt_tokens == tokens
        lines = chart.lines(70)
        assert lines[0].startswith("context window 200,000 tok")
        overhead = ESTIMATED_CLIENT_OVERHEAD["claude"]
        assert f"client overhead {overhead:,} (estimate)" in lines[2]


@run_async
async def test_claude_md_as_workspace_rules_is_read_twice(demo_root: Path) -> None:
    (demo_root / ".promptdeck" / "rules.md").unlink()
    (demo_root / "CLAUDE.md").write_text("# Rules\n\nKeep it small.\n", encoding="utf-8")
    app = make_app(demo_root, stable=True, agent="claude")
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        notes = str(screen.query_one("#preview-notes", Static).render())
        assert "CLAUDE.md is the workspace rules file" in notes and "twice" in notes
    replay = make_app(demo_root, stable=True, agent="replay")
    async with replay.run_test(size=(120, 40)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        assert "twice" not in str(screen.query_one("#preview-notes", Static).render())
