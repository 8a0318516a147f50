"""The app at every size and its keys: every region reachable from 80x24 up, the footer's
most important keys first, the phases-only view saying whose phases, the preview following the
tree cursor, clicking a phase row, the user's keymap, help, and the searchable text view."""

from __future__ import annotations

from pathlib import Path

import pytest
from app_helpers import Toasts, make_app, run_async, wait_for, wait_for_preview
from promptdeck.core.project.workspace import open_workspace
from promptdeck.core.units import human_bytes
from promptdeck.tui.app import PromptdeckApp
from promptdeck.tui.screens.confirm_run import ConfirmRunScreen
from promptdeck.tui.screens.help import HelpScreen
from promptdeck.tui.screens.text_view import TextViewScreen
from promptdeck.tui.settings import LoadedSettings, UserSettings
from promptdeck.tui.widgets.composition_chart import CompositionChart
from promptdeck.tui.widgets.fitted_table import ellipsize_path
from promptdeck.tui.widgets.key_footer import FooterItem, KeyFooter, fit_items
from promptdeck.tui.widgets.meter_line import MeterLine
from promptdeck.tui.widgets.phase_panel import PhaseList
from promptdeck.tui.widgets.story_tree import StoryTree, short_id
from promptdeck.tui.widgets.text_viewer import TextViewer, find_matches
from promptdeck.tui.widgets.view_bar import ViewBar
from textual.binding import Binding
from textual.pilot import Pilot
from textual.widgets import Button, Static

SIZES = [(80, 24), (100, 30), (160, 45), (220, 50)]
# ``c Cancel`` joins them only while a phase runs (tests/tui/test_runs.py).
FIRST_KEYS = ["r Run", "n Next", "? Help", "q Quit"]


def _region_visible(screen, name: str) -> bool:  # type: ignore[no-untyped-def]
    region = screen.query_one(f"#{name}")
    return bool(region.display) and region.region.width > 0


@pytest.mark.parametrize("size", SIZES)
@run_async
async def test_every_region_is_reachable_and_the_first_keys_show(
    demo_root: Path, size: tuple[int, int]
) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=size) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        await pilot.pause()
        footer = screen.query_one(KeyFooter)
        labels = footer.labels()
        assert labels[: len(FIRST_KEYS)] == FIRST_KEYS
        assert sum(item.width for item in footer.shown) <= size[0]
        assert labels.count("^p Palette") <= 1
        bar = screen.query_one(ViewBar)
        narrow = size[0] < 130
        assert bool(bar.display) == narrow
        assert _region_visible(screen, "phases") != narrow
        for view in ("stories", "preview", "phases"):
            await pilot.press({"stories": "1", "preview": "2", "phases": "3"}[view])
            await pilot.pause()
            assert _region_visible(screen, view), f"{view} at {size}"
            assert bar.display and bar.state.shown == (view,)
            await pilot.press({"stories": "1", "preview": "2", "phases": "3"}[view])
            await pilot.pause()
        assert screen.view == "all"


@run_async
async def test_wide_terminals_give_the_room_to_the_regions(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=(200, 50)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        await pilot.pause()
        stories = screen.query_one("#stories").region.width
        phases = screen.query_one("#phases").region.width
        assert stories > 28 and phases > 38
        # Story titles of up to 35 characters (all but one of the demo's) show in full here
        # (guide, mark, id and title); at the old fixed 28 columns they were cut at ~20.
        assert screen.catalog is not None
        longest = max(
            len(f"├ ✓ {short_id(s)} {s.title}")
            for s in screen.catalog.stories
            if len(s.title) <= 35
        )
        assert longest <= screen.query_one(StoryTree).region.width
        files = screen.query_one("#files-table")
        shown, widths = files._layout()
        path_width, reason_width = widths[shown.index(0)], widths[shown.index(6)]
        for item in files.shown_files:
            # A path is shortened from the middle: its file name shows in full where it fits
            # the column, else both its start (the story key) and its end stay.
            name = item.path.rsplit("/", 1)[-1]
            shown_path = ellipsize_path(item.path, path_width)
            if len(name) <= path_width:
                assert shown_path.endswith(name)
            else:
                assert shown_path.startswith(name[:8]) and shown_path.endswith(name[-8:])
            # The wider tree leaves the file and why columns less room than the old fixed
            # 28 columns did, but the why word that starts the column (own key, heading, …)
            # always shows whole here.
            assert reason_width >= 12 and len(f"{item.why}:") <= reason_width


@run_async
async def test_the_phases_view_says_whose_phases_they_are(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        await pilot.press("3")
        await pilot.pause()
        title = str(screen.query_one("#phases-title", Static).render())
        assert "1-1" in title and screen.phase in title and screen.story.title in title


@run_async
async def test_the_view_bar_names_the_hidden_phases_and_a_click_shows_them(
    demo_root: Path,
) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=(80, 24)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        await pilot.pause()
        bar = screen.query_one(ViewBar)
        text = str(bar.render())
        assert "3 Phases" in text and "(hidden)" in text
        x = text.index("3 Phases") + 3
        await pilot.click(ViewBar, offset=(x, 0))
        await wait_for(pilot, lambda: screen.view == "phases", "the phases view")


@pytest.mark.parametrize("size", [(80, 24), (100, 30)])
@run_async
async def test_the_confirmation_fits_with_both_buttons_whole(
    demo_root: Path, size: tuple[int, int]
) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=size) as pilot:
        await wait_for_preview(pilot, "1-1")
        await pilot.press("r")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmRunScreen), "the confirmation")
        await pilot.pause()
        confirm = app.screen
        for button in confirm.query(Button):
            region = button.region
            assert region.width >= len(str(button.label))
            assert 0 <= region.y < size[1] and region.right <= size[0]
        assert str(confirm.query_one("#confirm-title", Static).render()).startswith("Run ")
        await pilot.press("escape")


def test_footer_entries_are_left_out_whole_in_priority_order() -> None:
    def item(label: str, rank: int) -> FooterItem:
        key, _, words = label.partition(" ")
        return FooterItem((Binding(key, "a", words),), (key,), words, rank)

    items = [item("r Run", 0), item("n Next", 1), item("h History-of-runs", 2), item("q Quit", 3)]
    kept = fit_items(items, 21)
    assert [i.description for i in kept] == ["Run", "Next", "Quit"]
    assert sum(i.width for i in kept) <= 21


@run_async
async def test_the_preview_follows_the_tree_cursor_without_enter(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        tree = screen.query_one(StoryTree)
        tree.focus()
        await pilot.pause()
        for _ in range(3):
            await pilot.press("down")
        node = tree.cursor_node
        assert node is not None and node.data is not None
        target = node.data.id
        assert target != "1-1"
        screen = await wait_for_preview(pilot, target)
        assert screen.story is not None and screen.story.id == target


@run_async
async def test_clicking_a_phase_row_selects_it(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        rows = screen.query_one(PhaseList).rows
        index = next(i for i, row in enumerate(rows) if row.name == "review")
        await pilot.click(PhaseList, offset=(4, index))
        await wait_for(pilot, lambda: screen.phase == "review", "review selected")
        await wait_for_preview(pilot, "1-1")
        assert screen.prompt is not None and screen.prompt.request.phase == "review"


@run_async
async def test_a_user_keymap_rebinds_keys_and_help_and_footer_show_them(demo_root: Path) -> None:
    settings = LoadedSettings(
        UserSettings(keymap={"main.run_phase": "f5", "main.nothing": "f6"}),
        demo_root.parent / "xdg" / "settings.toml",
    )
    app = PromptdeckApp(open_workspace(demo_root), settings=settings, workspace_label="ledgerline")
    toasts = Toasts(app)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        await pilot.pause()
        assert "f5 Run" in screen.query_one(KeyFooter).labels()
        await pilot.press("r")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmRunScreen)
        await pilot.press("f5")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmRunScreen), "f5 runs")
        await pilot.press("escape")
        await wait_for(pilot, lambda: app.screen is screen, "back")
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "help")
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        keys = {does: key for key, does in help_screen.key_rows}
        assert keys["Run the selected phase (asks first)"] == "f5"
        assert (
            keys["Filter the story tree (Enter: back to the tree; Escape clears, the cursor stays)"]
            == "/"
        )
        legend = str(app.screen.query_one("#help-legend", Static).render())
        for mark in ("✓ done", "◐ in-progress", "○ ready-for-dev", "◎ review", "· backlog"):
            assert mark in legend
        assert toasts.containing("main.nothing")


def test_the_tree_tooltip_is_the_status_legend() -> None:
    tree = StoryTree()
    assert "✓ done" in str(tree.tooltip) and "· backlog" in str(tree.tooltip)


def test_find_matches_is_smart_case() -> None:
    lines = ["Alpha beta", "alpha ALPHA", "none"]
    assert find_matches(lines, "alpha") == [(0, 0), (1, 0), (1, 6)]
    assert find_matches(lines, "ALPHA") == [(1, 6)]
    assert find_matches(lines, "") == []


@run_async
async def test_the_text_view_searches_jumps_and_numbers_a_large_file(demo_root: Path) -> None:
    lines = [f"line {n} of the story" for n in range(1, 4001)]
    lines[3210] = "the NEEDLE is here"
    lines[100] = "a needle early"
    text = "\n".join(lines)
    assert len(text.encode()) > 80_000
    app = make_app(demo_root)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_for_preview(pilot, "1-1")
        app.push_screen(TextViewScreen("big.md", text))
        await wait_for(
            pilot,
            lambda: isinstance(app.screen, TextViewScreen) and bool(app.screen.query(TextViewer)),
            "the view",
        )
        viewer = app.screen.query_one(TextViewer)
        assert viewer.show_line_numbers
        await pilot.press("G")
        assert viewer.cursor_location[0] == 3999
        await pilot.press("g")
        assert viewer.cursor_location == (0, 0)
        await pilot.press("slash")
        await pilot.press(*"needle", "enter")
        await pilot.pause()
        assert viewer.selection.start == (100, 2)
        status = str(app.screen.query_one("#text-view-status", Static).render())
        assert "match 1/2" in status
        await pilot.press("n")
        assert viewer.selection.start == (3210, 4)
        await pilot.press("N")
        assert viewer.selection.start == (100, 2)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, TextViewScreen), "closing")


@pytest.mark.parametrize(
    ("size", "labels"),
    # At 80 columns the meter keeps its bars with short labels and bare limits (on a terminal
    # tall enough to keep its two rows: a short one folds them, test_daily_driver_fit.py).
    [((80, 30), ("inj ", "sys ")), ((160, 45), ("injection ", "system "))],
)
@run_async
async def test_one_labelled_bar_per_measure_as_help_describes(
    demo_root: Path, size: tuple[int, int], labels: tuple[str, str]
) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=size) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        await pilot.pause()
        meter = screen.query_one(MeterLine)
        reading = meter.reading
        assert reading is not None
        injection_line, system_line = str(meter.render()).splitlines()
        assert injection_line.startswith(labels[0] + human_bytes(reading.injection_bytes))
        assert "warn" in injection_line and "error" in injection_line
        assert "argv" not in injection_line
        assert system_line.startswith(labels[1] + human_bytes(reading.system_bytes))
        assert "argv" in system_line and "warn" not in system_line
        # Both bars are drawn, on one width, at either size.
        bars = [
            line.count("░") + line.count("█") + line.count("│")
            for line in (injection_line, system_line)
        ]
        assert bars[0] >= 4 and bars[0] == bars[1]
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "help")
        words = " ".join(str(s.render()) for s in app.screen.query(Static))
        assert "'injection'" in words and "'system'" in words and "argv line" in words


@run_async
async def test_b_shows_the_composition_and_again_switches_tokens_and_bytes(
    demo_root: Path,
) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=(100, 30)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        await pilot.press("b")
        await pilot.pause()
        tabs = screen.query_one("#preview-tabs")
        assert tabs.active == "tab-composition"  # type: ignore[attr-defined]
        chart = screen.query_one(CompositionChart)
        assert chart.prompt is screen.prompt and chart.measure == "tokens"
        text = str(chart.render())
        assert "tok" in text and "≈argv" in text
        await pilot.press("b")
        await pilot.pause()
        assert chart.measure == "bytes"
        text = str(chart.render())
        assert "KiB" in text and "argv" in text and "≈" not in text.splitlines()[3]


@run_async
async def test_a_toggle_keeps_the_footer_keys_it_does_not_change(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        await pilot.pause()
        footer = screen.query_one(KeyFooter)
        entries = footer.entries
        labels = footer.labels()
        await pilot.press("p")
        await wait_for(
            pilot,
            lambda: (
                screen.prompt is not None
                and screen.prompt_counted
                and not screen.prompt.request.selection.project_context
            ),
            "the preview without project context",
        )
        await pilot.pause()
        # The keys were refreshed after the action, and read the same: the footer kept what
        # it draws (one widget, no key widgets under it).
        assert footer.labels() == labels
        assert footer.entries is entries
        assert not footer.children


async def _footer_and_help_column(app: PromptdeckApp, pilot: Pilot[None]) -> tuple[KeyFooter, int]:
    """The footer once the first preview is shown, and the column its ``? Help`` starts at."""
    await wait_for_preview(pilot, "1-1")
    await pilot.pause()
    footer = app.screen.query_one(KeyFooter)
    return footer, str(footer.render()).index("? Help")


@run_async
async def test_clicking_a_footer_key_presses_it(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        footer, column = await _footer_and_help_column(app, pilot)
        # The gap before the entry is no key; the entry's last letter is.
        assert footer.entry_at(column - 1) is None
        await pilot.click(KeyFooter, offset=(column + len("? Help") - 1, 0))
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), "the help screen")


@run_async
async def test_the_footer_lights_and_explains_the_key_under_the_pointer(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        footer, column = await _footer_and_help_column(app, pilot)
        plain = footer.render()
        await pilot.hover(KeyFooter, offset=(column, 0))
        index = footer.entry_at(column)
        assert index is not None and footer.entries[index].action == "help"
        assert footer.tooltip == footer.entries[index].tooltip
        lit = footer.render()
        # The entry under the pointer gets its own background; the rest of the line reads the same.
        assert str(lit) == str(plain)
        assert (
            lit.get_style_at_offset(app.console, column).bgcolor
            != plain.get_style_at_offset(app.console, column).bgcolor
        )
        await pilot.hover(KeyFooter, offset=(column - 1, 0))
        assert footer.tooltip is None
