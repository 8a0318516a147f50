"""PreviewPane on its own, without the main screen: reactives in, what it paints out; Enter on
a layer or a file posts the full text up."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace

import pytest
from app_helpers import NoticeList, deck_on, run_async, wait_for
from promptdeck.core.injection.model import Selection
from promptdeck.core.plans.catalog import load_catalog
from promptdeck.core.prompt.compose import compose_prompt
from promptdeck.core.prompt.request import ComposedPrompt, PromptRequest
from promptdeck.core.terminal import printable
from promptdeck.core.tokens.counter import TokenCounter
from promptdeck.tui import startup
from promptdeck.tui.context import DeckContext
from promptdeck.tui.notices import Notice
from promptdeck.tui.session.preview_words import notes_text
from promptdeck.tui.widgets.composition_chart import CompositionChart
from promptdeck.tui.widgets.files_table import FilesTable
from promptdeck.tui.widgets.fitted_table import HEADER_LINES, ColumnSpec, FittedTable
from promptdeck.tui.widgets.layers_table import LayersTable
from promptdeck.tui.widgets.meter_line import MeterLine
from promptdeck.tui.widgets.preview_pane import PreviewPane
from promptdeck.tui.widgets.tab_row import TabRow
from promptdeck.tui.widgets.text_viewer import TextViewer
from rich.console import Console
from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import App, ComposeResult
from textual.pilot import Pilot
from textual.strip import Strip
from textual.widgets import Static

COUNTER = TokenCounter("o200k_base")


class PaneApp(App[None]):
    def __init__(self, deck: DeckContext) -> None:
        super().__init__()
        self.deck = deck
        self.chosen: list[PreviewPane.TextChosen] = []

    def compose(self) -> ComposeResult:
        yield PreviewPane(self.deck, id="preview")

    @on(PreviewPane.TextChosen)
    def _chosen(self, event: PreviewPane.TextChosen) -> None:
        self.chosen.append(event)


@asynccontextmanager
async def mounted(
    deck: DeckContext, prompt: ComposedPrompt | None = None
) -> AsyncIterator[tuple[Pilot[None], PreviewPane, PaneApp]]:
    """The pane alone in a 140x40 app; showing ``prompt`` (painted) when one is given."""
    app = PaneApp(deck)
    async with app.run_test(size=(140, 40)) as pilot:
        pane = app.query_one(PreviewPane)
        if prompt is not None:
            pane.prompt = prompt
            await pilot.pause()
        yield pilot, pane, app


def composed(deck: DeckContext, *, counted: bool = True, **selection: bool) -> ComposedPrompt:
    workspace = deck.workspace
    catalog = load_catalog(workspace)
    request = PromptRequest(catalog.stories[0].id, phase="dev", selection=Selection(**selection))
    return compose_prompt(workspace, catalog, request, counter=COUNTER, count_tokens=counted)


def project_context_toggled(deck: DeckContext) -> tuple[ComposedPrompt, ComposedPrompt]:
    """The first story's prompt with the project context, then without it (a toggle)."""
    return composed(deck, project_context=True), composed(deck, project_context=False)


def text_of(pane: PreviewPane, selector: str) -> str:
    return str(pane.query_one(selector, Static).render())


def board_of(deck: DeckContext) -> list[Notice]:
    assert isinstance(deck.board, NoticeList)
    return deck.board.notices


@run_async
async def test_a_prompt_fills_the_tables_the_notes_the_title_and_the_meter(
    demo_root: Path,
) -> None:
    deck = deck_on(demo_root)
    prompt = composed(deck, discovery=True)
    async with mounted(deck) as (pilot, pane, _app):
        pane.counted = True
        pane.delta = "+1.0 KiB"
        pane.prompt = prompt
        await pilot.pause()
        assert pane.query_one(LayersTable).shown_layers == prompt.layers
        assert pane.query_one(FilesTable).shown_files == prompt.injection.files
        notes = text_of(pane, "#preview-notes")
        assert notes.startswith("[p] project on  [d] discovery on  [t] tech-spec off")
        assert not pane.query_one("#preview-notes").has_class("-error")
        assert text_of(pane, "#preview-title") == f"Preview · dev · {prompt.story.id} · create"
        reading = pane.query_one(MeterLine).reading
        assert reading is not None
        assert reading.system_bytes == prompt.system_meter.bytes
        assert prompt.system_meter.tokens is not None
        assert reading.system_tokens == prompt.system_meter.tokens
        assert reading.injection_bytes == prompt.injection.size_bytes
        assert reading.delta == "+1.0 KiB"


@run_async
async def test_the_meter_shows_tokens_only_once_the_prompt_is_counted(demo_root: Path) -> None:
    deck = deck_on(demo_root)
    prompt = composed(deck)
    async with mounted(deck, prompt) as (pilot, pane, _app):
        reading = pane.query_one(MeterLine).reading
        assert reading is not None and reading.system_tokens is None
        pane.counted = True
        await pilot.pause()
        reading = pane.query_one(MeterLine).reading
        assert reading is not None and reading.system_tokens == prompt.system_meter.tokens
        pane.delta = "-2 B"
        await pilot.pause()
        reading = pane.query_one(MeterLine).reading
        assert reading is not None and reading.delta == "-2 B"


@run_async
async def test_an_error_shows_until_the_next_prompt_and_each_one_is_kept(demo_root: Path) -> None:
    deck = deck_on(demo_root)
    prompt = composed(deck)
    async with mounted(deck) as (pilot, pane, _app):
        pane.prompt = prompt
        pane.error = "story file vanished"
        await pilot.pause()
        notes = pane.query_one("#preview-notes", Static)
        assert text_of(pane, "#preview-notes") == "story file vanished"
        assert notes.has_class("-error")
        pane.prompt = prompt
        await pilot.pause()
        assert not notes.has_class("-error")
        assert text_of(pane, "#preview-notes").startswith("[p] project")
        # The same failure again is shown again, and kept again.
        pane.error = "story file vanished"
        await pilot.pause()
        assert notes.has_class("-error")
        assert board_of(deck) == [Notice("error", "story file vanished", "error")] * 2


@run_async
async def test_no_stories_says_where_stories_come_from(demo_root: Path) -> None:
    deck = deck_on(demo_root)
    async with mounted(deck) as (pilot, pane, _app):
        assert "composing" in str(pane.query_one(MeterLine).render())
        pane.no_stories = ("no stories found", "add _bmad-output/ or openspec/")
        await pilot.pause()
        assert text_of(pane, "#preview-notes") == "no stories found\nadd _bmad-output/ or openspec/"
        assert pane.query_one("#preview-notes").has_class("-error")
        assert str(pane.query_one(MeterLine).render()) == "no story to compose"
        assert text_of(pane, "#preview-title") == "Preview · no stories"
        assert board_of(deck) == [Notice("loading the stories", "no stories found")]


@run_async
async def test_enter_on_a_layer_or_a_file_posts_its_full_text(demo_root: Path) -> None:
    deck = deck_on(demo_root)
    prompt = composed(deck)
    async with mounted(deck, prompt) as (pilot, pane, app):
        layers = pane.query_one(LayersTable)
        layers.focus()
        layers.move_cursor(row=5)
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(app.chosen) == 1, "the layer's text")
        layer = prompt.layers[5]
        assert app.chosen[0].title == f"{layer.layer_id} · {layer.title}"
        assert app.chosen[0].text == printable(layer.content)
        assert f"sha256 {layer.sha256[:12]}" in app.chosen[0].subtitle

        files = pane.query_one(FilesTable)
        files.focus()
        files.move_cursor(row=1)
        assert pane.file_under_cursor == prompt.injection.files[1]
        await pilot.press("enter")
        await wait_for(pilot, lambda: len(app.chosen) == 2, "the file's text")
        item = prompt.injection.files[1]
        assert app.chosen[1].title == item.path
        assert app.chosen[1].text == (demo_root / item.path).read_text(encoding="utf-8")


@run_async
async def test_only_the_open_tab_loads_its_text_and_b_switches_the_chart(demo_root: Path) -> None:
    deck = deck_on(demo_root)
    prompt = composed(deck)
    async with mounted(deck, prompt) as (pilot, pane, _app):
        # No text tab has a viewer before it is opened (the first frame does without them).
        assert not pane.query(TextViewer)
        pane.query_one(TabRow).active = "tab-system"
        pane._refresh_active_text()  # asked twice before the viewer is mounted: made once
        await pilot.pause()
        system = pane.query_one("#system-text", TextViewer)
        assert system.text == printable(prompt.system) and not pane.query("#user-text")
        pane.query_one(TabRow).active = "tab-user"
        await pilot.pause()
        assert pane.query_one("#user-text", TextViewer).text == printable(prompt.user)
        pane.query_one(TabRow).active = "tab-system"
        await pilot.pause()
        assert pane.query(TextViewer).nodes == [system, pane.query_one("#user-text")]

        assert not pane.query(CompositionChart)  # made when the tab is first opened
        pane.toggle_composition()
        await pilot.pause()
        chart = pane.query_one(CompositionChart)
        assert pane.query_one(TabRow).active == "tab-composition"
        assert chart.prompt is prompt and chart.measure == "tokens"
        pane.toggle_composition()
        assert chart.measure == "bytes"


def test_the_notes_name_the_budget_and_each_warning_once(demo_root: Path) -> None:
    deck = deck_on(demo_root, budget_dev=10)
    counted = composed(deck)
    tokens = counted.system_meter.tokens
    assert tokens is not None and counted.user_meter.tokens is not None
    used = tokens + counted.user_meter.tokens
    assert f"budget {used:,}/10 tok OVER" in notes_text(counted, deck.workspace.config)
    quick = composed(deck, counted=False)
    assert "budget …/10 tok" in notes_text(quick, deck.workspace.config)
    assert "OVER" not in notes_text(quick, deck.workspace.config)

    warned = replace(counted, warnings=("rules: unreadable", "rules: unreadable", "a\x1bb"))
    lines = notes_text(warned, deck_on(demo_root).workspace.config).splitlines()
    assert lines[1:] == ["⚠ rules: unreadable", "⚠ a␛b"]


@run_async
async def test_x_removes_the_added_file_under_the_cursor_else_the_last(demo_root: Path) -> None:
    deck = deck_on(demo_root)
    workspace = deck.workspace
    catalog = load_catalog(workspace)
    added = ("README.md", "pyproject.toml")
    request = PromptRequest(
        catalog.stories[0].id, phase="dev", selection=Selection(additional_files=added)
    )
    prompt = compose_prompt(workspace, catalog, request, counter=deck.counter)
    async with mounted(deck, prompt) as (_pilot, pane, _app):
        files = pane.query_one(FilesTable)
        rows = [f.path for f in files.shown_files]
        files.move_cursor(row=rows.index("README.md"))
        assert pane.added_file_to_remove(added) == "README.md"
        # Not on an added file: the last one added goes.
        not_added = next(i for i, f in enumerate(files.shown_files) if f.category != "additional")
        files.move_cursor(row=not_added)
        assert pane.added_file_to_remove(added) == "pyproject.toml"


def _drawn(table: FilesTable | LayersTable) -> list[list[object]]:
    """Every line of ``table`` as drawn now: its segments (text and style)."""
    return [list(table.render_line(y)) for y in range(table.size.height)]


@run_async
async def test_a_new_prompt_redraws_the_rows_it_changes_and_no_line_is_left_stale(
    demo_root: Path,
) -> None:
    deck = deck_on(demo_root)
    before, after = project_context_toggled(deck)
    async with mounted(deck, before) as (pilot, pane, _app):
        tables = (pane.query_one(LayersTable), pane.query_one(FilesTable))
        old = [_drawn(table) for table in tables]
        pane.prompt = after
        await pilot.pause()
        kept = [_drawn(table) for table in tables]
        for table in tables:
            # What a table draws from scratch: the lines kept must read the same.
            table._line_cache.clear()
        fresh = [_drawn(table) for table in tables]
        assert kept == fresh
        # The project context row changed (included, then left out): the files table shows it.
        assert kept[1] != old[1]
        status = {f.path: f.status for f in after.injection.files}
        assert "excluded" in status.values()


@run_async
async def test_the_meter_paints_the_lines_of_its_text_cut_to_its_width(demo_root: Path) -> None:
    deck = deck_on(demo_root)
    async with mounted(deck) as (pilot, pane, _app):
        meter = pane.query_one(MeterLine)
        assert meter.render_line(0).text == "composing…"
        pane.prompt = composed(deck)
        await pilot.pause()
        width = meter.size.width
        lines = str(meter.render()).splitlines()
        assert len(lines) == 2 and all(len(line) <= width for line in lines)
        assert [meter.render_line(y).text for y in range(2)] == lines
        # Narrower than its words: each line is cut with an ellipsis, never wrapped over the
        # system bar below it.
        meter.styles.width = 24
        await pilot.pause()
        painted = [meter.render_line(y).text for y in range(2)]
        assert painted[0].endswith("…") and painted[1].startswith("sys")
        assert all(len(line) == meter.size.width for line in painted)


class _Rows(FittedTable):
    COLUMNS = (
        ColumnSpec("path", "path", None, minimum=6),
        ColumnSpec("size", "size", 7, right=True),
        ColumnSpec("why", "why", None),
    )


class _RowsApp(App[None]):
    def compose(self) -> ComposeResult:
        yield _Rows()


def _as_rich_draws(
    cells: list[Text], widths: list[int], width: int, style: Style, row: int
) -> list[object]:
    """The line rich renders for ``cells`` padded into ``widths``, in ``style`` and with the
    row's meta (the reference drawing)."""
    line = Text(no_wrap=True, end="")
    for cell, column in zip(cells, widths, strict=True):
        piece = cell.copy()
        piece.truncate(column, overflow="ellipsis", pad=False)
        room = " " * (column - piece.cell_len)
        line.append(" " + (room if piece.justify == "right" else ""))
        line.append_text(piece)
        line.append(("" if piece.justify == "right" else room) + " ")
    strip = Strip(line.render(Console())).adjust_cell_length(width).apply_style(style)
    meta = Style.from_meta({"row": row})
    return [(s.text, s.style + meta if s.style else meta) for s in strip]


@run_async
async def test_a_row_is_drawn_as_rich_draws_its_line(demo_root: Path) -> None:
    rows = [
        [Text("src/ledger/import.py", style="dim"), Text("4.1 KiB", justify="right"), Text("")],
        [Text("日本語のファイル名.md"), Text("", style="dim"), Text("own key", style="bold red")],
        [Text("a" * 40), Text("120.0 KiB", style="dim", justify="right"), Text("why", "dim")],
        [Text("x"), Text("1 B", justify="right"), Text.assemble(("sec", "red"), "ret")],
    ]
    async with _RowsApp().run_test(size=(60, 10)) as pilot:
        table = pilot.app.query_one(_Rows)
        cursor = [Text("under the cursor"), Text(""), Text("")]
        table.set_rows([(str(i), tuple(row)) for i, row in enumerate([*rows, cursor])])
        table.move_cursor(row=len(rows))
        await pilot.pause()
        _shown, widths = table._layout()
        base = table.rich_style
        for index, row in enumerate(rows):
            drawn = [(s.text, s.style) for s in table.render_line(HEADER_LINES + index)]
            expected = _as_rich_draws(row, widths, table.size.width, base, index)
            assert drawn == expected, index


@run_async
async def test_the_open_text_tab_reloads_after_the_meter_frame(demo_root: Path) -> None:
    deck = deck_on(demo_root)
    before, after = project_context_toggled(deck)
    async with mounted(deck, before) as (pilot, pane, _app):
        pane.query_one(TabRow).active = "tab-system"
        await pilot.pause()
        system = pane.query_one("#system-text", TextViewer)
        assert system.text == printable(before.system)
        pane.counted = True
        pane.prompt = after
        # The meter reads the new prompt at once; the text waits for the frame.
        reading = pane.query_one(MeterLine).reading
        assert reading is not None and reading.system_bytes == after.system_meter.bytes
        assert system.text == printable(before.system)
        await pilot.pause()
        assert system.text == printable(after.system)


@run_async
async def test_young_garbage_is_collected_once_a_counted_prompt_is_on_screen(
    demo_root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    collected: list[int] = []
    monkeypatch.setattr(
        startup,
        "gc",
        SimpleNamespace(collect=collected.append, isenabled=lambda: True, freeze=lambda: None),
    )
    deck = deck_on(demo_root)
    async with mounted(deck) as (pilot, pane, _app):
        pane.counted = False
        pane.prompt = composed(deck, counted=False)
        await pilot.pause()
        assert collected == []
        pane.counted = True
        pane.prompt = composed(deck)
        # Not before the frame that shows it: after it.
        assert collected == []
        await pilot.pause()
        assert collected == [1]
