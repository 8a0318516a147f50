"""The main screen: Stories (left), Preview (centre), Phases (right).

The screen routes. It holds what makes the request — the story, what is included — and the
view; each region is a widget of its own, fed by reactives and telling the screen what the user
did by messages (:class:`~promptdeck.tui.widgets.stories_pane.StoriesPane`,
:class:`~promptdeck.tui.widgets.preview_pane.PreviewPane`,
:class:`~promptdeck.tui.widgets.phases_pane.PhasesPane`). The rest is in plain units:
:class:`~promptdeck.tui.session.preview_composer.PreviewComposer` (debounce, delta, the two compose
passes) and :class:`~promptdeck.tui.session.runs.SessionRuns` (plan, confirm, start, cancel, quit).
Core does the work.
"""

from __future__ import annotations

import asyncio
import subprocess
from concurrent.futures import Future
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, ClassVar

from promptdeck.core.errors import PromptdeckError
from promptdeck.core.injection import Selection
from promptdeck.core.layers import MODES
from promptdeck.core.phases import PHASE_NAMES
from promptdeck.core.prompt import ComposedPrompt, PromptRequest
from promptdeck.core.stories import (
    WATCH_LIMIT,
    PlanSnapshot,
    Story,
    StoryCatalog,
    group_notes,
    load_catalog,
    plan_paths,
    take_snapshot,
    where_stories_come_from,
)
from promptdeck.core.vocabulary import RULES_LAYER
from textual import events, on, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import BindingType
from textual.containers import Horizontal
from textual.reactive import reactive, var
from textual.screen import Screen
from textual.worker import Worker, get_current_worker

from .. import startup
from ..bindings import FOOTER_PRIORITY, MAIN_BINDINGS
from ..context import DeckContext
from ..session.opening import Opening, OpeningHelper, opening_request
from ..session.preview_composer import PreviewComposer
from ..session.runs import SessionRuns
from ..session.story_phases import FlowReading
from ..widgets.files_table import FilesTable
from ..widgets.key_footer import KeyFooter
from ..widgets.layers_table import LayersTable
from ..widgets.phase_panel import PhasePanel
from ..widgets.phases_pane import PhasesPane
from ..widgets.preview_pane import PreviewPane
from ..widgets.stories_pane import StoriesPane
from ..widgets.view_bar import ViewBar, ViewState, shown_regions
from ..widgets.workspace_header import WorkspaceHeader, header_info
from ..workers import report_failure
from .run_dialogs import RunDialogs

if TYPE_CHECKING:
    from promptdeck.core.capture import Capture
    from promptdeck.core.records import RunResult

    _Opened = tuple[
        StoryCatalog,
        bool,
        tuple[list[str], PlanSnapshot],
        RunResult | None,
        str | None,
        FlowReading | None,
        ComposedPrompt | None,
    ]
    """What :meth:`MainScreen._catalog_loaded` takes for the app's opening."""

NARROW_WIDTH = 130
"""Below this many columns the phase region folds away unless asked for (key 3)."""

STORIES_SHARE = (0.21, 0.30)
"""The Stories region's share of a wide terminal: at least the first, widening up to the second
when the titles need it (the preview keeps the rest)."""

PLAN_POLL_SECONDS = 1.0
"""How often the plan files are checked for changes made outside the app (see
:mod:`promptdeck.core.stories.catalog` for why this polls)."""

OPENING_WAIT_SECONDS = 0.5
"""How long the screen waits, at start, for the catalog the opening helper reads beside it
before its first frame: the story tree then reaches the screen in the first frame instead of
after an empty one (past it, the catalog's thread takes the helper's answer when it comes)."""

PROMPT_WAIT_SECONDS = 0.25
"""How long the catalog, once read, waits for the first story's prompt composed beside it: with
counts remembered it lands well within this, and the tree and the preview with its meters are
painted in one frame; a slower count goes the preview's own way (byte meters first)."""

CACHE_ROW_DELAY_SECONDS = 0.5
"""How long the preview rests before the cacheable-prefix row is measured (it composes every
phase of the sequence, many times the work of one preview)."""

PHASES = PHASE_NAMES
VIEWS = ("all", "stories", "preview", "phases")


class MainScreen(Screen[None]):
    """Pick a story, see its prompt, change what is included, run its phases."""

    # Its stylesheet, main.tcss, is read with the app's (see PromptdeckApp.CSS_PATH).
    BINDINGS: ClassVar[list[BindingType]] = list(MAIN_BINDINGS)
    AUTO_FOCUS = "#story-tree"

    story: reactive[Story | None] = reactive(None, init=False)
    """The story previewed."""
    selection: var[Selection] = var(Selection(), init=False)
    """What the injection includes beyond the story's own files."""
    view: reactive[str] = reactive("all", init=False)
    delivery: var[str] = var("layered", init=False)
    """Where the layers go: ``layered`` or ``cache-aware`` (the workspace's setting at start,
    ``L`` switches)."""
    """Which regions show: all, or one of stories, preview, phases."""

    def __init__(self, context: DeckContext, opening: OpeningHelper | None = None) -> None:
        super().__init__()
        self.context = context
        """The session this screen works in."""
        self._helper = opening
        """The opening read beside the app's start, if a helper was started (taken once)."""
        self.catalog: StoryCatalog | None = None
        self.set_reactive(MainScreen.delivery, context.workspace.config.delivery)
        self._plan: tuple[list[str], PlanSnapshot] | None = None
        """The plan paths watched and how they looked when the catalog was last read."""
        self._bound_said = False
        self._finished_pending: RunResult | None = None
        """A finished run whose reload has not been applied yet (see `_load_catalog`)."""
        self._opening: FlowReading | None = None
        """The first story's flow, read with the catalog at start (used once)."""
        self._opening_shown: PromptRequest | None = None
        """The request of the first prompt, shown with the catalog (until the flow's change)."""
        self._resumed = False
        self.preview = PreviewPane(context, id="preview")
        """The Preview region: the prompt shown, with its tables, notes and meter."""
        self._composer = PreviewComposer()
        self.stories_pane = StoriesPane(id="stories")
        """The Stories region: the filter box and the story tree."""
        panel = PhasePanel(
            context_window=context.workspace.config.agent_claude_context_window,
            duration=context.duration,
            id="phase-panel",
        )
        self.phases = PhasesPane(context, panel, id="phases")
        """The Phases region: the phase and mode chosen, the flow followed, the run shown."""
        self._cache_request: PromptRequest | None = None
        """The request whose cache row is shown or to be measured."""
        self._cache_measuring = False
        """True while the cache row's worker runs (it measures the latest request)."""
        self.runs = SessionRuns(
            RunDialogs(self), context, panel, started=self._run_started, failed=self._show_error
        )
        """The session's runs: plan, confirm, start, cancel, quit."""

    @property
    def prompt(self) -> ComposedPrompt | None:
        """The prompt shown, once composed (tokens may still be uncounted)."""
        return self.preview.prompt

    @property
    def prompt_counted(self) -> bool:
        """True once :attr:`prompt` carries token counts."""
        return self.preview.counted

    @property
    def phase(self) -> str:
        """The phase previewed and run by ``r``."""
        return self.phases.phase

    @property
    def mode(self) -> str:
        """``create`` or ``optimize``."""
        return self.phases.mode

    @property
    def last_result(self) -> RunResult | None:
        """How the last run of this session ended."""
        return self.runs.last_result

    # ---------------------------------------------------------------- layout

    def compose(self) -> ComposeResult:
        """Header, the three regions, footer."""
        yield WorkspaceHeader(id="header")
        yield ViewBar(id="view-bar")
        with Horizontal(id="regions"):
            yield self.stories_pane
            yield self.preview
            yield self.phases
        yield KeyFooter(FOOTER_PRIORITY, id="footer")

    def on_screen_resume(self, event: events.ScreenResume) -> None:
        """The first time the screen is shown, it keeps the styles its widgets took as they
        mounted, just before: restyling all of them again (what Textual's own handler, run
        after this one, does for a screen coming back) cost 90 ms of the first frame. Later
        resumes restyle, as a theme chosen meanwhile must show."""
        if not self._resumed:
            self._resumed = True
            event.refresh_styles = False

    def on_mount(self) -> None:
        """Show the header at once and load the catalog off the UI loop."""
        # What the launch held back for the first frame goes once it is drawn (first of all,
        # so that nothing below can keep it held): promptdeck.tui.startup.
        self.call_after_refresh(startup.first_frame_painted)
        self.query_one(WorkspaceHeader).info = header_info(self.context)
        self.on_resize()
        helper, self._helper = self._helper, None
        if helper is not None and helper.wait(OPENING_WAIT_SECONDS):
            # Read beside the app's start: shown in the first frame.
            opened = self._take_opening(helper)
            if opened is not None:
                self._catalog_loaded(*opened)
                helper = None
        if helper is not None or self.catalog is None:
            self._load_catalog(helper=helper)
        self.set_interval(PLAN_POLL_SECONDS, self._poll_plan, name="plan-poll")
        # After the first frame: the capture room is no part of it.
        self.call_after_refresh(self._load_kept_capture, self.context.agent)

    @work(thread=True, group="kept-capture", exit_on_error=False, description="Kept capture")
    def _load_kept_capture(self, client: str) -> None:
        # A small file in the user's cache folder, read through the guarded reader: off the
        # UI loop all the same, and never waited for (the capture room loads here too, after
        # the first frame).
        from promptdeck.core.capture import CLIENTS, remembered_capture

        if client not in CLIENTS:
            return
        notes: list[str] = []
        capture = remembered_capture(client, notes=notes)
        if notes:
            self.app.call_from_thread(self.context.board.add_notices, "kept capture", notes)
        if capture is not None:
            self.app.call_from_thread(self._show_kept_capture, capture)

    def _show_kept_capture(self, capture: Capture) -> None:
        """The session client's last capture: its overhead replaces the estimate."""
        if capture.client != self.context.agent:
            return
        version = capture.client_version or "(version unknown)"
        # The moment of capture varies between sessions: a stable session leaves it out.
        origin = f"{capture.client} {version}" if self.context.stable else capture.origin()
        self.preview.capture_origin = origin
        from promptdeck.core.capture import capture_summary

        self.preview.client_capture = capture_summary(capture)

    def on_resize(self) -> None:
        """Fold the phase region away on narrow terminals."""
        self.set_class(self.size.width < NARROW_WIDTH, "-narrow")
        self._fit_stories()
        self._show_view_bar()

    def _fit_stories(self) -> None:
        """On a wide terminal, widen the tree to its titles, up to a share of the screen; on a
        narrow one (or alone on screen), the stylesheet's widths hold."""
        styles = self.stories_pane.styles
        total = self.size.width
        if self.has_class("-narrow") or self.view != "all" or total == 0:
            styles.clear_rule("width")
            styles.clear_rule("max_width")
            return
        least, most = (round(total * share) for share in STORIES_SHARE)
        width = max(least, min(self.stories_pane.natural_width(), most))
        styles.width = width
        styles.max_width = width

    def _show_view_bar(self) -> None:
        suggestion = self.phases.choice.suggestion
        note = self.runs.note() or (f"next {suggestion.phase}" if suggestion else "")
        shown = shown_regions(self.view, self.has_class("-narrow"))
        self.query_one(ViewBar).state = ViewState(shown, note)

    @on(ViewBar.ViewChosen)
    def _view_chosen(self, event: ViewBar.ViewChosen) -> None:
        self.action_view(event.view)

    def action_view(self, view: str) -> None:
        """``1`` ``2`` ``3``: show one region; the same key again shows them all."""
        self.view = "all" if self.view == view else view

    def watch_view(self, view: str) -> None:
        """Show one region, or all of them."""
        for name in VIEWS[1:]:
            self.set_class(view == name, f"-solo-{name}")
        self._fit_stories()
        self._show_view_bar()
        self.phases.solo = view == "phases"
        if view == "stories":
            self.stories_pane.focus_tree()
        elif view == "preview":
            self.preview.focus_table()
        elif view == "phases":
            self.phases.focus_log()

    # ---------------------------------------------------------------- stories

    @work(
        thread=True,
        exclusive=True,
        group="catalog",
        exit_on_error=False,
        description="Loading stories",
    )
    def _load_catalog(
        self,
        follow_flow: bool = False,
        finished: RunResult | None = None,
        helper: OpeningHelper | None = None,
    ) -> None:
        workspace = self.context.workspace
        if helper is not None:
            opened = self._take_opening(helper)
            if opened is not None:
                self.app.call_from_thread(self._catalog_loaded, *opened)
                return
        # A reload the plan watcher starts can replace (cancel) the one a finished run started,
        # even before its thread runs: the run's outcome waits here until a reload applies it.
        pending = self._finished_pending
        if finished is None and pending is not None:
            finished, follow_flow = pending, True
        try:
            catalog = load_catalog(workspace)
        except PromptdeckError as exc:
            self.app.call_from_thread(self._show_error, str(exc))
            return
        opening = None
        ready = None
        if self.catalog is None and finished is None and catalog.stories:
            try:
                opening, composing = self._open_first_story(catalog)
            except Exception:
                opening = None
            else:
                ready = _result_within(composing, PROMPT_WAIT_SECONDS)
        paths = plan_paths(workspace, catalog)
        plan = (paths, take_snapshot(workspace, paths))
        unwritten = None
        if finished is not None and finished.outcome == "success":
            from promptdeck.core.records import unwritten_status

            unwritten = unwritten_status(finished.run_dir, workspace.root)
        self.app.call_from_thread(
            self._catalog_loaded,
            catalog,
            follow_flow,
            plan,
            finished,
            unwritten,
            opening,
            ready,
        )

    def _take_opening(self, helper: OpeningHelper) -> _Opened | None:
        """The catalog, flow and prompt the helper read (waiting for them), as
        :meth:`_catalog_loaded` takes them; None if the helper failed."""
        opening: Opening | None = helper.take_catalog()
        if opening is None:
            return None
        ready = helper.take_prompt(PROMPT_WAIT_SECONDS)
        return opening.catalog, False, opening.plan, None, None, opening.reading, ready

    def _open_first_story(
        self, catalog: StoryCatalog
    ) -> tuple[FlowReading, Future[ComposedPrompt]]:
        """The app's start, off the UI thread: read the first story's flow here and start
        composing the prompt it opens on, so the preview's first frame does not wait for the
        story tree to be built and painted first (the screen picks both up as it would have
        asked for them). Returns the flow and the compose under way."""
        deck = self.context
        reading, request = opening_request(
            deck.workspace, catalog, self.phases.choice.open_phase, self.delivery
        )
        composing = self._composer.prepare(deck.workspace, catalog, request, deck.counter)
        return reading, composing

    def _catalog_loaded(
        self,
        catalog: StoryCatalog,
        follow_flow: bool = False,
        plan: tuple[list[str], PlanSnapshot] | None = None,
        finished: RunResult | None = None,
        unwritten: str | None = None,
        opening: FlowReading | None = None,
        ready: ComposedPrompt | None = None,
    ) -> None:
        reload = self.catalog is not None
        self.catalog = catalog
        self._plan = plan
        if plan is not None and plan[1].left_out and not self._bound_said:
            self._bound_said = True
            self.context.board.add_notices(
                "watching the plan",
                [f"{plan[1].total} plan files: changes to the first {WATCH_LIMIT} are followed"],
            )
        if finished is not None and finished is self._finished_pending:
            self._finished_pending = None
        if finished is not None:
            flags = {k: v for k, v in self.stories_pane.flags.items() if k != finished.story_id}
            if unwritten:
                flags[finished.story_id] = "status not written back"
                self.context.board.add_notices(f"run {finished.story_id}", [unwritten])
            self.stories_pane.set_reactive(StoriesPane.flags, flags)
        current = self.story.id if self.story else None
        kept = next((s for s in catalog.stories if s.id == current), None)
        chosen = kept or (catalog.stories[0] if catalog.stories else None)
        # The cursor's story first: the tree is rebuilt with the cursor on it.
        self.stories_pane.current = chosen.id if chosen else None
        self.stories_pane.unreadable = catalog.unreadable
        self.stories_pane.stories = catalog.stories
        self._fit_stories()
        if not reload:
            # One toast for them all; the notices screen (w) keeps each of them, by kind.
            notes = [f"{g.kind}: {line}" for g in group_notes(catalog) for line in g.lines]
            self.context.board.add_notices("loading the stories", notes)
        if chosen is None:
            # Nothing to compose: the preview says what promptdeck looks for instead.
            self.preview.no_stories = tuple(where_stories_come_from(self.context.workspace))
            return
        if kept is not None:
            # Same story, fresh data (a run may have changed its file): keep the choices.
            self.set_reactive(MainScreen.story, kept)
            if follow_flow:
                self.phases.follow(kept, catalog)
            else:
                self.request_compose()
        else:
            self._opening = opening
            self.story = chosen
            if ready is not None and ready.request == self.current_request():
                # The first story's prompt is composed already: shown in the tree's frame, and
                # not composed again for the phase the flow opened on (see _phases_changed).
                self._composer.drop_prepared()
                self._show_prompt(ready, True, "")
                self._opening_shown = ready.request

    def _poll_plan(self) -> None:
        """Every :data:`PLAN_POLL_SECONDS`: look for plan files changed outside the app."""
        plan = self._plan
        # One check at a time, and none while the catalog is read: a check is never cancelled
        # half-way (someone may be waiting on it), a slow one just skips a beat.
        busy = any(
            w.group in ("catalog", "plan-watch") and not w.is_finished for w in self.app.workers
        )
        if plan is not None and not busy:
            self._check_plan(plan)

    @work(
        thread=True,
        group="plan-watch",
        exit_on_error=False,
        description="Checking the plan files",
    )
    def _check_plan(self, plan: tuple[list[str], PlanSnapshot]) -> None:
        paths, before = plan
        now = take_snapshot(self.context.workspace, paths)
        changed = now.changed_since(before)
        if not changed:
            return
        refused = [line for line in now.problems() if line.split(": ", 1)[0] in changed]
        if refused:
            self.app.call_from_thread(self._plan_refused, (paths, now), refused)
        else:
            self.app.call_from_thread(self._load_catalog)

    def _plan_refused(self, plan: tuple[list[str], PlanSnapshot], refused: list[str]) -> None:
        # The guarded reader would not read it: keep the tree as it was, say so once (the
        # refused state becomes the one compared against, so a fix is seen as a change).
        self._plan = plan
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        self.context.board.add_notices(
            "watching the plan", [f"{refused[0]}{more}; the tree keeps its last good state"]
        )

    def action_filter(self) -> None:
        """Open the filter box."""
        self.stories_pane.open_filter()

    def key_escape(self) -> None:
        """Escape in the filter clears and closes it."""
        self.stories_pane.close_filter()

    @on(StoriesPane.StoryChosen)
    def _story_chosen(self, event: StoriesPane.StoryChosen) -> None:
        self.select_story(event.story)

    def select_story(self, story: Story) -> None:
        """Preview ``story`` (its additions and mode start afresh)."""
        if self.story is not None and story.id == self.story.id:
            return
        self.story = story

    def watch_story(self, story: Story | None) -> None:
        """A new story: reset the per-story choices and compose."""
        self._composer.forget_delta()
        # Set without watchers: the story change composes once, below.
        self.set_reactive(MainScreen.selection, replace(self.selection, additional_files=()))
        self.stories_pane.current = story.id if story else None
        if story is not None and self.catalog is not None:
            opening, self._opening = self._opening, None
            if opening is not None and opening.story_id != story.id:
                opening = None
            self.phases.follow(story, self.catalog, opening)

    # ---------------------------------------------------------------- preview

    def variant_of(self, phase: str) -> str:
        """The variant ``phase`` runs in: the user's choice, else the workspace default."""
        return self.phases.choice.variant_of(phase)

    def current_request(self) -> PromptRequest | None:
        """The request the preview shows, from the screen's state."""
        if self.story is None:
            return None
        request = self.phases.choice.request(self.story.id, self.phase, self.mode, self.selection)
        return replace(request, delivery=self.delivery)

    def action_toggle_delivery(self) -> None:
        """``L``: layered or cache-aware delivery, for the preview and the runs."""
        self.delivery = "cache-aware" if self.delivery == "layered" else "layered"
        self.notify(f"delivery: {self.delivery}", timeout=2)
        self.request_compose()

    @work(group="cache", exit_on_error=False, description="Cache")
    async def _measure_cache(self) -> None:
        # Composing every phase of the sequence takes far longer than the preview: the row is
        # measured once the preview has rested, in one thread at a time (a thread cannot be
        # stopped, and measures piling up beside the next toggle's compose slow it down).
        # One worker follows the latest prompt until it has measured it, so no measure is
        # ever cancelled half-way.
        deck = self.context
        try:
            while True:
                wanted = self._cache_request
                await asyncio.sleep(CACHE_ROW_DELAY_SECONDS)
                if wanted is None or wanted is not self._cache_request:
                    continue
                # Imported once the preview has rested, not with the first frame.
                from promptdeck.core.cost import cache_row

                line = await asyncio.to_thread(
                    cache_row, deck.workspace, wanted, deck.agent, deck.counter
                )
                if wanted is self._cache_request:
                    self.preview.cache_line = line
                    return
        finally:
            self._cache_measuring = False

    def request_compose(self, *, story_changed: bool = False) -> None:
        """Recompose the preview (debounced when changes come in a burst)."""
        request = self.current_request()
        if request is None or self.catalog is None:
            return
        delay = self._composer.request(self.prompt, story_changed=story_changed)
        self._compose_preview(request, self.catalog, delay)

    @work(exclusive=True, group="compose", exit_on_error=False, description="Composing")
    async def _compose_preview(
        self, request: PromptRequest, catalog: StoryCatalog, delay: float
    ) -> None:
        # A newer request cancels this worker while it waits: that is the debounce.
        deck = self.context
        try:
            await self._composer.show(
                deck.workspace, catalog, request, deck.counter, delay, self._show_prompt
            )
        except PromptdeckError as exc:
            self._show_error(str(exc))

    def _show_prompt(self, prompt: ComposedPrompt, counted: bool, delta: str) -> None:
        # The header shows the instructions and rules in force for the prompt on screen.
        self.query_one(WorkspaceHeader).info = header_info(self.context, prompt)
        self.preview.delta = delta
        self.preview.counted = counted
        request = prompt.request
        self.preview.why = self.phases.choice.why_shown(request.phase, request.mode)
        self.preview.prompt = prompt
        if counted:
            measured = self._cache_request
            request = prompt.request
            if measured is None or not _same_cache_row(measured, request):
                # The row of another state is never left standing beside this one.
                self.preview.cache_line = ""
            self._cache_request = request
            if not self._cache_measuring:
                self._cache_measuring = True
                self._measure_cache()
            # After the frame that shows the prompt: the fit room and the clients' rules files
            # are no part of it.
            self.call_after_refresh(self._measure_cut_lines, prompt)

    @work(thread=True, exclusive=True, group="cut-lines", exit_on_error=False, description="Cuts")
    def _measure_cut_lines(self, prompt: ComposedPrompt) -> None:
        # The clients' rules files are read (guarded, bounded): off the UI loop, only the
        # latest prompt's. The fit room loads here, after the first frame.
        from promptdeck.core.fit import cut_lines

        lines = tuple(cut_lines(prompt, self.context.workspace.root))
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(setattr, self.preview, "cut_lines", lines)

    def _show_error(self, message: str) -> None:
        self.preview.error = message

    @on(PreviewPane.TextChosen)
    def _text_chosen(self, event: PreviewPane.TextChosen) -> None:
        from .text_view import TextViewScreen

        self.app.push_screen(TextViewScreen(event.title, event.text, event.subtitle))

    # ---------------------------------------------------------------- inclusion

    def _change_selection(self, selection: Selection) -> None:
        self.selection = selection
        self.request_compose()

    def action_toggle_project_context(self) -> None:
        """``p``: project context on/off."""
        self._change_selection(
            replace(self.selection, project_context=not self.selection.project_context)
        )

    def action_toggle_discovery(self) -> None:
        """``d``: discovery files on/off."""
        self._change_selection(replace(self.selection, discovery=not self.selection.discovery))

    def action_toggle_tech_spec(self) -> None:
        """``t``: tech-spec files on/off."""
        self._change_selection(replace(self.selection, tech_spec=not self.selection.tech_spec))

    def action_add_file(self) -> None:
        """``a``: pick a file of the project and add it."""
        from .file_picker import FilePickerScreen

        def chosen(path: str | None) -> None:
            added = self.selection.additional_files
            if path and path not in added:
                self._change_selection(replace(self.selection, additional_files=(*added, path)))

        self.app.push_screen(FilePickerScreen(self.context.workspace), chosen)

    def action_remove_file(self) -> None:
        """``x``: remove the added file under the cursor in the files table, else the last."""
        added = self.selection.additional_files
        if not added:
            self.notify("no added files to remove", severity="warning")
            return
        target = self.preview.added_file_to_remove(added)
        self._change_selection(
            replace(self.selection, additional_files=tuple(p for p in added if p != target))
        )

    def action_toggle_rules_layer(self) -> None:
        """``R``: leave Layer-0B (the workspace rules) out, or put it back; remembered per
        story, like a file choice."""
        prompt = self.prompt
        if prompt is None:
            self.notify("the prompt is still being composed", severity="warning")
            return
        layer = next(item for item in prompt.layers if item.layer_id == RULES_LAYER)
        if layer.missing and not layer.left_out:
            self.notify("there are no workspace rules to leave out", severity="warning")
            return
        from promptdeck.core.injection import toggle_layer_remembered

        try:
            toggle_layer_remembered(self.context.workspace.root, prompt.story.id, RULES_LAYER)
        except OSError as exc:
            self.notify(f"the choice could not be remembered: {exc}", severity="error")
            return
        back = "back in" if layer.left_out else "left out"
        self.notify(f"{RULES_LAYER} (workspace rules): {back}", timeout=3)
        self.request_compose()

    def action_toggle_file(self) -> None:
        """``space``: leave out the file under the cursor, or take it in; remembered per story.
        On the Layer-0B row of the layers table, the workspace rules (as ``R``)."""
        layer = self.preview.layer_under_cursor
        if isinstance(self.focused, LayersTable) and layer is not None:
            if layer.layer_id == RULES_LAYER:
                self.action_toggle_rules_layer()
            else:
                self.notify(f"{layer.layer_id} is required: it stays in", severity="warning")
            return
        row = self.preview.file_under_cursor
        if row is None or self.story is None or self.prompt is None:
            self.notify("no file under the cursor", severity="warning")
            return
        if row.own_story_file and row.included:
            self.notify(f"{row.path} is the story's own file: it stays in", severity="warning")
            return
        from promptdeck.core.injection import toggle_remembered

        try:
            toggle_remembered(
                self.context.workspace.root, self.prompt.story.id, row.path, row.included
            )
        except OSError as exc:
            self.notify(f"the choice could not be remembered: {exc}", severity="error")
            return
        self.request_compose()

    def action_fit(self) -> None:
        """``f``: the fewest files to leave out so the prompt fits its budget (or the
        injection its error line), and where the clients cut or warn."""
        if self.prompt is None:
            self.notify("the prompt is still being composed", severity="warning")
            return
        self._fit(self.prompt)

    @work(exclusive=True, group="fit", exit_on_error=False, description="Fitting")
    async def _fit(self, prompt: ComposedPrompt) -> None:
        from promptdeck.core.fit import cut_lines, default_fit

        from .text_view import TextViewScreen

        workspace, counter = self.context.workspace, self.context.counter
        answer = await asyncio.to_thread(default_fit, workspace, prompt, counter)
        lines = await asyncio.to_thread(cut_lines, prompt, workspace.root)
        text = "\n".join(
            [
                *answer.lines(),
                "",
                "Where the clients cut or warn:",
                *(
                    f"{'✖' if cut.over else '·'} {cut.client} {cut.name}: {cut.says}"
                    for cut in lines
                ),
            ]
        )
        self.app.push_screen(TextViewScreen("Fit and cut lines", text, "f: fit"))

    def action_capture(self) -> None:
        """``C``: run the real client once offline on the previewed prompt and show the whole
        request it sends, part by part."""
        if self.prompt is None:
            self.notify("the prompt is still being composed", severity="warning")
            return
        from .capture_view import CaptureScreen, capture_client

        client = capture_client(self.context.agent)

        def closed(capture: Capture | None) -> None:
            if capture is not None:
                self._show_kept_capture(capture)

        self.app.push_screen(CaptureScreen(self.context, self.prompt, client), closed)

    def action_attach_image(self) -> None:
        """``i``: pick an image of the project to send with the next run (again: detach)."""
        from .file_picker import FilePickerScreen

        def chosen(path: str | None) -> None:
            if path:
                self.runs.toggle_image(path)

        self.app.push_screen(FilePickerScreen(self.context.workspace), chosen)

    # ---------------------------------------------------------------- phase, mode, variant

    def action_previous_phase(self) -> None:
        """``[``: the previous phase."""
        self.phases.phase = PHASES[(PHASES.index(self.phase) - 1) % len(PHASES)]

    def action_next_phase(self) -> None:
        """``]``: the next phase."""
        self.phases.phase = PHASES[(PHASES.index(self.phase) + 1) % len(PHASES)]

    def action_toggle_mode(self) -> None:
        """``m``: create ↔ optimize."""
        self.phases.mode = MODES[(MODES.index(self.mode) + 1) % len(MODES)]

    @on(PhasesPane.Changed)
    def _phases_changed(self, event: PhasesPane.Changed) -> None:
        self._show_view_bar()
        shown, self._opening_shown = self._opening_shown, None
        if shown is not None and shown == self.current_request():
            return  # the flow opened where the first prompt was composed: it is on screen
        self.request_compose(story_changed=event.followed)

    def action_toggle_variant(self) -> None:
        """``v``: the selected phase's standard ↔ party variant (seed 002's party mode)."""
        variant = self.phases.choice.toggle_variant(self.phase)
        if variant is None:
            from promptdeck.core.prompt import PARTY_PHASES

            party = ", ".join(PARTY_PHASES)
            message = f"the {self.phase} phase has no party variant (party phases: {party})"
            self.notify(message, severity="warning")
            return
        self.notify(f"{self.phase}: {variant} variant", timeout=3)
        self.request_compose()

    # ---------------------------------------------------------------- runs

    def action_run_phase(self) -> None:
        """``r``: confirm, then run the selected phase."""
        request = self.current_request()
        if request is None or self.runs.refuse_if_running():
            return
        self.runs.plan(request, self.catalog)

    def action_run_suggested(self) -> None:
        """``n``: confirm, then run the phase the flow suggests."""
        story = self.story
        if story is None or self.runs.refuse_if_running():
            return
        suggestion = self.phases.choice.suggestion
        if suggestion is None:
            self.notify(self.phases.choice.why_nothing_suggested(), severity="warning")
            return
        if (self.phase, self.mode) != (suggestion.phase, suggestion.mode):
            self.phases.select(suggestion.phase, suggestion.mode)
            self._show_view_bar()
            self.request_compose()
        # The flow's own request: it carries the retry reason and the failure.
        request = self.phases.choice.request(story.id, self.phase, self.mode, self.selection)
        self.runs.plan(request, self.catalog, why=suggestion.why)

    @on(PhasePanel.RunFinished)
    def _run_finished(self, event: PhasePanel.RunFinished) -> None:
        self.runs.finished(event.result)
        self.phases.status_kept = True
        self.phases.running = None
        self.refresh_bindings()
        # The run changed files and records: reload the stories, then (in that order, so the
        # preview settles once and the same way every time) follow the flow to what is next.
        self._finished_pending = event.result
        self._load_catalog(follow_flow=True, finished=event.result)

    def _run_started(self) -> None:
        self.phases.status_kept = False
        self.phases.running = self.runs.running
        self.refresh_bindings()
        self._show_view_bar()
        if self.has_class("-narrow") and self.view == "all":
            self.view = "phases"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``c`` is offered (in the footer, the palette and as a key) only while a phase runs."""
        if action == "cancel_run":
            return self.runs.running is not None
        return True

    def action_cancel_run(self) -> None:
        """``c``: cancel the running phase (SIGINT, then SIGTERM, then SIGKILL)."""
        self.runs.cancel()

    def action_quit(self) -> None:
        """``q``: quit; while a phase runs, ask first and cancel it cleanly."""
        self.runs.quit()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker that failed with an unexpected error says so instead of vanishing."""
        report_failure(self, event)

    # ---------------------------------------------------------------- other screens

    def action_history(self) -> None:
        """``h``: the runs of this workspace."""
        from .run_history import RunHistoryScreen

        self.app.push_screen(RunHistoryScreen(self.context))

    def selected_file(self) -> str:
        """The project file the selection points at (relative to the root), or one line saying
        why there is none: the files table's row when it has the focus, the layer's source
        when the layers table has it, else the story's own file."""
        focused = self.focused
        story = self.story
        if isinstance(focused, FilesTable) and self.preview.file_under_cursor is not None:
            item = self.preview.file_under_cursor
            if item.status == "outside-project":
                return f"! {item.path} lies outside the project: not opened"
            return item.path
        if isinstance(focused, LayersTable) and self.preview.layer_under_cursor is not None:
            layer = self.preview.layer_under_cursor
            if layer.source and self._project_file(layer.source):
                return layer.source
            return (
                f"! {layer.layer_id} comes from {layer.source or 'no file'}, not a project file "
                "(a template is overridden by a copy in .promptdeck/templates/)"
            )
        if story is None:
            return "! no story selected"
        if story.path is None:
            return f"! story {story.id} has no file of its own"
        return story.path

    def _project_file(self, relpath: str) -> bool:
        workspace = self.context.workspace
        path = workspace.path(relpath)
        return workspace.contains(path) and path.is_file()

    def action_open_in_editor(self) -> None:
        """``o``: the selected file in ``$EDITOR``; the app resumes on the same story."""
        target = self.selected_file()
        if target.startswith("! "):
            self.notify(target[2:], severity="warning")
            return
        from promptdeck.core.project import editor_argv

        workspace = self.context.workspace
        argv = editor_argv(workspace.path(target), root=workspace.root)
        if isinstance(argv, str):
            self.notify(argv, severity="warning")
            return
        problem = self._run_editor(argv)
        if problem:
            self.notify(problem, severity="warning")

    def _run_editor(self, argv: list[str]) -> str | None:
        # The editor owns the terminal while it runs: the app is suspended, not racing it.
        # Where the app cannot suspend (no real terminal: a test, a web session), the editor
        # still gets the file, with no terminal of its own.
        name = Path(argv[0]).name
        try:
            try:
                with self.app.suspend():
                    code = subprocess.run(argv, check=False).returncode
            except SuspendNotSupported:
                code = subprocess.run(
                    argv, check=False, stdin=subprocess.DEVNULL, capture_output=True
                ).returncode
        except OSError as exc:
            return f"the editor {name} could not start: {exc.strerror or exc}"
        if code != 0:
            return f"the editor {name} exited with status {code}"
        return None

    def copy_choices(self) -> list[tuple[str, str]]:
        """What ``y`` offers now, as (choice, label)."""
        choices: list[tuple[str, str]] = []
        target = self.selected_file()
        if not target.startswith("! "):
            choices.append(("path", f"file path   {target}"))
        layer = self.preview.layer_under_cursor
        if layer is not None:
            choices.append(("layer", f"layer text  {layer.layer_id} · {layer.title}"))
        prompt = self.prompt
        if prompt is not None:
            choices.append(("user", f"user message ({len(prompt.user.encode()):,} bytes)"))
            choices.append(("system", f"system prompt ({prompt.system_meter.bytes:,} bytes)"))
        return choices

    def action_copy(self) -> None:
        """``y``: a menu — the file path, a layer's text, the user message, the system prompt."""
        from .copy_menu import CopyMenuScreen

        choices = self.copy_choices()
        if not choices:
            self.notify("the prompt is still being composed", severity="warning")
            return
        self.app.push_screen(CopyMenuScreen(choices), self.copy_choice)

    def copy_choice(self, choice: str | None) -> None:
        """Copy what ``choice`` names (an id from :meth:`copy_choices`)."""
        prompt = self.prompt
        if choice == "path":
            target = self.selected_file()
            self.preview.copy(target, f"path {target}")
        elif choice == "layer" and self.preview.layer_under_cursor is not None:
            layer = self.preview.layer_under_cursor
            self.preview.copy(layer.content, f"{layer.layer_id} text ({layer.bytes:,} bytes)")
        elif choice == "user" and prompt is not None:
            self.preview.copy(prompt.user, f"user message ({len(prompt.user.encode()):,} bytes)")
        elif choice == "system" and prompt is not None:
            self.preview.copy(prompt.system, f"system prompt ({prompt.system_meter.bytes:,} bytes)")

    def action_epic_plan(self) -> None:
        """``E``: the forecast of the selected story's epic (``plan --epic``'s rows)."""
        from .epic_plan import EpicPlanScreen

        if self.story is None:
            self.notify("select a story first", severity="warning")
            return
        self.app.push_screen(EpicPlanScreen(self.context, self.story.group))

    def action_export(self) -> None:
        """``e``: write the composed prompt files to a folder."""
        from .export import ExportScreen

        if self.prompt is not None:
            self.app.push_screen(ExportScreen(self.context.workspace, self.prompt))

    def action_composition(self) -> None:
        """``b``: the composition tab; pressed there, it switches tokens and bytes."""
        if self.view in ("stories", "phases"):
            # The chart lives in the preview: show it.
            self.view = "all"
        self.preview.toggle_composition()

    def action_prompt_diff(self) -> None:
        """``D``: the prompt about to be sent against the last run's of this phase."""
        if self.prompt is None or self.story is None:
            self.notify("the prompt is still being composed", severity="warning")
            return
        self.preview.compare_with_last_run(self.prompt)

    def action_notices(self) -> None:
        """``w``: every notice of the session."""
        from .notices import NoticesScreen

        self.app.push_screen(NoticesScreen(self.context.board.notices))
        # Read once: the same notes stay quiet at the next start, until they change.
        self.context.board.acknowledge_notices()

    def action_help(self) -> None:
        """``?``: every key, as the user's keymap made them."""
        from .help import HelpScreen, as_bound_now

        active = (active.binding for active in self.active_bindings.values())
        self.app.push_screen(HelpScreen(as_bound_now(MAIN_BINDINGS, active)))


def _same_cache_row(one: PromptRequest, other: PromptRequest) -> bool:
    """The cache row of ``one`` holds for ``other`` too: the same story, inclusion, delivery
    and phase (the row composes the phase sequence from these alone)."""
    return (one.story_id, one.selection, one.delivery, one.phase) == (
        other.story_id,
        other.selection,
        other.delivery,
        other.phase,
    )


def _result_within(composing: Future[ComposedPrompt], seconds: float) -> ComposedPrompt | None:
    """The compose's prompt if it lands within ``seconds``; None if it is slower or failed (the
    preview's own compose then takes it over and reports a failure)."""
    try:
        return composing.result(timeout=seconds)
    except Exception:  # FutureTimeout, or the compose's own error
        return None
