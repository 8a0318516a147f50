"""The main screen on the demo workspace: stories, the eight-layer preview, inclusion toggles,
the meters and the texts behind them."""

from __future__ import annotations

from pathlib import Path

from app_helpers import make_app, run_async, wait_for, wait_for_preview
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.project.workspace import open_workspace
from promptdeck.tui.format import delta_text
from promptdeck.tui.screens.text_view import TextViewScreen
from promptdeck.tui.widgets.files_table import FilesTable
from promptdeck.tui.widgets.layers_table import LayersTable
from promptdeck.tui.widgets.meter_line import MeterLine
from promptdeck.tui.widgets.story_tree import StoryTree
from promptdeck.tui.widgets.workspace_header import WorkspaceHeader
from textual.widgets import Input

LAYER_IDS = [f"Layer-{n}" for n in ("0A", "0B", "1", "2", "3", "4", "5", "6")]


@run_async
async def test_first_story_is_selected_and_its_layers_and_files_show(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        layers = screen.query_one(LayersTable)
        assert [layer.layer_id for layer in layers.shown_layers] == LAYER_IDS
        assert layers.row_count == 8
        files = screen.query_one(FilesTable)
        story_file = "_bmad-output/implementation-artifacts/1-1-parse-csv-statement-rows.md"
        shown = {f.path: f for f in files.shown_files}
        assert shown[story_file].status == "included"
        assert files.row_count == len(files.shown_files) > 1
        assert all(layer.tokens is not None for layer in layers.shown_layers)
        header = screen.query_one(WorkspaceHeader).info
        assert header is not None and header.workspace == "ledgerline"
        assert header.instructions_sha256 and header.rules_status == "ok"


@run_async
async def test_enter_on_another_story_previews_it(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        tree = screen.query_one(StoryTree)
        node = tree.node_for("1-4")
        assert node is not None
        tree.focus()
        await pilot.pause()
        tree.move_cursor(node)
        await wait_for(pilot, lambda: tree.cursor_node is node, "the cursor on 1-4")
        await pilot.press("enter")
        screen = await wait_for_preview(pilot, "1-4")
        paths = [f.path for f in screen.query_one(FilesTable).shown_files]
        assert "_bmad-output/implementation-artifacts/1-4-category-rules.md" in paths
        assert screen.query_one(LayersTable).row_count == 8


@run_async
async def test_discovery_toggle_adds_the_file_and_totals_grow_by_its_bytes(
    demo_root: Path,
) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        before = screen.prompt
        assert before is not None
        discovery = [f for f in before.injection.files if f.category == "discovery"]
        assert discovery and all(f.status == "excluded" for f in discovery)

        await pilot.press("d")
        await wait_for(
            pilot,
            lambda: screen.prompt is not None and screen.prompt.request.selection.discovery,
            "the discovery toggle",
        )
        screen = await wait_for_preview(pilot, "1-1")
        after = screen.prompt
        assert after is not None
        joined = {f.path: f for f in after.injection.files}
        for item in discovery:
            assert joined[item.path].status == "included"
        file_bytes = sum(item.bytes for item in discovery)
        grown = after.system_meter.bytes - before.system_meter.bytes
        # The files' own bytes, plus the envelope row that wraps each one (tags, path).
        assert file_bytes <= grown < file_bytes + 200 * len(discovery)
        assert after.injection.total.bytes - before.injection.total.bytes == grown
        reading = screen.query_one(MeterLine).reading
        assert reading is not None
        assert reading.system_bytes == after.system_meter.bytes
        token_delta = after.system_meter.tokens - before.system_meter.tokens
        assert reading.delta == delta_text(grown, token_delta)
        assert reading.delta.startswith("+")


@run_async
async def test_layer_and_file_open_their_full_text(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        layers = screen.query_one(LayersTable)
        layers.focus()
        layers.move_cursor(row=5)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, TextViewScreen), "the layer view")
        viewer = app.screen.query_one("#text-view-body")
        assert viewer.text == layers.shown_layers[5].content  # type: ignore[attr-defined]
        assert viewer.read_only  # type: ignore[attr-defined]
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, TextViewScreen), "closing")

        files = screen.query_one(FilesTable)
        files.focus()
        files.move_cursor(row=1)
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, TextViewScreen), "the file view")
        item = files.shown_files[1]
        text = (demo_root / item.path).read_text(encoding="utf-8")
        assert app.screen.query_one("#text-view-body").text == text  # type: ignore[attr-defined]


@run_async
async def test_slash_filters_the_tree_in_one_pass(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        await pilot.press("slash")
        box = screen.query_one("#story-filter", Input)
        assert box.display and box.has_focus
        await pilot.press(*"budget")
        tree = screen.query_one(StoryTree)
        await wait_for(pilot, lambda: tree.node_for("1-1") is None, "the filtered tree")
        assert tree.node_for("2-3") is not None
        await pilot.press("escape")
        await wait_for(pilot, lambda: tree.node_for("1-1") is not None, "the full tree again")


@run_async
async def test_palette_lists_every_key_with_its_tooltip(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        bindings = [b for b in screen.BINDINGS if hasattr(b, "id")]
        keys = {b.key for b in bindings}  # type: ignore[union-attr]
        for key in "pdtaxmrncyeh":
            assert key in keys
        assert {"left_square_bracket", "right_square_bracket", "question_mark", "slash"} <= keys
        assert all(b.id and b.tooltip for b in bindings)  # type: ignore[union-attr]
        from promptdeck.tui.commands import PromptdeckCommands

        provider = PromptdeckCommands(screen)
        titles = [title for title, _help, _run in provider._commands()]
        for binding in bindings:
            assert any(title.startswith(binding.description) for title in titles)  # type: ignore[union-attr]
        assert "Theme: high contrast" in titles
        catalog = load_catalog(open_workspace(demo_root))
        assert any(title.startswith(f"Story {catalog.stories[0].id}:") for title in titles)


@run_async
async def test_mode_and_phase_keys_recompose(demo_root: Path) -> None:
    app = make_app(demo_root)
    async with app.run_test(size=(160, 45)) as pilot:
        screen = await wait_for_preview(pilot, "1-1")
        first_phase = screen.phase
        await pilot.press("right_square_bracket")
        screen = await wait_for_preview(pilot, "1-1")
        assert screen.phase != first_phase
        assert screen.prompt is not None and screen.prompt.request.phase == screen.phase
        mode = screen.mode
        await pilot.press("m")
        screen = await wait_for_preview(pilot, "1-1")
        assert screen.mode != mode
        assert screen.prompt is not None and screen.prompt.request.mode == screen.mode
