"""The main screen: Stories (left), Preview (centre), Phases (right).

The screen routes. It holds what makes the request — the story, what is included — and the
view; each region is a widget of its own, fed by reactives and telling the screen what the user
did by messages (:class:`~..widgets.stories_pane.StoriesPane`,
:class:`~..widgets.preview_pane.PreviewPane`, :class:`~..widgets.phases_pane.PhasesPane`). The
rest is in plain units: :class:`~..preview_composer.PreviewComposer` (debounce, delta, the two
compose passes) and :class:`~..session_runs.SessionRuns` (plan, confirm, start, cancel, quit).
Core does the work.
"""

from __future__ import annotations

from dataclasses import replace
from typing import ClassVar

from promptdeck.core.catalog import load_catalog, where_stories_come_from
from promptdeck.core.composer import MODES
from promptdeck.core.errors import PromptdeckError
from promptdeck.core.injection import Selection
from promptdeck.core.load_notes import group_notes
from promptdeck.core.party import PARTY_PHASES
from promptdeck.core.phases import PHASE_NAMES
from promptdeck.core.prompt import ComposedPrompt, PromptRequest
from promptdeck.core.runner import RunResult
from promptdeck.core.stories import Story, StoryCatalog
from textual import on, work
from textual.app import ComposeResult
from textual.binding import BindingType
from textual.containers import Horizontal
from textual.reactive import reactive, var
from textual.screen import Screen
from textual.worker import Worker

from ..bindings import FOOTER_PRIORITY, MAIN_BINDINGS
from ..context import DeckContext
from ..preview_composer import PreviewComposer
from ..session_runs import SessionRuns
from ..widgets.key_footer import KeyFooter
from ..widgets.phase_panel import PhasePanel
from ..widgets.phases_pane import PhasesPane
from ..widgets.preview_pane import PreviewPane
from ..widgets.stories_pane import StoriesPane
from ..widgets.view_bar import ViewBar, ViewState, shown_regions
from ..widgets.workspace_header import WorkspaceHeader, header_info
from ..workers import report_failure
from .export import ExportScreen
from .file_picker import FilePickerScreen
from .help import HelpScreen, as_bound_now
from .notices import NoticesScreen
from .run_history import RunHistoryScreen
from .text_view import TextViewScreen

NARROW_WIDTH = 130
"""Below this many columns the phase region folds away unless asked for (key 3)."""

PHASES = PHASE_NAMES
VIEWS = ("all", "stories", "preview", "phases")


class MainScreen(Screen[None]):
    """Pick a story, see its prompt, change what is included, run its phases."""

    CSS_PATH = "main.tcss"
    BINDINGS: ClassVar[list[BindingType]] = list(MAIN_BINDINGS)
    AUTO_FOCUS = "#story-tree"

    story: reactive[Story | None] = reactive(None, init=False)
    """The story previewed."""
    selection: var[Selection] = var(Selection(), init=False)
    """What the injection includes beyond the story's own files."""
    view: reactive[str] = reactive("all", init=False)
    """Which regions show: all, or one of stories, preview, phases."""

    def __init__(self, context: DeckContext) -> None:
        super().__init__()
        self.context = context
        """The session this screen works in."""
        self.catalog: StoryCatalog | None = None
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
        self.runs = SessionRuns(
            self, context, panel, started=self._run_started, failed=self._show_error
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

    def on_mount(self) -> None:
        """Show the header at once and load the catalog off the UI loop."""
        self.query_one(WorkspaceHeader).info = header_info(self.context)
        self.on_resize()
        self._load_catalog()

    def on_resize(self) -> None:
        """Fold the phase region away on narrow terminals."""
        self.set_class(self.size.width < NARROW_WIDTH, "-narrow")
        self._show_view_bar()

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
    def _load_catalog(self, follow_flow: bool = False) -> None:
        try:
            catalog = load_catalog(self.context.workspace)
        except PromptdeckError as exc:
            self.app.call_from_thread(self._show_error, str(exc))
            return
        self.app.call_from_thread(self._catalog_loaded, catalog, follow_flow)

    def _catalog_loaded(self, catalog: StoryCatalog, follow_flow: bool = False) -> None:
        reload = self.catalog is not None
        self.catalog = catalog
        current = self.story.id if self.story else None
        kept = next((s for s in catalog.stories if s.id == current), None)
        chosen = kept or (catalog.stories[0] if catalog.stories else None)
        # The cursor's story first: the tree is rebuilt with the cursor on it.
        self.stories_pane.current = chosen.id if chosen else None
        self.stories_pane.unreadable = catalog.unreadable
        self.stories_pane.stories = catalog.stories
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
            self.story = chosen

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
            self.phases.follow(story, self.catalog)

    # ---------------------------------------------------------------- preview

    def variant_of(self, phase: str) -> str:
        """The variant ``phase`` runs in: the user's choice, else the workspace default."""
        return self.phases.choice.variant_of(phase)

    def current_request(self) -> PromptRequest | None:
        """The request the preview shows, from the screen's state."""
        if self.story is None:
            return None
        return self.phases.choice.request(self.story.id, self.phase, self.mode, self.selection)

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
        self.preview.prompt = prompt

    def _show_error(self, message: str) -> None:
        self.preview.error = message

    @on(PreviewPane.TextChosen)
    def _text_chosen(self, event: PreviewPane.TextChosen) -> None:
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

    def action_attach_image(self) -> None:
        """``i``: pick an image of the project to send with the next run (again: detach)."""

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
        self.request_compose(story_changed=event.followed)

    def action_toggle_variant(self) -> None:
        """``v``: the selected phase's standard ↔ party variant (seed 002's party mode)."""
        variant = self.phases.choice.toggle_variant(self.phase)
        if variant is None:
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
        self.runs.plan(request, self.catalog)

    @on(PhasePanel.RunFinished)
    def _run_finished(self, event: PhasePanel.RunFinished) -> None:
        self.runs.finished(event.result)
        self.phases.status_kept = True
        self.phases.running = None
        self.refresh_bindings()
        # The run changed files and records: reload the stories, then (in that order, so the
        # preview settles once and the same way every time) follow the flow to what is next.
        self._load_catalog(follow_flow=True)

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
        self.app.push_screen(RunHistoryScreen(self.context))

    def action_copy_system(self) -> None:
        """``y``: the exact system prompt to the clipboard."""
        self.preview.copy_system()

    def action_export(self) -> None:
        """``e``: write the composed prompt files to a folder."""
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
        self.app.push_screen(NoticesScreen(self.context.board.notices))

    def action_help(self) -> None:
        """``?``: every key, as the user's keymap made them."""
        active = (active.binding for active in self.active_bindings.values())
        self.app.push_screen(HelpScreen(as_bound_now(MAIN_BINDINGS, active)))
