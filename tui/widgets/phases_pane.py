"""The Phases region: which phase of the selected story is chosen, in which mode, and the flow
it follows; under the title, the phase panel shows the phases and the run.

Data comes down: the screen sets :attr:`PhasesPane.phase` and :attr:`PhasesPane.mode` (the
user's keys), :attr:`~PhasesPane.running`, :attr:`~PhasesPane.status_kept` and
:attr:`~PhasesPane.solo`, and hands over the story previewed with :meth:`PhasesPane.follow`;
the pane reads that story's flow from the run records off the UI thread and selects the phase
it suggests. A change of what the preview should show — the phase or the mode, chosen or
followed — goes up as :class:`PhasesPane.Changed`.
"""

from __future__ import annotations

from promptdeck.core.layers import MODES
from promptdeck.core.phases import PHASE_NAMES
from promptdeck.core.run import StoryFlow
from promptdeck.core.stories import Story, StoryCatalog
from textual import on, work
from textual.app import ComposeResult
from textual.message import Message
from textual.reactive import var
from textual.widgets import Static
from textual.worker import Worker

from ..context import DeckContext
from ..session.story_phases import FlowReading, PhaseChoice, phases_title, read_flow
from ..workers import report_failure
from .containers import Column
from .phase_panel import PhaseList, PhasePanel
from .region_title import RegionTitle


class PhasesPane(Column):
    """The title (whose phases, which one, which mode) over the phase panel.

    Args:
        deck: the session (the workspace whose run records hold the flow).
        panel: the phase panel shown under the title (the run control feeds it as well).
        id: the widget id.
    """

    DEFAULT_CSS = """
    PhasesPane {
        border-left: tall $panel;
        & > PhasePanel { height: 1fr; }
    }
    """

    phase: var[str] = var("dev", init=False)
    """The phase previewed and run by ``r``."""
    mode: var[str] = var("create", init=False)
    """``create`` or ``optimize``."""
    running: var[tuple[str, str] | None] = var(None, init=False)
    """(story id, phase) of the phase running now. When a run starts its row shows it; when
    it ends the rows wait for the flow read after it."""
    status_kept: var[bool] = var(False, init=False)
    """True once a run has ended: the status line keeps its outcome instead of the flow's
    suggestion."""
    solo: var[bool] = var(False, init=False)
    """The region is alone on screen: the title names the story in full."""

    class Changed(Message):
        """The phase or the mode changed: the preview shows another request."""

        def __init__(self, followed: bool = False) -> None:
            super().__init__()
            self.followed = followed
            """The story's flow was just read and followed (the preview starts afresh)."""

    def __init__(self, deck: DeckContext, panel: PhasePanel, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._deck = deck
        self.panel = panel
        """The phases, the run's status, the context gauge and the log."""
        self.choice = PhaseChoice(deck.workspace.config, deck.open_phase)
        """The story's flow and the variant chosen per phase."""
        self._story: Story | None = None

    @property
    def flow(self) -> StoryFlow | None:
        """The selected story's phase states and suggestion, once read."""
        return self.choice.flow

    def compose(self) -> ComposeResult:
        """The title over the panel."""
        yield RegionTitle("Phases", id="phases-title", markup=False)
        yield self.panel

    def on_mount(self) -> None:
        """Every phase pending until a story's flow is read."""
        self.panel.show_phases(self.choice.rows(), self.phase)

    # ---------------------------------------------------------------- data down

    def follow(
        self, story: Story, catalog: StoryCatalog, reading: FlowReading | None = None
    ) -> None:
        """Read ``story``'s flow off the UI thread, then select the phase it suggests (unless
        a phase runs). Another story than before starts in create mode, its flow unread.
        ``reading``: the flow, already read (the app's start reads it with the catalog)."""
        if self._story is None or self._story.id != story.id:
            self.choice.reading = None
            # Set without watchers: the flow read posts the change, once.
            self.set_reactive(PhasesPane.mode, "create")
        self._story = story
        self._show_title()
        if reading is not None:
            self._flow_read(reading)
        else:
            self._read_flow(story, catalog)

    def select(self, phase: str, mode: str) -> None:
        """Select ``phase`` in ``mode`` without posting :class:`Changed` (the screen that asks
        recomposes on its own)."""
        self.set_reactive(PhasesPane.phase, phase)
        self.set_reactive(PhasesPane.mode, mode)
        self._show()

    def step_phase(self, step: int) -> None:
        """Move ``step`` phases on (back, when negative), round the list."""
        here = PHASE_NAMES.index(self.phase)
        self.phase = PHASE_NAMES[(here + step) % len(PHASE_NAMES)]

    def toggle_mode(self) -> None:
        """create ↔ optimize."""
        self.mode = MODES[(MODES.index(self.mode) + 1) % len(MODES)]

    def watch_phase(self) -> None:
        """A new phase: show it selected; the preview follows."""
        self._show()
        self.post_message(self.Changed())

    def watch_mode(self) -> None:
        """A new mode: the preview follows."""
        self._show_title()
        self.post_message(self.Changed())

    def watch_running(self, running: tuple[str, str] | None) -> None:
        """A run has started: its row shows it."""
        if running is not None:
            self._show()

    def watch_solo(self) -> None:
        """Alone on screen or not: the title says as much as it needs to."""
        self._show_title()

    def focus_log(self) -> None:
        """Put the focus on the run's log (the region shown alone starts there)."""
        self.panel.focus_log()

    def _show(self) -> None:
        story, running = self._story, self.running
        phase_running = None
        if running is not None and story is not None and running[0] == story.id:
            phase_running = running[1]
        self.panel.show_phases(self.choice.rows(phase_running), self.phase)
        self._show_title()
        if running is None and not self.status_kept:
            self.panel.show_status(self.choice.note())

    def _show_title(self) -> None:
        title = phases_title(self._story, self.phase, self.mode, solo=self.solo)
        self.query_one("#phases-title", Static).update(title, layout=False)

    # ---------------------------------------------------------------- the flow

    @work(
        thread=True,
        exclusive=True,
        group="flow",
        exit_on_error=False,
        description="Reading the phase flow",
    )
    def _read_flow(self, story: Story, catalog: StoryCatalog) -> None:
        reading = read_flow(self._deck.workspace, catalog, story, self.choice.open_phase)
        self.app.call_from_thread(self._flow_read, reading)

    def _flow_read(self, reading: FlowReading) -> None:
        if self._story is None or self._story.id != reading.story_id:
            return
        self.choice.reading = reading
        opening = reading.opening
        if self.running is None:
            # Open where the user most likely wants to be: the next phase of unfinished work,
            # the last run's of done work, or the user's own setting.
            self.set_reactive(PhasesPane.phase, opening.phase)
            self.set_reactive(PhasesPane.mode, opening.mode)
        self._show()
        self.post_message(self.Changed(followed=True))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A flow read that failed with an unexpected error says so instead of vanishing."""
        report_failure(self, event)

    # ---------------------------------------------------------------- events up

    @on(PhaseList.PhaseChosen)
    def _phase_clicked(self, event: PhaseList.PhaseChosen) -> None:
        event.stop()
        self.phase = event.phase
