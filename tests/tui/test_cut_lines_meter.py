"""The clients' cut lines drawn under the meter: each line a gauge with its mark where the
line falls on what it measures, over ones first; the tooltip names every line; the row holds
at 80, 120 and 200 columns (what does not fit is counted and left to the tooltip)."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import make_app, run_async, wait_for, wait_for_preview
from promptdeck.tui.widgets.cut_lines_meter import CutLinesMeter
from promptdeck.tui.widgets.meter_line import MeterLine

SIZES = [(80, 30), (120, 40), (200, 50)]


def _agents_and_claude(root: Path) -> None:
    # A 40 KiB AGENTS.md: past Codex's 32 KiB budget, its last heading lost.
    body = "# Rules\n\n" + "Keep it small.\n" * 2_700 + "## Release checklist\n\nShip it.\n"
    (root / "AGENTS.md").write_text(body, encoding="utf-8")
    (root / "CLAUDE.md").write_text("# Claude\n\nBe brief.\n", encoding="utf-8")


@pytest.mark.parametrize("size", SIZES)
@run_async
async def test_each_cut_line_is_drawn_where_it_falls(
    demo_root: Path, size: tuple[int, int]
) -> None:
    _agents_and_claude(demo_root)
    app = make_app(demo_root, stable=True)
    async with app.run_test(size=size) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        row = screen.query_one(CutLinesMeter)
        await wait_for(pilot, lambda: len(row.lines) >= 3, "the cut lines")
        await pilot.pause()
        names = [line.name for line in row.lines]
        assert names[0] == "AGENTS.md budget" and row.lines[0].over
        assert "one-argument limit" not in names  # drawn on the meter's system bar
        text = row.render()
        plain = text.plain
        assert row.display and row.region.height == 1
        assert text.cell_len <= row.size.width - 2
        # The over line comes first, with its heavy mark where 32 KiB falls on its bar.
        assert "AGENTS" in plain and "┃" in plain
        agents = row.lines[0]
        assert agents.size is not None
        bar_start = plain.index("AGENTS") + plain[plain.index("AGENTS") :].index(" ") + 1
        cells = 10 if "Codex AGENTS.md" in plain else 6
        bar = plain[bar_start : bar_start + cells]
        scale = max(agents.limit, agents.size) * 1.1
        assert bar.index("┃") == min(round(agents.limit / scale * cells), cells - 1)
        shown = sum(1 for name in ("AGENTS", "CLAUDE", "spec") if name in plain)
        if shown < len(row.lines):
            assert f"+{len(row.lines) - shown}" in plain
        if size[0] >= 200:
            assert shown == len(row.lines) and "39.6 KiB/32.0 KiB" in plain
        # The legend names every line, and the meter's tooltip the argv line.
        tooltip = str(row.tooltip)
        assert "codex AGENTS.md budget" in tooltip and "headings lost: ## Release checklist" in (
            tooltip
        )
        assert "claude large CLAUDE.md warning" in tooltip and "bmad story spec target" in tooltip
        assert "one-argument limit" in str(screen.query_one(MeterLine).tooltip)


@run_async
async def test_the_row_is_hidden_until_there_is_a_line(demo_root: Path) -> None:
    app = make_app(demo_root, stable=True)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        row = screen.query_one(CutLinesMeter)
        await wait_for(pilot, lambda: bool(row.lines), "the cut lines")
        # The demo's story file has BMAD's spec target; nothing else of the clients' applies.
        assert [line.client for line in row.lines] == ["bmad"]
        row.lines = ()
        await pilot.pause()
        assert not row.display


@run_async
async def test_on_a_short_terminal_the_gauges_fold_and_are_named_on_the_meter(
    demo_root: Path,
) -> None:
    _agents_and_claude(demo_root)
    app = make_app(demo_root, stable=True)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        row = screen.query_one(CutLinesMeter)
        await wait_for(pilot, lambda: len(row.lines) >= 3, "the cut lines")
        await pilot.pause()
        assert not row.display
        tooltip = str(screen.query_one(MeterLine).tooltip)
        assert all(line.name in tooltip for line in row.lines)
