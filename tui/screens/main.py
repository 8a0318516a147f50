"""The main screen: Stories (left), Preview (centre), Phases (right).

The screen wires: it lays out the three regions (each a widget fed by reactives, telling the
screen what the user did by messages), routes each key to a plain controller of
``tui/session/`` — the story shelf, the place kept, the preview composer, the inclusion
choices, the file actions, the views, the runs — and lays out what it answers. Core does the
work.
"""

from __future__ import annotations

from concurrent.futures import Future
from dataclasses import replace
from typing import TYPE_CHECKING, ClassVar

from promptdeck.core.errors import PromptdeckError
from promptdeck.core.injection import Selection
from promptdeck.core.plans import where_stories_come_from
from promptdeck.core.prompt import ComposedPrompt, PromptRequest
from promptdeck.core.stories import Story, StoryCatalog
from textual import events, on, work
from textual.app import ComposeResult, SuspendNotSupported
from textual.binding import BindingType
from textual.reactive import reactive, var
from textual.screen import Screen
from textual.worker import Worker

from .. import startup
from ..bindings import FOOTER_PRIORITY, MAIN_BINDINGS
from ..context import DeckContext
from ..session.file_actions import FileActions, Pointed
from ..session.inclusion import COMPOSING, Answer, InclusionChoices, Severity
from ..session.last_place import NOTICE_SOURCE, LastPlace, PlaceKeeper, load_last_place
from ..session.opening import OpeningHelper, opening_request
from ..session.preview_composer import PreviewComposer
from ..session.runs import SessionRuns, suggested_run
from ..session.story_shelf import PROMPT_WAIT_SECONDS, Loaded, StoryShelf
from ..widgets.containers import Row, SameEveryLine
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
from .main_dialogs import MainDialogs
from .screen_host import ScreenHost

if TYPE_CHECKING:
    from promptdeck.core.records import RunResult

    from ..session.story_phases import FlowReading

NARROW_WIDTH = 130
"""Below this many columns the phase region folds away unless asked for (key 3)."""
SHORT_HEIGHT = 30
"""Below this many rows the rows under the preview's tables fold, so its files show."""
PLAN_POLL_SECONDS = 1.0
"""How often the plan files are checked for changes made outside the app."""
OPENING_WAIT_SECONDS = 0.5
"""How long the screen waits, at start, for the catalog the opening helper reads beside it
before its first frame (the tree then reaches the screen in the first frame)."""
VIEWS = ("all", "stories", "preview", "phases")


class MainScreen(Screen[None], SameEveryLine):
    """Pick a story, see its prompt, change what is included, run its phases."""

    # Its stylesheet, main.tcss, is read with the app's (see PromptdeckApp.CSS_PATH).
    BINDINGS: ClassVar[list[BindingType]] = list(MAIN_BINDINGS)
    AUTO_FOCUS = "#story-tree"

    story: reactive[Story | None] = reactive(None, init=False)
    """The story previewed."""
    selection: var[Selection] = var(Selection(), init=False)
    """What the injection includes beyond the story's own files."""
    view: reactive[str] = reactive("all", init=False)
    """Which regions show: all, or one of stories, preview, phases."""
    delivery: var[str] = var("layered", init=False)
    """Where the layers go: ``layered`` or ``cache-aware`` (``L`` switches)."""

    def __init__(self, context: DeckContext, opening: OpeningHelper | None = None) -> None:
        super().__init__()
        self.context = context
        """The session this screen works in."""
        self._helper = opening  # the opening read beside the app's start (taken once)
        workspace = context.workspace
        self.set_reactive(MainScreen.delivery, workspace.config.delivery)
        place, note = load_last_place(workspace.root)
        self.shelf = StoryShelf(place, note)
        """The catalog and the story shown."""
        self._places = PlaceKeeper(workspace.root, kept=place)
        # The opening story's flow read with the catalog at start, and the request of the
        # first prompt shown with it (each used once).
        self._opening: FlowReading | None = None
        self._opening_shown: PromptRequest | None = None
        self._resumed = False
        self.preview = PreviewPane(context, id="preview")
        self._composer = PreviewComposer()
        self._inclusion = InclusionChoices(workspace.root)
        self._files = FileActions(workspace)
        self.stories_pane = StoriesPane(id="stories")
        panel = PhasePanel(
            context_window=workspace.config.agent_claude_context_window,
            duration=context.duration,
            id="phase-panel",
        )
        self.phases = PhasesPane(context, panel, id="phases")
        self.dialogs = MainDialogs(self, context)
        """The screens this one opens over itself."""
        host = ScreenHost(self)
        self.shelf.host(host, context, self._catalog_loaded, self._show_error)
        self.runs = SessionRuns(
            host, context, panel, started=self._run_started, failed=self._show_error
        )
        """The session's runs: plan, confirm, start, cancel, quit."""

    @property
    def catalog(self) -> StoryCatalog | None:
        """The stories, once read."""
        return self.shelf.catalog

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
        with Row(id="regions"):
            yield self.stories_pane
            yield self.preview
            yield self.phases
        yield KeyFooter(FOOTER_PRIORITY, id="footer")

    def on_screen_resume(self, event: events.ScreenResume) -> None:
        """The first showing keeps the styles the widgets took as they mounted (restyling them
        all again cost 90 ms of the first frame); later resumes restyle (a new theme)."""
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
            loaded = StoryShelf.from_helper(helper, PROMPT_WAIT_SECONDS)
            if loaded is not None:
                self._catalog_loaded(loaded)
                helper = None
        if helper is not None or self.catalog is None:
            self.shelf.load(helper=helper, opening=self._open_first)
        self.set_interval(PLAN_POLL_SECONDS, self.shelf.poll, name="plan-poll")
        # After the first frame: the capture room is no part of it.
        self.call_after_refresh(self.preview.load_kept_capture)

    def on_resize(self) -> None:
        """Fold the phase region away on narrow terminals."""
        self.set_class(self.size.width < NARROW_WIDTH, "-narrow")
        self.preview.short = self.size.height < SHORT_HEIGHT
        self._fit_stories()
        self._show_view_bar()

    def _fit_stories(self) -> None:
        shared = not self.has_class("-narrow") and self.view == "all"
        self.stories_pane.fit_width(self.size.width, shared=shared)

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
        self.preview.alone = view == "preview"
        if view == "stories":
            self.stories_pane.focus_tree()
        elif view == "preview":
            self.preview.focus_table()
        elif view == "phases":
            self.phases.focus_log()

    # ---------------------------------------------------------------- stories

    def _open_first(self, catalog: StoryCatalog) -> tuple[FlowReading, Future[ComposedPrompt]]:
        # Off the UI thread: the opening story's flow, and its prompt composed beside the tree
        # being built, so the preview's first frame does not wait for the tree's.
        deck = self.context
        reading, request = opening_request(
            deck.workspace, catalog, self.phases.choice.open_phase, self.delivery, self.shelf.place
        )
        return reading, self._composer.prepare(deck.workspace, catalog, request, deck.counter)

    def _catalog_loaded(self, loaded: Loaded) -> None:
        catalog = loaded.catalog
        shelved = self.shelf.shelve(loaded, self.story, self.stories_pane.flags)
        for source, lines in shelved.notices:
            self.context.board.add_notices(source, lines)
        chosen = shelved.chosen
        self.stories_pane.show_catalog(catalog, chosen.id if chosen else None, shelved.flags)
        self._fit_stories()
        if chosen is None:
            # Nothing to compose: the preview says what promptdeck looks for instead.
            self.preview.no_stories = tuple(where_stories_come_from(self.context.workspace))
        elif shelved.kept:
            # Same story, fresh data (a run may have changed its file): keep the choices.
            self.set_reactive(MainScreen.story, chosen)
            if loaded.follow_flow:
                self.phases.follow(chosen, catalog)
            else:
                self.request_compose()
        else:
            self._opening = loaded.opening
            self.story = chosen
            ready = loaded.ready
            if ready is not None and ready.request == self.current_request():
                # The opening prompt is composed already: shown in the tree's frame, and not
                # composed again for the phase the flow opened on (see _phases_changed).
                self._composer.drop_prepared()
                self._show_prompt(ready, True, "")
                self._opening_shown = ready.request

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
        if self.story is None or story.id != self.story.id:
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
        self._keep_place(request)
        if counted:
            self.preview.measure(prompt)

    def _keep_place(self, request: PromptRequest) -> None:
        place = LastPlace(request.story_id, request.phase, request.mode)
        problem = self._places.moved(place)
        if problem:
            self.context.board.add_notices(NOTICE_SOURCE, [problem])

    def _show_error(self, message: str) -> None:
        self.preview.error = message

    @on(PreviewPane.TextChosen)
    def _text_chosen(self, event: PreviewPane.TextChosen) -> None:
        self.dialogs.text(event.title, event.text, event.subtitle)

    # ---------------------------------------------------------------- inclusion

    def _answered(self, answer: Answer) -> None:
        """Lay out what a controller answered: the toast, the new selection, a recompose."""
        if answer.message:
            self.notify(answer.message, severity=answer.severity, timeout=answer.timeout)
        if answer.selection is not None:
            self.selection = answer.selection
        if answer.recompose:
            self.request_compose()

    def action_toggle_project_context(self) -> None:
        """``p``: project context on/off."""
        self._answered(self._inclusion.toggled(self.selection, "project_context"))

    def action_toggle_discovery(self) -> None:
        """``d``: discovery files on/off."""
        self._answered(self._inclusion.toggled(self.selection, "discovery"))

    def action_toggle_tech_spec(self) -> None:
        """``t``: tech-spec files on/off."""
        self._answered(self._inclusion.toggled(self.selection, "tech_spec"))

    def action_add_file(self) -> None:
        """``a``: pick a file of the project and add it."""
        self.dialogs.pick_file(
            lambda path: self._answered(self._inclusion.added(self.selection, path))
        )

    def action_remove_file(self) -> None:
        """``x``: remove the added file under the cursor in the files table, else the last."""
        added = self.selection.additional_files
        target = self.preview.added_file_to_remove(added) if added else None
        self._answered(self._inclusion.removed(self.selection, target))

    def action_toggle_rules_layer(self) -> None:
        """``R``: leave Layer-0B (the workspace rules) out, or put it back (per story)."""
        self._answered(self._inclusion.rules_layer(self.prompt))

    def action_toggle_file(self) -> None:
        """``space``: leave out the file under the cursor, or take it in (per story); on the
        layers table, the workspace rules (as ``R``)."""
        layer = self.preview.layer_under_cursor
        on_layers = isinstance(self.focused, LayersTable) and layer is not None
        row = self.preview.file_under_cursor if self.story is not None else None
        answer = self._inclusion.file_choice(self.prompt, row, layer if on_layers else None)
        self._answered(answer)

    # ---------------------------------------------------------------- views

    def _composed(self) -> ComposedPrompt | None:
        """The prompt shown; None, and the user told so, while it is being composed."""
        if self.prompt is None:
            self.notify(COMPOSING, severity="warning")
        return self.prompt

    def action_fit(self) -> None:
        """``f``: the fewest files to leave out so the prompt fits, and the clients' cuts."""
        if prompt := self._composed():
            self.dialogs.fit(prompt, self.preview.captured_window)

    def action_capture(self) -> None:
        """``C``: run the real client once offline on the prompt; show its whole request."""
        if prompt := self._composed():
            self.dialogs.capture(prompt, self.preview.show_capture)

    def action_attach_image(self) -> None:
        """``i``: pick an image of the project to send with the next run (again: detach)."""
        self.dialogs.pick_file(self.runs.toggle_image)

    def action_composition(self) -> None:
        """``b``: the composition tab; pressed there, it switches tokens and bytes."""
        if self.view in ("stories", "phases"):
            self.view = "all"  # the chart lives in the preview: show it
        self.preview.toggle_composition()

    def action_prompt_diff(self) -> None:
        """``D``: the prompt about to be sent against the last run's of this phase."""
        if prompt := self._composed():
            self.preview.compare_with_last_run(prompt)

    # ---------------------------------------------------------------- phase, mode, variant

    def action_previous_phase(self) -> None:
        """``[``: the previous phase."""
        self.phases.step_phase(-1)

    def action_next_phase(self) -> None:
        """``]``: the next phase."""
        self.phases.step_phase(1)

    def action_toggle_mode(self) -> None:
        """``m``: create ↔ optimize."""
        self.phases.toggle_mode()

    @on(PhasesPane.Changed)
    def _phases_changed(self, event: PhasesPane.Changed) -> None:
        self._show_view_bar()
        shown, self._opening_shown = self._opening_shown, None
        if shown is not None and shown == self.current_request():
            return  # the flow opened where the first prompt was composed: it is on screen
        self.request_compose(story_changed=event.followed)

    def action_toggle_variant(self) -> None:
        """``v``: the selected phase's standard ↔ party variant."""
        message, changed = self.phases.choice.variant_toggled(self.phase)
        severity: Severity = "information" if changed else "warning"
        self._answered(Answer(message, severity, changed, timeout=3 if changed else None))

    # ---------------------------------------------------------------- runs

    def action_run_phase(self) -> None:
        """``r``: confirm, then run the selected phase."""
        request = self.current_request()
        if request is not None and not self.runs.refuse_if_running():
            self.runs.plan(request, self.catalog)

    def action_run_suggested(self) -> None:
        """``n``: confirm, then run the phase the flow suggests."""
        story = self.story
        if story is None or self.runs.refuse_if_running():
            return
        step = suggested_run(self.phases.choice, story.id, (self.phase, self.mode), self.selection)
        if isinstance(step, str):
            self.notify(step, severity="warning")
            return
        if step.moved:
            self.phases.select(step.phase, step.mode)
            self._show_view_bar()
            self.request_compose()
        self.runs.plan(step.request, self.catalog, why=step.why)

    @on(PhasePanel.RunFinished)
    def _run_finished(self, event: PhasePanel.RunFinished) -> None:
        self.runs.finished(event.result)
        self.phases.status_kept = True
        self.phases.running = None
        self.refresh_bindings()
        # The run changed files and records: reload the stories, then (in that order, so the
        # preview settles once and the same way every time) follow the flow to what is next.
        self.shelf.finished_pending = event.result
        self.shelf.load(follow_flow=True, finished=event.result)

    def _run_started(self) -> None:
        self.phases.status_kept = False
        self.phases.running = self.runs.running
        self.refresh_bindings()
        self._show_view_bar()
        if self.has_class("-narrow") and self.view == "all":
            self.view = "phases"

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """``c`` is offered (in the footer, the palette and as a key) only while a phase runs."""
        return self.runs.running is not None if action == "cancel_run" else True

    def action_cancel_run(self) -> None:
        """``c``: cancel the running phase (SIGINT, then SIGTERM, then SIGKILL)."""
        self.runs.cancel()

    def action_quit(self) -> None:
        """``q``: quit; while a phase runs, ask first and cancel it cleanly."""
        self.runs.quit()

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker that failed with an unexpected error says so instead of vanishing."""
        report_failure(self, event)

    # ---------------------------------------------------------------- editor, copy, screens

    def _pointed(self) -> Pointed:
        """What the cursor is on: the row of the table that has the focus, else the story."""
        focused, preview = self.focused, self.preview
        file = preview.file_under_cursor if isinstance(focused, FilesTable) else None
        layer = preview.layer_under_cursor if isinstance(focused, LayersTable) else None
        return Pointed(self.story, file, layer)

    def selected_file(self) -> str:
        """The project file the selection points at, or one line (after ``! ``) saying why
        there is none."""
        return self._files.selected_file(self._pointed())

    def action_open_in_editor(self) -> None:
        """``o``: the selected file in ``$EDITOR``; the app resumes on the same story."""
        # The editor owns the terminal while it runs: the app is suspended, not racing it.
        target = self.selected_file()
        if problem := self._files.open_in_editor(target, self.app.suspend, SuspendNotSupported):
            self.notify(problem, severity="warning")

    def copy_choices(self) -> list[tuple[str, str]]:
        """What ``y`` offers now, as (choice, label)."""
        return self._files.copy_choices(
            self._pointed(), self.preview.layer_under_cursor, self.prompt
        )

    def action_copy(self) -> None:
        """``y``: a menu — the file path, a layer's text, the user message, the system prompt."""
        choices = self.copy_choices()
        if not choices:
            self.notify(COMPOSING, severity="warning")
            return
        self.dialogs.copy_menu(choices, self.copy_choice)

    def copy_choice(self, choice: str | None) -> None:
        """Copy what ``choice`` names (an id from :meth:`copy_choices`)."""
        layer = self.preview.layer_under_cursor
        copied = self._files.copied(choice, self._pointed(), layer, self.prompt)
        if copied is not None:
            self.preview.copy(copied.text, copied.what)

    def action_history(self) -> None:
        """``h``: the runs of this workspace."""
        self.dialogs.history()

    def action_epic_plan(self) -> None:
        """``E``: the forecast of the selected story's epic (``plan --epic``'s rows)."""
        if self.story is None:
            self.notify("select a story first", severity="warning")
            return
        self.dialogs.epic_plan(self.story.group)

    def action_export(self) -> None:
        """``e``: write the composed prompt files to a folder."""
        if self.prompt is not None:
            self.dialogs.export(self.prompt)

    def action_notices(self) -> None:
        """``w``: every notice of the session."""
        self.dialogs.notices()

    def action_help(self) -> None:
        """``?``: every key, as the user's keymap made them."""
        active = (active.binding for active in self.active_bindings.values())
        self.dialogs.help(MAIN_BINDINGS, active)
