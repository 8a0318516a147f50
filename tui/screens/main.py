"""The main screen: Stories (left), Preview (centre), Phases (right).

Everything shown comes from the core calls the CLI makes: ``load_catalog`` for the tree,
``compose_prompt`` for the preview (first without tokens so bytes show at once, then with
them), the flow for phase states, the runner for runs. The screen owns the workflow; each
region is a widget of its own.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from collections.abc import Callable
from dataclasses import replace
from typing import Any, ClassVar

from promptdeck.core.agents.base import agent_label
from promptdeck.core.budget import check_budget
from promptdeck.core.catalog import load_catalog, where_stories_come_from
from promptdeck.core.composer import MODES
from promptdeck.core.errors import PromptdeckError
from promptdeck.core.flow import StoryFlow, flow_for, last_failure
from promptdeck.core.images import ImageFile, check_image
from promptdeck.core.injection import InjectedFile, Selection
from promptdeck.core.party import PARTY_PHASES, default_variant
from promptdeck.core.phases import PHASE_NAMES
from promptdeck.core.prompt import ComposedPrompt, FailureInfo, PromptRequest, compose_prompt
from promptdeck.core.records import list_runs
from promptdeck.core.rules import find_rules_path, rules_health
from promptdeck.core.run_plan import PlannedRun, discard_plan, plan_run
from promptdeck.core.runner import RunEvent, RunHandle, RunResult, start_run
from promptdeck.core.size_advice import SizeOption, size_options
from promptdeck.core.stories import Story, StoryCatalog
from promptdeck.core.textfiles import read_text_file
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.dom import DOMNode
from textual.reactive import reactive, var
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Input, Static, TabbedContent, TabPane
from textual.worker import Worker, WorkerState

from ..context import DeckContext
from ..format import (
    human_bytes,
    printable,
    printable_line,
)
from ..preview_composer import PreviewComposer
from ..story_filter import filter_stories
from ..widgets.composition_chart import CompositionChart
from ..widgets.files_table import FilesTable
from ..widgets.key_footer import KeyFooter
from ..widgets.layers_table import LayersTable
from ..widgets.meter_line import MeterLine, MeterReading
from ..widgets.phase_panel import PhaseList, PhasePanel, PhaseRow
from ..widgets.story_tree import StoryTree
from ..widgets.text_viewer import TextViewer
from ..widgets.view_bar import ViewBar, ViewState
from ..widgets.workspace_header import HeaderInfo, WorkspaceHeader
from .confirm_run import ConfirmRunScreen, RunPlan
from .text_view import TextViewScreen

FOLLOW_CURSOR_SECONDS = 0.15
"""How long the tree cursor rests on a story before the preview follows it."""

NARROW_WIDTH = 130
"""Below this many columns the phase region folds away unless asked for (key 3)."""

PHASES = PHASE_NAMES
QUIT_WAIT_SECONDS = 15.0
"""How long quitting waits for a cancelled phase to stop before leaving anyway."""
VIEWS = ("all", "stories", "preview", "phases")


def _binding(
    key: str, action: str, description: str, tooltip: str, *, name: str = "", **extra: Any
) -> Binding:
    return Binding(key, action, description, id=f"main.{name or action}", tooltip=tooltip, **extra)


PHASE_GROUP = Binding.Group("Phase")
VIEW_GROUP = Binding.Group("View")
INCLUDE_GROUP = Binding.Group("Include")

MAIN_BINDINGS: list[Binding] = [
    _binding("r", "run_phase", "Run", "Run the selected phase (asks first)"),
    _binding("n", "run_suggested", "Next", "Run the suggested next phase (asks first)"),
    _binding("c", "cancel_run", "Cancel", "Cancel the running phase"),
    _binding("slash", "filter", "Filter", "Filter the story tree (Escape clears)", key_display="/"),
    _binding(
        "p",
        "toggle_project_context",
        "Project",
        "Include or leave out the project context",
        group=INCLUDE_GROUP,
    ),
    _binding(
        "d",
        "toggle_discovery",
        "Discovery",
        "Include or leave out discovery files",
        group=INCLUDE_GROUP,
    ),
    _binding(
        "t",
        "toggle_tech_spec",
        "Tech spec",
        "Include or leave out tech-spec files",
        group=INCLUDE_GROUP,
    ),
    _binding(
        "i",
        "attach_image",
        "Image",
        "Attach an image to the next run's message (again: detach it)",
    ),
    _binding(
        "left_square_bracket",
        "previous_phase",
        "Prev phase",
        "Select the previous phase",
        key_display="[",
        group=PHASE_GROUP,
    ),
    _binding(
        "right_square_bracket",
        "next_phase",
        "Next phase",
        "Select the next phase",
        key_display="]",
        group=PHASE_GROUP,
    ),
    _binding("m", "toggle_mode", "Mode", "Switch the mode between create and optimize"),
    _binding(
        "v",
        "toggle_variant",
        "Party",
        "Standard or party variant of the selected phase (kickoff, review, failure, retro)",
    ),
    _binding("a", "add_file", "Add file", "Add a file of the project to the injection"),
    _binding("x", "remove_file", "Remove file", "Remove the added file under the cursor (or last)"),
    _binding(
        "b",
        "composition",
        "Budget",
        "Show the composition of the system prompt (again: tokens ↔ bytes)",
    ),
    _binding(
        "D",
        "prompt_diff",
        "Diff",
        "What changed since the last run of this phase: the prompt now against the one it sent",
        key_display="D",
    ),
    _binding("y", "copy_system", "Copy", "Copy the system prompt to the clipboard"),
    _binding("e", "export", "Export", "Export the composed prompt files to a folder"),
    _binding("h", "history", "History", "Show the runs of this workspace"),
    _binding(
        "1",
        "view('stories')",
        "Stories",
        "Show only the stories (again: all regions)",
        name="view_stories",
        group=VIEW_GROUP,
    ),
    _binding(
        "2",
        "view('preview')",
        "Preview",
        "Show only the preview (again: all regions)",
        name="view_preview",
        group=VIEW_GROUP,
    ),
    _binding(
        "3",
        "view('phases')",
        "Phases",
        "Show only the phases (again: all regions)",
        name="view_phases",
        group=VIEW_GROUP,
    ),
    _binding("w", "notices", "Notices", "Read every notice of this session again"),
    _binding("question_mark", "help", "Help", "List every key", key_display="?"),
    _binding("q", "quit", "Quit", "Quit (asks first while a phase runs)"),
]

FOOTER_PRIORITY = (
    "main.run_phase",
    "main.run_suggested",
    "main.cancel_run",
    "main.help",
    "main.quit",
    "main.view_stories",
    "main.view_preview",
    "main.view_phases",
    "main.previous_phase",
    "main.next_phase",
    "main.history",
    "main.composition",
    "main.prompt_diff",
    "main.notices",
    "main.filter",
    "main.toggle_project_context",
    "main.toggle_discovery",
    "main.toggle_tech_spec",
    "main.toggle_mode",
    "main.copy_system",
    "main.export",
    "main.add_file",
    "main.remove_file",
    "app.command_palette",
)
"""The footer's order: the keys that act first, then the ones that find things, then the rest.
At 80 columns the first nine fit; wider terminals show more."""


def binding_ids(*owners: type[DOMNode]) -> set[str]:
    """The binding ids ``owners`` declare in their ``BINDINGS``."""
    ids: set[str] = set()
    for owner in owners:
        for binding in owner.BINDINGS:
            if isinstance(binding, Binding) and binding.id:
                ids.add(binding.id)
    return ids


def known_binding_ids() -> set[str]:
    """Every binding id of the screens a ``[keymap]`` may rebind: the main screen's and the
    dialogs' (the app adds its own)."""
    from .confirm_run import ConfirmRunScreen
    from .help import HelpScreen
    from .notices import NoticesScreen
    from .quit_confirm import QuitConfirmScreen
    from .text_view import TextViewScreen

    return binding_ids(
        MainScreen,
        ConfirmRunScreen,
        HelpScreen,
        NoticesScreen,
        QuitConfirmScreen,
        TextViewScreen,
    )


def _describe_image(image: ImageFile) -> str:
    return f"{image.path} ({image.media_type}, {human_bytes(image.bytes)})"


def injection_notices(events: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, str]]:
    """The injection's events (seed 000) as app notices: (text, severity)."""
    notices: list[tuple[str, str]] = []
    skipped = [p for name, p in events if name == "injection:skipped"]
    for name, payload in events:
        if name == "injection:warning":
            notices.append((f"injection: {payload.get('message', '')}", "warning"))
        elif name == "injection:empty":
            keys = ", ".join(payload.get("story_keys") or ())
            notices.append((f"injection: no file injected for {keys}", "warning"))
    if skipped:
        shown = "; ".join(
            f"{p.get('path')} ({p.get('reason') or p.get('status')})" for p in skipped
        )
        notices.append((f"injection: {len(skipped)} file(s) skipped: {shown}", "information"))
    return notices


class MainScreen(Screen[None]):
    """Pick a story, see its prompt, change what is included, run its phases."""

    CSS_PATH = "main.tcss"
    BINDINGS: ClassVar[list[BindingType]] = list(MAIN_BINDINGS)
    AUTO_FOCUS = "#story-tree"

    story: reactive[Story | None] = reactive(None, init=False)
    """The story previewed."""
    selection: var[Selection] = var(Selection(), init=False)
    """What the injection includes beyond the story's own files."""
    phase: var[str] = var("dev", init=False)
    """The phase previewed and run by ``r``."""
    mode: var[str] = var("create", init=False)
    """``create`` or ``optimize``."""
    view: reactive[str] = reactive("all", init=False)
    """Which regions show: all, or one of stories, preview, phases."""

    def __init__(self, context: DeckContext) -> None:
        super().__init__()
        self.context = context
        """The session this screen works in."""
        self.catalog: StoryCatalog | None = None
        self.prompt: ComposedPrompt | None = None
        """The prompt shown, once composed (tokens may still be uncounted)."""
        self.prompt_counted = False
        """True once :attr:`prompt` carries token counts."""
        self._composer = PreviewComposer()
        self.variants: dict[str, str] = {}
        """The variant chosen per phase (``v``); unset phases take ``[party]`` defaults."""
        self._filter_query = ""
        self.flow: StoryFlow | None = None
        """The selected story's phase states and suggestion, from the run records."""
        self._last_failure: FailureInfo | None = None
        self._attempts: dict[str, int] = {}
        """Attempts so far per phase of the selected story, from the run records."""
        self.run_handle: RunHandle | None = None
        """The phase running now, if any."""
        self.running: tuple[str, str] | None = None
        """(story id, phase) of the running phase."""
        self.images: tuple[ImageFile, ...] = ()
        """Images sent with the next runs' messages (``i`` attaches and detaches)."""
        self.last_result: RunResult | None = None
        """How the last run of this session ended."""
        self._follow_timer: Timer | None = None

    # ---------------------------------------------------------------- layout

    def compose(self) -> ComposeResult:
        """Header, the three regions, footer."""
        yield WorkspaceHeader(id="header")
        yield ViewBar(id="view-bar")
        with Horizontal(id="regions"):
            with Vertical(id="stories"):
                yield Static("Stories", classes="region-title", id="stories-title")
                yield Input(placeholder="filter stories…", id="story-filter")
                yield StoryTree(id="story-tree")
            with Vertical(id="preview"):
                yield Static("Preview", classes="region-title", id="preview-title", markup=False)
                with TabbedContent(id="preview-tabs", initial="tab-overview"):
                    with TabPane("Layers & files", id="tab-overview"):
                        yield LayersTable(id="layers-table")
                        yield FilesTable(id="files-table")
                    with TabPane("System", id="tab-system"):
                        yield TextViewer(id="system-text")
                    with TabPane("User", id="tab-user"):
                        yield TextViewer(id="user-text")
                    with TabPane("Messages", id="tab-messages"):
                        yield TextViewer(id="messages-text")
                    with (
                        TabPane("Composition", id="tab-composition"),
                        VerticalScroll(id="composition-scroll"),
                    ):
                        yield CompositionChart(id="composition-chart")
                yield Static("", id="preview-notes", markup=False)
                yield MeterLine(id="meter-line")
            with Vertical(id="phases"):
                yield Static("Phases", classes="region-title", id="phases-title", markup=False)
                yield PhasePanel(
                    context_window=self.context.workspace.config.agent_claude_context_window,
                    duration=self.context.duration,
                    id="phase-panel",
                )
        yield KeyFooter(FOOTER_PRIORITY, id="footer")

    def on_mount(self) -> None:
        """Show the header at once and load the catalog off the UI loop."""
        deck = self.context
        rules_path = find_rules_path(deck.workspace)[0]
        self.query_one(WorkspaceHeader).info = HeaderInfo(
            workspace=deck.workspace_label,
            encoding=deck.encoding,
            agent=agent_label(deck.agent),
            rules_path=rules_path,
            # Until a prompt is composed, say only whether the file is there.
            rules_status="found" if deck.workspace.path(rules_path).is_file() else "missing",
        )
        self.query_one("#story-filter", Input).display = False
        self._apply_width(self.size.width)
        self.query_one(PhasePanel).show_phases(
            [PhaseRow(name, "pending") for name in PHASES], self.phase
        )
        self._load_catalog()

    def on_resize(self) -> None:
        """Fold the phase region away on narrow terminals."""
        self._apply_width(self.size.width)

    def _apply_width(self, width: int) -> None:
        self.set_class(width < NARROW_WIDTH, "-narrow")
        self._show_view_bar()

    def shown_regions(self) -> tuple[str, ...]:
        """The regions on screen now: one in a solo view, two when narrow, else three."""
        if self.view != "all":
            return (self.view,)
        if self.has_class("-narrow"):
            return ("stories", "preview")
        return VIEWS[1:]

    def _show_view_bar(self) -> None:
        bar = self.query_one(ViewBar)
        shown = self.shown_regions()
        # The bar is there whenever a region is hidden: it says which and how to reach it.
        bar.display = len(shown) < len(VIEWS) - 1
        note = ""
        if self.running is not None:
            note = f"{self.running[1]} running"
        elif self.last_result is not None:
            note = f"{self.last_result.phase} {self.last_result.outcome}"
        elif self.flow is not None and self.flow.suggestion is not None:
            note = f"next {self.flow.suggestion.phase}"
        bar.state = ViewState(shown, note)

    @on(ViewBar.ViewChosen)
    def _view_chosen(self, event: ViewBar.ViewChosen) -> None:
        self.action_view(event.view)

    def watch_view(self, view: str) -> None:
        """Show one region, or all of them."""
        for name in VIEWS[1:]:
            self.set_class(view == name, f"-solo-{name}")
        self._show_view_bar()
        self._show_phases_title()
        target = {"stories": "#story-tree", "preview": "#layers-table", "phases": "#phase-log"}
        if view in target:
            self.query_one(target[view]).focus()

    # ---------------------------------------------------------------- catalog

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
        tree = self.query_one(StoryTree)
        current = self.story.id if self.story else None
        kept = next((s for s in catalog.stories if s.id == current), None)
        chosen = kept or (catalog.stories[0] if catalog.stories else None)
        shown = filter_stories(catalog.stories, self._filter_query)
        tree.show_stories(shown, chosen.id if chosen else None)
        if not reload:
            # One toast for them all; the notices screen (w) keeps each of them.
            self.context.board.add_notices("loading the stories", list(catalog.warnings))
        if chosen is None:
            self._show_empty()
            return
        if kept is not None:
            # Same story, fresh data (a run may have changed its file): keep the choices.
            self.set_reactive(MainScreen.story, kept)
            if follow_flow:
                self._load_flow(follow=True)
            else:
                self.request_compose()
        else:
            self.story = chosen

    # ---------------------------------------------------------------- stories

    def action_filter(self) -> None:
        """Open the filter box."""
        box = self.query_one("#story-filter", Input)
        box.display = True
        box.focus()

    @on(Input.Changed, "#story-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self._filter_query = event.value
        if self.catalog is None:
            return
        current = self.story.id if self.story else None
        self.query_one(StoryTree).show_stories(
            filter_stories(self.catalog.stories, event.value), current
        )

    @on(Input.Submitted, "#story-filter")
    def _filter_submitted(self) -> None:
        self.query_one(StoryTree).focus()

    def key_escape(self) -> None:
        """Escape in the filter clears and closes it."""
        box = self.query_one("#story-filter", Input)
        if box.display:
            box.value = ""
            box.display = False
            self.query_one(StoryTree).focus()

    @on(StoryTree.StorySelected)
    def _story_selected(self, event: StoryTree.StorySelected) -> None:
        self._stop_follow()
        self.select_story(event.story)

    @on(StoryTree.StoryHighlighted)
    def _story_highlighted(self, event: StoryTree.StoryHighlighted) -> None:
        # The preview follows the cursor, once it rests: holding a key down composes once.
        if self.story is not None and event.story.id == self.story.id:
            self._stop_follow()
            return
        self._stop_follow()
        story = event.story
        self._follow_timer = self.set_timer(
            FOLLOW_CURSOR_SECONDS, lambda: self.select_story(story), name="follow-cursor"
        )

    def _stop_follow(self) -> None:
        timer = self._follow_timer
        if timer is not None:
            timer.stop()
            self._follow_timer = None

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
        self.set_reactive(MainScreen.mode, "create")
        self.query_one(StoryTree).mark_current(story.id if story else None)
        self.flow = None
        self._last_failure = None
        self._load_flow(follow=True)

    # ---------------------------------------------------------------- preview

    def variant_of(self, phase: str) -> str:
        """The variant ``phase`` runs in: the user's choice, else the workspace default."""
        return self.variants.get(phase) or default_variant(self.context.workspace.config, phase)

    def current_request(self) -> PromptRequest | None:
        """The request the preview shows, from the screen's state."""
        if self.story is None:
            return None
        suggestion = self.flow.suggestion if self.flow else None
        variant = self.variant_of(self.phase)
        if suggestion is not None and (suggestion.phase, suggestion.mode) == (
            self.phase,
            self.mode,
        ):
            # What the flow suggests carries its retry reason and failure information.
            return replace(suggestion.request(self.story.id, self.selection), variant=variant)
        failure = self._last_failure if self.phase == "failure" else None
        return PromptRequest(
            story_id=self.story.id,
            phase=self.phase,
            mode=self.mode,
            selection=self.selection,
            failure=failure,
            variant=variant,
        )

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
        # A newer request cancels this worker while it sleeps: that is the debounce.
        if delay:
            await asyncio.sleep(delay)

        def show_quick(first: ComposedPrompt) -> None:
            self._show_header(first)
            self._show_prompt(first, counted=False)

        try:
            final = await self._composer.compose(
                self.context.workspace, catalog, request, self.context.counter, show_quick
            )
        except PromptdeckError as exc:
            self._show_error(str(exc))
            return
        self._show_header(final)
        self._show_prompt(final, counted=True)

    def _show_header(self, prompt: ComposedPrompt) -> None:
        # The instructions and rules are read fresh at every compose: the header shows the
        # ones in force for the prompt on screen.
        deck = self.context
        rules = prompt.rules
        instructions = prompt.instructions
        self.query_one(WorkspaceHeader).info = HeaderInfo(
            workspace=deck.workspace_label,
            encoding=deck.encoding,
            agent=agent_label(deck.agent),
            instructions_sha256=instructions.sha256 if instructions else None,
            rules_path=rules.path if rules else find_rules_path(deck.workspace)[0],
            rules_sha256=rules.sha256 if rules else None,
            rules_status=rules.status if rules else "missing",
            rules_alert=rules_health(deck.workspace).alert,
        )

    def _show_empty(self) -> None:
        # Nothing to compose: say what promptdeck looks for and how to start, in place of the
        # preview, instead of composing forever.
        lines = where_stories_come_from(self.context.workspace)
        notes = self.query_one("#preview-notes", Static)
        notes.styles.height = "auto"
        notes.update(Text("\n".join(lines)))
        notes.add_class("-error")
        self.query_one(MeterLine).placeholder = "no story to compose"
        self.query_one("#preview-title", Static).update("Preview · no stories", layout=False)
        self.context.board.add_notices("loading the stories", [lines[0]])

    def _show_error(self, message: str) -> None:
        notes = self.query_one("#preview-notes", Static)
        notes.update(message, layout=False)
        notes.add_class("-error")
        self.context.board.add_notices("error", [message], "error")

    def _show_prompt(self, prompt: ComposedPrompt, *, counted: bool) -> None:
        self.prompt = prompt
        self.prompt_counted = counted
        system_bytes = prompt.system_meter.bytes
        self.query_one(LayersTable).show_layers(prompt.layers, system_bytes)
        injection = prompt.injection
        self.query_one(FilesTable).show_files(injection.files, injection.total.bytes)
        delta = self._composer.delta(prompt, counted=counted)
        self.query_one(MeterLine).reading = MeterReading(
            system_bytes=system_bytes,
            system_tokens=prompt.system_meter.tokens if counted else None,
            injection_bytes=injection.size_bytes,
            injection_text_bytes=injection.total.bytes,
            level=injection.level,
            warn_bytes=injection.warn_bytes,
            error_bytes=injection.error_bytes,
            encoding=injection.encoding,
            delta=delta,
        )
        notes = self.query_one("#preview-notes", Static)
        notes.remove_class("-error")
        # Fixed-height regions: repaint without a relayout of the screen.
        notes.update(self._notes_text(prompt), layout=False)
        party = " · party" if prompt.variant == "party" else ""
        self.query_one("#preview-title", Static).update(
            f"Preview · {prompt.story.id} · {self.phase} · {self.mode}{party}", layout=False
        )
        self._show_phases_title()
        self._refresh_active_text()

    def _notes_text(self, prompt: ComposedPrompt) -> str:
        selection = prompt.request.selection
        flags = [
            f"[p] project {'on' if selection.project_context else 'off'}",
            f"[d] discovery {'on' if selection.discovery else 'off'}",
            f"[t] tech-spec {'on' if selection.tech_spec else 'off'}",
        ]
        if selection.additional_files:
            flags.append(f"[a] +{len(selection.additional_files)} added")
        if prompt.variant == "party":
            flags.append("[v] party")
        budget = check_budget(prompt, self.context.workspace.config)
        if budget.budget:
            used = "…" if budget.tokens is None else f"{budget.tokens:,}"
            flags.append(f"budget {used}/{budget.budget:,} tok" + (" OVER" if budget.over else ""))
        warnings = (*prompt.warnings, *prompt.injection.warnings)
        line = "  ".join(flags)
        if warnings:
            shown = (printable_line(w) for w in dict.fromkeys(warnings))
            line += "\n⚠ " + "\n⚠ ".join(shown)
        return line

    @on(TabbedContent.TabActivated, "#preview-tabs")
    def _tab_activated(self) -> None:
        self._refresh_active_text()

    def _refresh_active_text(self) -> None:
        # Only the visible tab's text is loaded: a 150 KiB TextArea reload per toggle would
        # cost more than the compose itself.
        prompt = self.prompt
        if prompt is None:
            return
        active = self.query_one("#preview-tabs", TabbedContent).active
        if active == "tab-system":
            self.query_one("#system-text", TextViewer).show(printable(prompt.system))
        elif active == "tab-user":
            self.query_one("#user-text", TextViewer).show(printable(prompt.user))
        elif active == "tab-composition":
            self.query_one(CompositionChart).prompt = prompt
        elif active == "tab-messages":
            import json

            text = json.dumps(list(prompt.messages), indent=2, ensure_ascii=False)
            self.query_one("#messages-text", TextViewer).show(printable(text))

    @on(LayersTable.LayerChosen)
    def _layer_chosen(self, event: LayersTable.LayerChosen) -> None:
        layer = event.layer
        subtitle = f"{layer.source or 'no source'} · {layer.bytes:,} bytes"
        if layer.tokens is not None:
            subtitle += f" · {layer.tokens:,} tokens"
        subtitle += f" · sha256 {layer.sha256[:12]}"
        self.app.push_screen(
            TextViewScreen(
                printable_line(f"{layer.layer_id} · {layer.title}"),
                printable(layer.content),
                printable_line(subtitle),
            )
        )

    @on(FilesTable.FileChosen)
    def _file_chosen(self, event: FilesTable.FileChosen) -> None:
        self._open_file(event.file)

    @work(thread=True, group="file-view", exit_on_error=False, description="Reading a file")
    def _open_file(self, item: InjectedFile) -> None:
        # A read never runs on the UI thread: whatever the file is, q still quits.
        subtitle = f"{item.category} · {item.status} · {item.bytes:,} bytes · {item.reason}"
        workspace = self.context.workspace
        path = workspace.path(item.path)
        if item.status == "outside-project" or not workspace.contains(path):
            text = "(outside the project: not read)"
        else:
            content = read_text_file(
                path, root=workspace.root, limit=workspace.config.read_max_bytes
            )
            text = content if isinstance(content, str) else f"({content})"
        screen = TextViewScreen(
            printable_line(item.path), printable(text), printable_line(subtitle)
        )
        self.app.call_from_thread(self.app.push_screen, screen)

    # ---------------------------------------------------------------- toggles

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
            if path and path not in self.selection.additional_files:
                self._change_selection(
                    replace(
                        self.selection,
                        additional_files=(*self.selection.additional_files, path),
                    )
                )

        self.app.push_screen(FilePickerScreen(self.context.workspace), chosen)

    def action_attach_image(self) -> None:
        """``i``: pick an image of the project to send with the next run (again: detach)."""
        from .file_picker import FilePickerScreen

        def chosen(path: str | None) -> None:
            if not path:
                return
            kept = tuple(i for i in self.images if i.path != path)
            if len(kept) < len(self.images):
                self.images = kept
                self.notify(f"image detached: {path}")
                return
            try:
                image = check_image(self.context.workspace, path)
            except PromptdeckError as exc:
                self.notify(str(exc), severity="error", timeout=8)
                return
            self.images = (*self.images, image)
            self.notify(f"image attached: {_describe_image(image)}")

        self.app.push_screen(FilePickerScreen(self.context.workspace), chosen)

    def action_remove_file(self) -> None:
        """``x``: remove the added file under the cursor in the files table, else the last."""
        added = self.selection.additional_files
        if not added:
            self.notify("no added files to remove", severity="warning")
            return
        table = self.query_one(FilesTable)
        target = added[-1]
        if table.shown_files and 0 <= table.cursor_row < len(table.shown_files):
            row = table.shown_files[table.cursor_row]
            if row.category == "additional" and row.path in added:
                target = row.path
        self._change_selection(
            replace(self.selection, additional_files=tuple(p for p in added if p != target))
        )

    def action_previous_phase(self) -> None:
        """``[``: the previous phase."""
        self.phase = PHASES[(PHASES.index(self.phase) - 1) % len(PHASES)]

    def action_next_phase(self) -> None:
        """``]``: the next phase."""
        self.phase = PHASES[(PHASES.index(self.phase) + 1) % len(PHASES)]

    @on(PhaseList.PhaseChosen)
    def _phase_clicked(self, event: PhaseList.PhaseChosen) -> None:
        self.phase = event.phase

    def watch_phase(self) -> None:
        """A new phase: show it selected and recompose."""
        self._show_flow()
        self.request_compose()

    def action_toggle_mode(self) -> None:
        """``m``: create ↔ optimize."""
        self.mode = MODES[(MODES.index(self.mode) + 1) % len(MODES)]

    def watch_mode(self) -> None:
        """A new mode: recompose."""
        self.request_compose()

    def action_toggle_variant(self) -> None:
        """``v``: the selected phase's standard ↔ party variant (seed 002's party mode)."""
        if self.phase not in PARTY_PHASES:
            self.notify(
                f"the {self.phase} phase has no party variant "
                f"(party phases: {', '.join(PARTY_PHASES)})",
                severity="warning",
            )
            return
        current = self.variant_of(self.phase)
        self.variants[self.phase] = "standard" if current == "party" else "party"
        self.notify(f"{self.phase}: {self.variants[self.phase]} variant", timeout=3)
        self.request_compose()

    # ---------------------------------------------------------------- phases and runs

    @work(
        thread=True,
        exclusive=True,
        group="flow",
        exit_on_error=False,
        description="Reading the phase flow",
    )
    def _load_flow(self, follow: bool) -> None:
        story, catalog = self.story, self.catalog
        if story is None or catalog is None:
            return
        workspace = self.context.workspace
        # The run folders are read once and serve the flow, the attempts and the failure.
        runs = list_runs(workspace.root)
        flow = flow_for(workspace, catalog, story, runs)
        attempts: dict[str, int] = {}
        for run in runs:
            if run.story.lower() == story.id.lower():
                attempts[run.phase] = run.attempt
        failure = last_failure(workspace, story.id, runs)
        self.app.call_from_thread(self._flow_loaded, story.id, flow, attempts, failure, follow)

    def _flow_loaded(
        self,
        story_id: str,
        flow: StoryFlow,
        attempts: dict[str, int],
        failure: FailureInfo | None,
        follow: bool,
    ) -> None:
        if self.story is None or self.story.id != story_id:
            return
        self.flow = flow
        self._attempts = attempts
        self._last_failure = failure
        suggestion = flow.suggestion
        if follow and suggestion is not None and self.running is None:
            # Follow the flow: preview (and ``r`` runs) what comes next.
            self.set_reactive(MainScreen.phase, suggestion.phase)
            self.set_reactive(MainScreen.mode, suggestion.mode)
        self._show_flow()
        self.request_compose(story_changed=follow)

    def _show_flow(self) -> None:
        flow = self.flow
        attempts = self._attempts
        rows = []
        for name in PHASES:
            state = flow.states.get(name, "pending") if flow else "pending"
            attempt = attempts.get(name, 0)
            if flow and flow.suggestion and flow.suggestion.phase == name:
                attempt = flow.suggestion.attempt
            if self.running is not None and self.story and self.running == (self.story.id, name):
                state = "running"
            rows.append(PhaseRow(name, state, attempt))
        panel = self.query_one(PhasePanel)
        panel.show_phases(rows, self.phase)
        self._show_phases_title()
        self._show_view_bar()
        if self.running is None and self.last_result is None:
            note = ""
            if flow and flow.suggestion:
                note = f"next: {flow.suggestion.phase} — {flow.suggestion.why}"
            elif flow and flow.note:
                note = flow.note
            panel.show_status(note or "no run yet")

    def _show_phases_title(self) -> None:
        # Alone on screen the phases must still say whose they are.
        story = self.story
        title = "Phases"
        if story is not None:
            title += f" · {story.id} · {self.phase} · {self.mode}"
            if self.view == "phases":
                title += f" · {story.title}"
        self.query_one("#phases-title", Static).update(title, layout=False)

    def action_run_phase(self) -> None:
        """``r``: confirm, then run the selected phase."""
        request = self.current_request()
        if request is None or self._refuse_if_running():
            return
        self._plan_run(request)

    def action_run_suggested(self) -> None:
        """``n``: confirm, then run the phase the flow suggests."""
        if self.story is None or self._refuse_if_running():
            return
        suggestion = self.flow.suggestion if self.flow else None
        if suggestion is None:
            note = self.flow.note if self.flow else "the phase flow is still loading"
            self.notify(note or "nothing to suggest", severity="warning")
            return
        if (self.phase, self.mode) != (suggestion.phase, suggestion.mode):
            self.set_reactive(MainScreen.phase, suggestion.phase)
            self.set_reactive(MainScreen.mode, suggestion.mode)
            self._show_flow()
            self.request_compose()
        self._plan_run(
            replace(
                suggestion.request(self.story.id, self.selection),
                variant=self.variant_of(suggestion.phase),
            )
        )

    def _refuse_if_running(self) -> bool:
        if self.running is None:
            return False
        story, phase = self.running
        self.notify(f"{phase} of {story} is running: cancel it first (c)", severity="warning")
        return True

    @work(
        thread=True,
        exclusive=True,
        group="plan",
        exit_on_error=False,
        description="Preparing the run",
    )
    def _plan_run(self, request: PromptRequest) -> None:
        deck = self.context
        workspace, catalog = deck.workspace, self.catalog
        events: list[tuple[str, dict[str, Any]]] = []
        try:
            prompt = compose_prompt(
                workspace,
                catalog,
                request,
                counter=deck.counter,
                emit=lambda name, payload: events.append((name, payload)),
            )
            injection = prompt.injection
            options: tuple[SizeOption, ...] = ()
            notes: list[str] = list(prompt.warnings)
            if injection.level == "error":
                options = tuple(size_options(workspace, prompt.story, request.selection, injection))
            # The real run folder and launch: what the confirmation shows is what starts.
            planned = plan_run(workspace, prompt, agent=deck.agent, images=self.images)
            budget = check_budget(prompt, workspace.config)
        except PromptdeckError as exc:
            self.app.call_from_thread(self._show_error, str(exc))
            return
        folder = ""
        if planned.prepared is not None:
            folder = deck.workspace.relative(planned.prepared.record.dir)
        argv = planned.argv
        if deck.stable and planned.prepared is not None:
            # Snapshots and screencasts: the folder and interpreter differ on every machine.
            argv = stable_argv(
                argv,
                {
                    str(planned.prepared.record.dir): "<run-folder>",
                    str(workspace.root): "<workspace>",
                    sys.executable: "python",
                },
            )
            folder = "<run-folder>"
        plan = RunPlan(
            story_id=prompt.story.id,
            phase=request.phase,
            mode=request.mode,
            agent=agent_label(deck.agent),
            argv=argv,
            system_bytes=prompt.system_meter.bytes,
            system_tokens=prompt.system_meter.tokens,
            user_bytes=prompt.user_meter.bytes,
            injection_bytes=injection.size_bytes,
            level=injection.level,
            error_bytes=injection.error_bytes,
            largest=tuple(injection.largest()),
            options=options,
            notes=tuple(notes),
            attempt=planned.attempt,
            run_folder=folder,
            variant=prompt.variant,
            budget=budget.describe() if budget.budget else "",
            over_budget=budget.refusal() if budget.over else "",
            secrets=tuple(str(finding) for finding in injection.secrets),
            images=tuple(_describe_image(image) for image in self.images),
        )
        # A blocked plan's refusal already says all of it; otherwise the events are notices.
        for notice, severity in [] if plan.blocked else injection_notices(events):
            self.app.call_from_thread(self.notify, notice, severity=severity, timeout=8)
        self.app.call_from_thread(self._confirm_run, plan, planned)

    def _confirm_run(self, plan: RunPlan, planned: PlannedRun) -> None:
        def answered(start: bool | None) -> None:
            if start and not plan.blocked:
                panel = self.query_one(PhasePanel)
                panel.forget_feed()
                self._start_run(planned, panel.listen)
            else:
                discard_plan(planned)

        self.app.push_screen(ConfirmRunScreen(plan), answered)

    @work(
        thread=True,
        exclusive=True,
        group="start",
        exit_on_error=False,
        description="Starting the run",
    )
    def _start_run(self, planned: PlannedRun, listener: Callable[[RunEvent], None]) -> None:
        deck = self.context
        prompt = planned.prompt
        try:
            handle = start_run(
                deck.workspace,
                prompt,
                agent=deck.agent,
                listener=listener,
                use_git=deck.use_git,
                images=self.images,
                prepared=planned.prepared,
            )
        except PromptdeckError as exc:
            discard_plan(planned)
            self.app.call_from_thread(self._show_error, str(exc))
            return
        self.app.call_from_thread(self._run_started, handle, prompt)

    def _run_started(self, handle: RunHandle, prompt: ComposedPrompt) -> None:
        self.run_handle = handle
        self.running = (prompt.story.id, prompt.request.phase)
        self.last_result = None
        label = self.context.run_label(handle.run_id)
        agent = agent_label(self.context.agent)
        self.query_one(PhasePanel).begin_run(f"{prompt.request.phase} running · {agent} {label}")
        self._show_flow()
        if self.has_class("-narrow") and self.view == "all":
            self.view = "phases"

    @on(PhasePanel.RunFinished)
    def _run_finished_shown(self, event: PhasePanel.RunFinished) -> None:
        self._run_finished(event.result)

    def _run_finished(self, result: RunResult) -> None:
        self.run_handle = None
        self.running = None
        self.last_result = result
        from .quit_confirm import QuitConfirmScreen

        for screen in self.app.screen_stack:
            if isinstance(screen, QuitConfirmScreen):
                screen.run_finished(result.outcome)
        messages = list(result.warnings)
        if result.message and result.outcome != "success":
            messages.insert(0, result.message)
        self.context.board.add_notices(
            f"run {result.story_id} {result.phase} #{result.attempt}", messages
        )
        # The run changed files and records: reload the stories, then (in that order, so the
        # preview settles once and the same way every time) follow the flow to what is next.
        self._load_catalog(follow_flow=True)

    def action_cancel_run(self) -> None:
        """``c``: cancel the running phase (SIGINT, then SIGTERM, then SIGKILL)."""
        handle = self.run_handle
        if handle is None:
            self.notify("no phase is running", severity="warning")
            return
        handle.cancel()
        self.query_one(PhasePanel).show_status("cancelling…", "running")

    def action_quit(self) -> None:
        """``q``: quit; while a phase runs, ask first and cancel it cleanly."""
        if self.run_handle is None:
            self.app.exit()
            return
        from .quit_confirm import QuitConfirmScreen

        def answered(quit_now: bool | None) -> None:
            if quit_now and self.run_handle is None:
                # The run ended while the question was open: nothing to cancel.
                self.app.exit()
            elif quit_now:
                self.query_one(PhasePanel).show_status("cancelling before quitting…", "running")
                self._cancel_and_exit()

        story, phase = self.running or ("", "a phase")
        self.app.push_screen(QuitConfirmScreen(f"{phase} of {story}"), answered)

    @work(
        thread=True,
        exclusive=True,
        group="quit",
        exit_on_error=False,
        description="Cancelling before quitting",
    )
    def _cancel_and_exit(self) -> None:
        handle = self.run_handle
        if handle is not None:
            handle.cancel()
            with contextlib.suppress(TimeoutError):
                handle.wait(QUIT_WAIT_SECONDS)
        self.app.call_from_thread(self.app.exit)

    def action_history(self) -> None:
        """``h``: the runs of this workspace."""
        from .run_history import RunHistoryScreen

        self.app.push_screen(RunHistoryScreen(self.context))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A worker that failed with an unexpected error says so instead of vanishing."""
        if event.state == WorkerState.ERROR:
            error = event.worker.error
            self.notify(
                f"{event.worker.description or event.worker.name} failed: {error!r}",
                severity="error",
                timeout=15,
            )

    # ---------------------------------------------------------------- other actions

    def action_copy_system(self) -> None:
        """``y``: the exact system prompt to the clipboard."""
        if self.prompt is None:
            return
        from ..clipboard import copy_text

        reached, message = copy_text(
            self.prompt.system,
            self.app.copy_to_clipboard,
            f"system prompt ({self.prompt.system_meter.bytes:,} bytes)",
        )
        self.notify(message, severity="information" if reached else "warning", markup=False)

    def action_export(self) -> None:
        """``e``: write the composed prompt files to a folder."""
        if self.prompt is None:
            return
        from .export import ExportScreen

        self.app.push_screen(ExportScreen(self.context.workspace, self.prompt))

    def action_view(self, view: str) -> None:
        """``1`` ``2`` ``3``: show one region; the same key again shows them all."""
        self.view = "all" if self.view == view else view

    def action_composition(self) -> None:
        """``b``: the composition tab; pressed there, it switches tokens and bytes."""
        tabs = self.query_one("#preview-tabs", TabbedContent)
        chart = self.query_one(CompositionChart)
        if self.view in ("stories", "phases"):
            # The chart lives in the preview: show it.
            self.view = "all"
        if tabs.active == "tab-composition":
            chart.measure = "bytes" if chart.measure == "tokens" else "tokens"
        else:
            tabs.active = "tab-composition"
        self._refresh_active_text()

    def action_prompt_diff(self) -> None:
        """``D``: the prompt about to be sent against the last run's of this phase."""
        if self.prompt is None or self.story is None:
            self.notify("the prompt is still being composed", severity="warning")
            return
        self._show_prompt_diff(self.prompt)

    @work(
        thread=True,
        exclusive=True,
        group="diff",
        exit_on_error=False,
        description="Comparing with the last run",
    )
    def _show_prompt_diff(self, prompt: ComposedPrompt) -> None:
        from promptdeck.core.prompt_diff import (
            compare,
            diff_text,
            last_run_of,
            side_of_prompt,
            side_of_run,
        )

        story, phase = prompt.story.id, prompt.request.phase
        run = last_run_of(self.context.workspace.root, story, phase)
        if run is None:
            self.app.call_from_thread(
                self.notify, f"no earlier {phase} run of story {story} to compare with"
            )
            return
        try:
            diff = compare(side_of_run(run), side_of_prompt(prompt, "the prompt now"))
        except PromptdeckError as exc:
            self.app.call_from_thread(self._show_error, str(exc))
            return
        title = f"Diff · {story} · {phase} · {len(diff.changed)} of {len(diff.parts)} parts differ"
        text = "\n".join(diff_text(diff))
        self.app.call_from_thread(self.app.push_screen, TextViewScreen(title, text))

    def action_notices(self) -> None:
        """``w``: every notice of the session."""
        from .notices import NoticesScreen

        self.app.push_screen(NoticesScreen(self.context.board.notices))

    def action_help(self) -> None:
        """``?``: every key, as the user's keymap made them."""
        from .help import HelpScreen

        order = {binding.id: index for index, binding in enumerate(MAIN_BINDINGS)}
        # The active bindings carry the user's keymap (Textual applies it per lookup).
        current = [
            active.binding for active in self.active_bindings.values() if active.binding.id in order
        ]
        current.sort(key=lambda binding: order[binding.id])
        self.app.push_screen(HelpScreen(current))


def stable_argv(argv: tuple[str, ...], replacements: dict[str, str]) -> tuple[str, ...]:
    """``argv`` with machine-specific parts named instead (stable mode only)."""
    shown = []
    for word in argv:
        for old, new in replacements.items():
            word = word.replace(old, new)
        shown.append(word)
    return tuple(shown)
