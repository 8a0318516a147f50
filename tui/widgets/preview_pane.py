"""The Preview region: the composed prompt as layers, files, notes and meter, and its texts.

Data comes down as reactives: the screen sets :attr:`PreviewPane.prompt` (with
:attr:`~PreviewPane.counted` and :attr:`~PreviewPane.delta`), :attr:`~PreviewPane.error` or
:attr:`~PreviewPane.no_stories`, and the watchers paint. What the user asks for goes up as a
message: Enter on a layer or a file (and ``D``, the diff with the last run) posts
:class:`PreviewPane.TextChosen` with the full text, which the screen shows.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from promptdeck.core.errors import PromptdeckError
from promptdeck.core.injection import InjectedFile
from promptdeck.core.layers import PromptLayer
from promptdeck.core.project import read_text_file
from promptdeck.core.prompt import ComposedPrompt, PromptRequest
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import var
from textual.widgets import Static
from textual.worker import Worker, get_current_worker

from ...core.terminal import printable, printable_line
from ..context import DeckContext
from ..session.cache_cells import fitted_cache_row
from ..session.client_models import ClientModels, installed_client_version, model_said
from ..session.context_view import (
    KeptOverhead,
    captured_window,
    context_notes,
    kept_overhead,
    window_use,
)
from ..session.preview_words import NOTE_ROWS, notes_text, preview_title
from ..session.views import CacheRow, capture_origin, kept_capture
from ..startup import collect_young_garbage
from ..workers import report_failure
from .containers import Column
from .cut_lines_meter import CutLinesMeter, drawn_here, legend
from .files_table import FilesTable
from .layers_table import LayersTable
from .meter_line import MeterLine, meter_reading
from .region_title import RegionTitle
from .tab_row import TabRow

if TYPE_CHECKING:
    # Types only: the fit and capture rooms load when their rows are first measured.
    from promptdeck.core.capture import Capture
    from promptdeck.core.fit import CutLine

    from .composition_chart import CompositionChart
    from .text_viewer import TextViewer

CACHE_ROW_DELAY_SECONDS = 0.5
"""How long the preview rests before the cacheable-prefix row is measured (it composes every
phase of the sequence, many times the work of one preview)."""

CACHE_MEASURING = "cache · measuring…"
"""The cache row while the prompt shown has not been measured yet."""

PREVIEW_TABS = (
    ("tab-overview", "Layers & files"),
    ("tab-system", "System"),
    ("tab-user", "User"),
    ("tab-messages", "Messages"),
    ("tab-composition", "Composition"),
)
"""The preview's tabs: each one's id (its pane's too) and label."""


def _show_text(static: Static, text: str) -> None:
    """Put ``text`` in a fixed-height ``static`` unless it already shows it."""
    if static.content != text:
        static.update(text, layout=False)


class PreviewPane(Column):
    """The prompt about to be sent: tabs for the layers and files, the system and user texts,
    the messages and the composition; the notes and the meter below them.

    Args:
        deck: the session: its workspace (files are read on Enter; the config holds the
            token budget) and its notice board (every error shown is kept there too).
        id: the widget id.
    """

    # Fixed heights under the tabs: a new preview then repaints them without a relayout.
    DEFAULT_CSS = """
    PreviewPane {
        & > .tab-body { height: 1fr; }
        & > .tab-body.-hidden { display: none; }
        & > #preview-notes {
            height: 3;
            padding: 0 1;
            color: $text-muted;
            &.-listed { text-wrap: nowrap; text-overflow: ellipsis; }
            &.-error { color: $error; text-style: bold; }
        }
        & > #cache-line {
            height: 1;
            padding: 0 1;
            background: $panel;
            color: $text-muted;
        }
        /* A short terminal: the rows under the tables fold first, so the files table keeps
           rows (the gauges are named in the meter's tooltip, the two meters share one row,
           one warning row is left); alone on screen, the cache row folds too. */
        &.-short {
            & > #preview-notes { height: 2; }
            & > MeterLine { height: 1; }
            & > CutLinesMeter.-shown { display: none; }
        }
        &.-short.-alone > #cache-line { display: none; }
    }
    """

    prompt: var[ComposedPrompt | None] = var(None, always_update=True, init=False)
    """The prompt shown; every new one repaints the pane (set :attr:`counted` and
    :attr:`delta` first, or after: either way the meter follows)."""
    counted: var[bool] = var(False, init=False)
    """True when :attr:`prompt` carries token counts (the meter shows ``…`` until then)."""
    delta: var[str] = var("", init=False)
    """The change the last toggle made, as the meter shows it (``+38.2 KiB  +9.6k tok``)."""
    error: var[str] = var("", always_update=True, init=False)
    """A step that failed: shown in the notes, in the error colour, until the next prompt, and
    kept on the notice board."""
    cache_line: var[str] = var("", init=False)
    """The cacheable-prefix row under the meter: what consecutive phases of the story share
    (see :mod:`promptdeck.core.cost.prefix`); empty until measured."""
    why: var[str] = var("", init=False)
    """Why the prompt's phase is the one shown (``next``, ``last run`` …), for the title; set
    it before :attr:`prompt`."""
    cut_lines: var[tuple[CutLine, ...]] = var((), init=False)
    """Where the clients cut or warn for the prompt shown (core's ``cut_lines``): the argv
    line is named on the meter's system bar, the others drawn as gauges under it."""
    kept: var[KeptOverhead | None] = var(None, init=False)
    """The session's client as last captured (``C``, or ``promptdeck capture``): its overhead
    (system text, tools, the rules files it loads) and its window stand in the context-window
    view for the estimate and the configured window, and the fit takes that window."""
    short: var[bool] = var(False, init=False)
    """The terminal is short: the rows under the tables fold (see the stylesheet)."""
    alone: var[bool] = var(False, init=False)
    """The preview is the only region shown."""
    no_stories: var[tuple[str, ...]] = var((), init=False)
    """Where promptdeck looks for stories and how to start, shown in place of a prompt in a
    workspace that has none (the first line is kept on the notice board)."""

    class TextChosen(Message):
        """The user asked to read a layer's or a file's full text (made printable)."""

        def __init__(self, title: str, text: str, subtitle: str = "") -> None:
            super().__init__()
            self.title = title
            self.text = text
            self.subtitle = subtitle

    def __init__(self, deck: DeckContext, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._deck = deck
        self._cache = CacheRow()
        # A stable session asks no client its version (the installed one is the machine's).
        self._models = ClientModels(None if deck.stable else installed_client_version)
        self._model_said = ""
        """Which model the cache row prices and where it came from, for the row's tooltip."""
        self._composition_chart: CompositionChart | None = None
        self._viewers: dict[str, TextViewer] = {}
        """The text tabs' viewers made so far, by tab (mounted, or being mounted)."""

    def compose(self) -> ComposeResult:
        """Title, tabs, notes and meter, top to bottom."""
        yield RegionTitle("Preview", id="preview-title", markup=False)
        yield TabRow(PREVIEW_TABS, id="preview-tabs")
        # One body per tab, the open one shown (what a ContentSwitcher does, without a
        # container more to style and draw in the first frame).
        with Column(id="tab-overview", classes="tab-body"):
            yield LayersTable(id="layers-table")
            yield FilesTable(id="files-table")
        # The text tabs get their viewer when first opened (:meth:`_show_in_tab`).
        for tab in ("tab-system", "tab-user", "tab-messages", "tab-composition"):
            yield Column(id=tab, classes="tab-body -hidden")  # a chart too: :meth:`_chart`
        yield Static("", id="preview-notes", markup=False)
        yield MeterLine(id="meter-line")
        yield CutLinesMeter(id="cut-lines")
        yield Static(CACHE_MEASURING, id="cache-line", markup=False)

    # ---------------------------------------------------------------- data down

    def measure(self, prompt: ComposedPrompt) -> None:
        """Measure what the counted ``prompt`` shown needs beyond itself: the cache row once the
        preview has rested, the clients' cut lines after the frame that shows it."""
        clear, start = self._cache.shown(prompt.request)
        if clear:
            # The row of another state is never left standing beside this one.
            self.cache_line = ""
        if start:
            self._measure_cache()
        # After the frame that shows the prompt: the fit room and the clients' rules files
        # are no part of it.
        self.call_after_refresh(self._measure_cut_lines, prompt)

    @work(group="cache", exit_on_error=False, description="Cache")
    async def _measure_cache(self) -> None:
        # Composing every phase of the sequence takes far longer than the preview: measured
        # once the preview has rested, one thread at a time (a thread cannot be stopped).
        deck = self._deck

        async def measure(request: PromptRequest) -> str:
            from promptdeck.core.cost import cache_row  # once the preview has rested

            # Once per agent: it may start the client for its version.
            model, notes = await asyncio.to_thread(self._models.of, deck.workspace, deck.agent)
            if notes:
                deck.board.add_notices("the model", list(notes))
            self._model_said = model_said(model)
            args = (deck.workspace, request, deck.agent, deck.counter, model)
            return await asyncio.to_thread(cache_row, *args)

        await self._cache.follow(measure, self._show_cache_line, CACHE_ROW_DELAY_SECONDS)

    def _show_cache_line(self, line: str) -> None:
        self.cache_line = line

    @work(thread=True, exclusive=True, group="cut-lines", exit_on_error=False, description="Cuts")
    def _measure_cut_lines(self, prompt: ComposedPrompt) -> None:
        # The clients' rules files are read (guarded, bounded): off the UI loop, only the
        # latest prompt's. The fit room loads here, after the first frame.
        from promptdeck.core.fit import cut_lines

        lines = tuple(cut_lines(prompt, self._deck.workspace.root))
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(setattr, self, "cut_lines", lines)

    @work(thread=True, group="kept-capture", exit_on_error=False, description="Kept capture")
    def load_kept_capture(self) -> None:
        """The session client's capture kept in the user's cache folder (read off the UI
        loop, never waited for): its overhead replaces the estimate."""
        capture, notes = kept_capture(self._deck.agent)
        if notes:
            self.app.call_from_thread(self._deck.board.add_notices, "kept capture", notes)
        if capture is not None:
            self.app.call_from_thread(self.show_capture, capture)

    def show_capture(self, capture: Capture) -> None:
        """The session client's ``capture``: its overhead replaces the estimate."""
        if capture.client != self._deck.agent:
            return
        self.kept = kept_overhead(capture, capture_origin(capture, stable=self._deck.stable))

    def watch_prompt(self, prompt: ComposedPrompt | None) -> None:
        """Paint a new prompt: tables, meter, notes, title and the open text tab."""
        if prompt is None:
            return
        self.query_one(LayersTable).show_layers(prompt.layers, prompt.system_meter.bytes)
        injection = prompt.injection
        self.query_one(FilesTable).show_files(injection.files, injection.total.bytes)
        self._show_meter()
        self._show_notes(prompt)
        # Fixed-height regions: repaint without a relayout of the screen, and only what reads
        # differently (a toggle leaves the title as it was).
        _show_text(self.query_one("#preview-title", Static), preview_title(prompt, self.why))
        # The open text tab follows the frame that shows the new meter: reloading and wrapping
        # 150 KiB of text takes many times that frame, and the meter need not wait for it.
        if self.query_one("#preview-tabs", TabRow).active != "tab-overview":
            self.call_after_refresh(self._refresh_active_text)
        if self.counted:
            self.call_after_refresh(collect_young_garbage)

    def _show_notes(self, prompt: ComposedPrompt) -> None:
        notes = self.query_one("#preview-notes", Static)
        notes.remove_class("-error")
        config, agent = self._deck.workspace.config, self._deck.agent
        rows = NOTE_ROWS - 1 if self.short else NOTE_ROWS
        shown = notes_text(prompt, config, agent, rows)
        # Notes filling every row get one line each, cut at the width, so the most serious
        # stay in view and the count of the rest is never pushed out; a lone note may wrap
        # into the free row. The tooltip reads every note whole.
        notes.set_class(shown.count("\n") >= rows, "-listed")
        _show_text(notes, shown)
        every = notes_text(prompt, config, agent, rows=None)
        notes.tooltip = every.split("\n", 1)[1] if "\n" in every else None

    def watch_short(self, short: bool) -> None:
        """Fold the rows under the tables on a short terminal, or unfold them."""
        self.set_class(short, "-short")
        self.watch_cut_lines(self.cut_lines)
        notes = self.query_one("#preview-notes", Static)
        if self.prompt is not None and not notes.has_class("-error"):
            self._show_notes(self.prompt)

    def watch_alone(self, alone: bool) -> None:
        """Alone on screen, a short terminal folds the cache row too."""
        self.set_class(alone, "-alone")

    def watch_cut_lines(self, lines: tuple[CutLine, ...]) -> None:
        """Draw the clients' lines: gauges under the meter, and the meter's tooltip names the
        lines on its own system bar."""
        self.query_one(CutLinesMeter).lines = drawn_here(lines)
        # Folded away on a short terminal, the gauges are named on the meter with its own.
        named = lines if self.short else tuple(line for line in lines if line.on_system_scale)
        self.query_one(MeterLine).tooltip = legend(named) if named else None

    def watch_cache_line(self) -> None:
        """Show the cacheable-prefix row (``measuring…`` while there is none)."""
        self._show_cache_line_fitted()

    def on_resize(self) -> None:
        """The cache row's cells are shortened to the new width."""
        self._show_cache_line_fitted()

    def _show_cache_line_fitted(self) -> None:
        row = self.query_one("#cache-line", Static)
        line = printable_line(self.cache_line)
        # Every part stays in view: its cells take shorter forms as the width shrinks; the
        # tooltip reads the row whole.
        width = row.content_region.width or self.size.width - 2
        shown = fitted_cache_row(line, width) if line else CACHE_MEASURING
        said = f"\n{printable_line(self._model_said)}" if line and self._model_said else ""
        row.tooltip = f"{line}{said}" if line else None
        _show_text(row, shown)

    def watch_counted(self) -> None:
        """Tokens counted (or not yet): the meter says so."""
        self._show_meter()

    def watch_delta(self) -> None:
        """A new change: the meter shows it."""
        self._show_meter()

    def watch_error(self, message: str) -> None:
        """Show ``message`` in the notes, in the error colour."""
        notes = self.query_one("#preview-notes", Static)
        notes.update(message, layout=False)
        notes.remove_class("-listed")
        notes.add_class("-error")
        self._deck.board.add_notices("error", [message], "error")

    def watch_no_stories(self, lines: tuple[str, ...]) -> None:
        """Nothing to compose: say what promptdeck looks for and how to start, in place of the
        preview, instead of composing forever."""
        if not lines:
            return
        notes = self.query_one("#preview-notes", Static)
        notes.styles.height = "auto"
        notes.update(Text("\n".join(lines)))
        notes.remove_class("-listed")
        notes.add_class("-error")
        self.query_one(MeterLine).placeholder = "no story to compose"
        self.query_one("#preview-title", Static).update("Preview · no stories", layout=False)
        self._deck.board.add_notices("loading the stories", [lines[0]])

    def _show_meter(self) -> None:
        prompt = self.prompt
        if prompt is None:
            return
        self.query_one(MeterLine).reading = meter_reading(
            prompt, counted=self.counted, delta=self.delta
        )

    @on(TabRow.Activated, "#preview-tabs")
    def _tab_activated(self, event: TabRow.Activated) -> None:
        for body in self.query_children(".tab-body"):
            body.set_class(body.id != event.tab, "-hidden")
        self._refresh_active_text()

    def _refresh_active_text(self) -> None:
        # Only the visible tab's text is loaded: a 150 KiB TextArea reload per toggle would
        # cost more than the compose itself.
        prompt = self.prompt
        if prompt is None:
            return
        active = self.query_one("#preview-tabs", TabRow).active
        if active == "tab-system":
            self._show_in_tab(active, printable(prompt.system))
        elif active == "tab-user":
            self._show_in_tab(active, printable(prompt.user))
        elif active == "tab-composition":
            from .composition_chart import CompositionChart

            chart = self._chart()
            tokens = prompt.system_meter.tokens
            user = prompt.user_meter.tokens
            # The context and its note set quietly, the prompt last: the chart is drawn once.
            if self.counted and tokens is not None and user is not None:
                agent = self._deck.agent
                use = window_use(tokens + user, self._deck.workspace.config, agent, self.kept)
                notes = context_notes(use, self.kept, agent)
                chart.set_reactive(CompositionChart.context_notes, notes)
                chart.set_reactive(CompositionChart.context, use)
            else:
                chart.set_reactive(CompositionChart.context, None)
            chart.prompt = prompt
        elif active == "tab-messages":
            text = json.dumps(list(prompt.messages), indent=2, ensure_ascii=False)
            self._show_in_tab(active, printable(text))

    def _chart(self) -> CompositionChart:
        """The composition tab's chart, made and mounted the first time it is asked for (the
        first frame shows the layers and files tab)."""
        if self._composition_chart is None:
            from .composition_chart import CompositionChart

            self._composition_chart = CompositionChart(id="composition-chart")
            pane = self.query_one("#tab-composition", Vertical)
            pane.mount(VerticalScroll(self._composition_chart, id="composition-scroll"))
        return self._composition_chart

    def _show_in_tab(self, tab: str, text: str) -> None:
        """Show ``text`` in the viewer of the text tab ``tab`` (``tab-system``…), made and
        mounted with it the first time the tab is opened: three read-only text areas (and
        Textual's text-area machinery) are not needed for the first frame, which shows the
        layers and files tab."""
        viewer = self._viewers.get(tab)
        if viewer is not None:
            if viewer.is_mounted:
                viewer.show(text)
            else:  # asked again before its mount is done
                self.call_after_refresh(viewer.show, text)
            return
        from .text_viewer import TextViewer

        viewer = self._viewers[tab] = TextViewer(text, id=tab.removeprefix("tab-") + "-text")
        self.query_one(f"#{tab}", Vertical).mount(viewer)

    def watch_kept(self) -> None:
        """A capture kept: the context-window view shows its overhead and window."""
        self._refresh_active_text()

    # ---------------------------------------------------------------- asked by the screen

    def toggle_composition(self) -> None:
        """Bring the composition tab forward; when it already is, switch tokens ↔ bytes."""
        tabs = self.query_one("#preview-tabs", TabRow)
        chart = self._chart()
        if tabs.active == "tab-composition":
            chart.measure = "bytes" if chart.measure == "tokens" else "tokens"  # it redraws
        else:
            tabs.active = "tab-composition"  # its TabRow.Activated fills the chart

    def focus_table(self) -> None:
        """Put the focus on the layers table (the region shown alone starts there)."""
        self.query_one(LayersTable).focus()

    @property
    def captured_window(self) -> int | None:
        """The window the kept capture of the session's client reported, None without one."""
        return captured_window(self.kept, self._deck.agent)

    @property
    def file_under_cursor(self) -> InjectedFile | None:
        """The file the files table's cursor is on, if any."""
        table = self.query_one(FilesTable)
        files = table.shown_files
        if files and 0 <= table.cursor_row < len(files):
            return files[table.cursor_row]
        return None

    @property
    def layer_under_cursor(self) -> PromptLayer | None:
        """The layer the layers table's cursor is on, if any."""
        table = self.query_one(LayersTable)
        layers = table.shown_layers
        if layers and 0 <= table.cursor_row < len(layers):
            return layers[table.cursor_row]
        return None

    def added_file_to_remove(self, added: Sequence[str]) -> str:
        """Which of the ``added`` files (not empty) ``x`` removes: the one under the files
        table's cursor, else the last added."""
        row = self.file_under_cursor
        if row is not None and row.category == "additional" and row.path in added:
            return row.path
        return added[-1]

    def copy(self, text: str, what: str) -> None:
        """``text`` to the clipboard; a toast says what went where."""
        # Imported on first use: the clipboard library probes the system when loaded.
        from ..clipboard import copy_text

        reached, message = copy_text(text, self.app.copy_to_clipboard, what)
        self.notify(message, severity="information" if reached else "warning", markup=False)

    @work(
        thread=True,
        exclusive=True,
        group="diff",
        exit_on_error=False,
        description="Comparing with the last run",
    )
    def compare_with_last_run(self, prompt: ComposedPrompt) -> None:
        """``prompt`` against the one the last run of its phase sent, part by part, posted as
        :class:`TextChosen` (off the UI thread: it reads the run record)."""
        # Imported here: the diff and the run records are not needed to show a prompt.
        from promptdeck.core.prompt import (
            compare,
            diff_text,
            last_run_of,
            side_of_prompt,
            side_of_run,
        )

        story, phase = prompt.story.id, prompt.request.phase
        run = last_run_of(self._deck.workspace.root, story, phase)
        if run is None:
            self.app.call_from_thread(
                self.notify, f"no earlier {phase} run of story {story} to compare with"
            )
            return
        try:
            diff = compare(side_of_run(run), side_of_prompt(prompt, "the prompt now"))
        except PromptdeckError as exc:
            self.app.call_from_thread(self._fail, str(exc))
            return
        title = f"Diff · {story} · {phase} · {len(diff.changed)} of {len(diff.parts)} parts differ"
        self.post_message(self.TextChosen(title, "\n".join(diff_text(diff))))

    def _fail(self, message: str) -> None:
        self.error = message

    # ---------------------------------------------------------------- events up

    @on(LayersTable.LayerChosen)
    def _layer_chosen(self, event: LayersTable.LayerChosen) -> None:
        event.stop()
        layer = event.layer
        subtitle = f"{layer.source or 'no source'} · {layer.bytes:,} bytes"
        if layer.tokens is not None:
            subtitle += f" · {layer.tokens:,} tokens"
        subtitle += f" · sha256 {layer.sha256[:12]}"
        self.post_message(
            self.TextChosen(
                printable_line(f"{layer.layer_id} · {layer.title}"),
                printable(layer.content),
                printable_line(subtitle),
            )
        )

    @on(FilesTable.FileChosen)
    def _file_chosen(self, event: FilesTable.FileChosen) -> None:
        event.stop()
        self._read_file(event.file)

    @work(thread=True, group="file-view", exit_on_error=False, description="Reading a file")
    def _read_file(self, item: InjectedFile) -> None:
        # A read never runs on the UI thread: whatever the file is, q still quits.
        subtitle = f"{item.category} · {item.status} · {item.bytes:,} bytes · {item.reason}"
        workspace = self._deck.workspace
        path = workspace.path(item.path)
        if item.status == "outside-project" or not workspace.contains(path):
            text = "(outside the project: not read)"
        else:
            content = read_text_file(
                path, root=workspace.root, limit=workspace.config.read_max_bytes
            )
            text = content if isinstance(content, str) else f"({content})"
        # Posting a message is safe from this thread.
        self.post_message(
            self.TextChosen(printable_line(item.path), printable(text), printable_line(subtitle))
        )

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A read or a diff that failed with an unexpected error says so instead of vanishing."""
        report_failure(self, event)
