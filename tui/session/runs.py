"""The session's runs, apart from the main screen's layout: plan → confirm → start → end,
cancel, and quitting while a phase runs.

:class:`SessionRuns` holds the run state (the handle, what runs, how the last run ended, the
images attached to the next ones) and takes each step: the blocking ones (composing the plan,
starting the agent, waiting for a cancelled run before quitting) in thread workers its host
starts, the questions through its host (the screen's dialogs). The panel shows the run; the
screen is told when one starts and handles the panel's ``RunFinished``. Neither the host nor
the panel is a type of this floor: both are the protocols below, so that the controller can
be driven in a test without a screen.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from promptdeck.core.errors import PromptdeckError
from promptdeck.core.lean_dataclass import dataclass
from promptdeck.core.prompt import ComposedPrompt, PromptRequest
from promptdeck.core.stories import StoryCatalog
from promptdeck.core.terminal import printable_line
from promptdeck.core.vocabulary import SUCCESS

from ..context import DeckContext
from ..workers import WorkerHost

if TYPE_CHECKING:
    from promptdeck.core.injection import Selection
    from promptdeck.core.project import ImageFile
    from promptdeck.core.records import RunResult
    from promptdeck.core.run import PlannedRun, RunEvent, RunHandle, RunPlan

    from .run_confirmation import Confirmation
    from .story_phases import PhaseChoice

# The run's preparation is imported by the step that needs it: the first frame shows none of
# it (tests/tui/test_app_imports.py).

QUIT_WAIT_SECONDS = 15.0
"""How long quitting waits for a cancelled phase to stop before leaving anyway."""


class RunHost(WorkerHost, Protocol):
    """What the runs need of the screen that hosts them: workers, the UI thread, toasts and
    the two questions."""

    def notify(self, message: str, *, severity: str = ..., timeout: float | None = ...) -> None:
        """Tell the user ``message`` in a toast."""

    def ask_start(self, plan: RunPlan, answered: Callable[[bool | None], None]) -> None:
        """Show the run's plan and ask whether to start it."""

    def ask_quit(self, running: str, answered: Callable[[bool | None], None]) -> None:
        """Ask whether to quit while ``running`` runs."""

    def tell_quit_question(self, outcome: str) -> None:
        """The run ended with ``outcome``: an open quit question says so."""

    def exit(self) -> None:
        """Leave the app."""


class RunPanel(Protocol):
    """What the runs need of the panel that shows them."""

    def forget_feed(self) -> None:
        """Drop the last run's output before a new run."""

    def listen(self, event: RunEvent) -> None:
        """Take one event of the running phase (from the run's thread)."""

    def begin_run(self, status: str) -> None:
        """A run has started: show ``status``."""

    def show_status(self, text: str, tone: str = "") -> None:
        """Show ``text`` as the run's status."""


class SessionRuns:
    """One phase run at a time, from the question to the end.

    Args:
        host: the workers, toasts and questions of the screen (its worker-failure handler
            reports a step that fails unexpectedly).
        deck: the session.
        panel: the phase panel that shows the run.
        started: called on the UI thread once a run has started.
        failed: called with the message when a step fails with a promptdeck error.
    """

    def __init__(
        self,
        host: RunHost,
        deck: DeckContext,
        panel: RunPanel,
        *,
        started: Callable[[], None],
        failed: Callable[[str], None],
    ) -> None:
        self._host = host
        self._deck = deck
        self._panel = panel
        self._started = started
        self._failed = failed
        self.handle: RunHandle | None = None
        """The phase running now, if any."""
        self.running: tuple[str, str] | None = None
        """(story id, phase) of the running phase."""
        self.last_result: RunResult | None = None
        """How the last run of this session ended."""
        self.images: tuple[ImageFile, ...] = ()
        """Images sent with the next runs' messages (``i`` attaches and detaches)."""

    def note(self) -> str:
        """A few words on the session's run: ``dev running``, ``dev success`` once it has
        ended, ``""`` before any."""
        if self.running is not None:
            return f"{self.running[1]} running"
        if self.last_result is not None:
            return f"{self.last_result.phase} {self.last_result.outcome}"
        return ""

    def _worker(self, step: Callable[[], None], group: str, description: str) -> None:
        self._host.worker(step, group, description)

    def _on_ui(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        self._host.on_ui(callback, *args, **kwargs)

    # ---------------------------------------------------------------- plan, confirm, start

    def refuse_if_running(self) -> bool:
        """True (and the user told why) when a phase runs already."""
        if self.running is None:
            return False
        story, phase = self.running
        self._host.notify(f"{phase} of {story} is running: cancel it first (c)", severity="warning")
        return True

    def plan(self, request: PromptRequest, catalog: StoryCatalog | None, why: str = "") -> None:
        """Prepare ``request``'s run off the UI thread, then ask before starting it
        (``why``: the flow's reason for the phase, shown in the confirmation)."""
        self._worker(partial(self._plan, request, catalog, why), "plan", "Preparing the run")

    def _plan(self, request: PromptRequest, catalog: StoryCatalog | None, why: str = "") -> None:
        from .run_confirmation import prepare_confirmation

        try:
            confirmation = prepare_confirmation(self._deck, catalog, request, self.images, why)
        except PromptdeckError as exc:
            self._on_ui(self._failed, str(exc))
            return
        for notice, severity in confirmation.notices:
            self._on_ui(self._host.notify, notice, severity=severity, timeout=8)
        self._on_ui(self._confirm, confirmation)

    def _confirm(self, confirmation: Confirmation) -> None:
        from promptdeck.core.run import discard_plan

        plan, planned = confirmation.plan, confirmation.planned

        def answered(start: bool | None) -> None:
            if start and not plan.blocked:
                self._panel.forget_feed()
                # A second Start on a plan listing the config's choices was the user's trust.
                trust = bool(plan.untrusted)
                self._worker(partial(self._start, planned, trust), "start", "Starting the run")
            else:
                discard_plan(planned)

        self._host.ask_start(plan, answered)

    def _start(self, planned: PlannedRun, trust: bool = False) -> None:
        from promptdeck.core.run import discard_plan, start_run

        deck = self._deck
        try:
            if trust:
                from promptdeck.core.project import trust_config

                trust_config(deck.workspace)
            handle = start_run(
                deck.workspace,
                planned.prompt,
                agent=deck.agent,
                listener=self._panel.listen,
                use_git=deck.use_git,
                images=self.images,
                prepared=planned.prepared,
            )
        except PromptdeckError as exc:
            discard_plan(planned)
            self._on_ui(self._failed, str(exc))
            return
        self._on_ui(self._run_started, handle, planned.prompt)

    def _run_started(self, handle: RunHandle, prompt: ComposedPrompt) -> None:
        self.handle = handle
        self.running = (prompt.story.id, prompt.request.phase)
        self.last_result = None
        label = self._deck.run_label(handle.run_id)
        from promptdeck.core.agent_names import agent_label

        agent = agent_label(self._deck.agent)
        self._panel.begin_run(f"{prompt.request.phase} running · {agent} {label}")
        self._started()

    def finished(self, result: RunResult) -> None:
        """The run has ended: keep how, tell an open quit question, and leave its warnings
        on the notice board."""
        self.handle = None
        self.running = None
        self.last_result = result
        self._host.tell_quit_question(result.outcome)
        if result.outcome in ("status-failed", "scope-violated"):
            # The phase's work is done but the story's status is not: say it where it is seen.
            self._host.notify(printable_line(result.message), severity="error", timeout=10)
        messages = list(result.warnings)
        if result.message and result.outcome != SUCCESS:
            messages.insert(0, result.message)
        self._deck.board.add_notices(
            f"run {result.story_id} {result.phase} #{result.attempt}", messages
        )

    # ---------------------------------------------------------------- cancel, quit

    def cancel(self) -> None:
        """Cancel the running phase (SIGINT, then SIGTERM, then SIGKILL)."""
        handle = self.handle
        if handle is None:
            self._host.notify("no phase is running", severity="warning")
            return
        handle.cancel()
        self._panel.show_status("cancelling…", "running")

    def quit(self) -> None:
        """Quit; while a phase runs, ask first and cancel it cleanly."""
        host = self._host
        if self.handle is None:
            host.exit()
            return

        def answered(quit_now: bool | None) -> None:
            if quit_now and self.handle is None:
                # The run ended while the question was open: nothing to cancel.
                host.exit()
            elif quit_now:
                self._panel.show_status("cancelling before quitting…", "running")
                self._worker(self._cancel_and_exit, "quit", "Cancelling before quitting")

        story, phase = self.running or ("", "a phase")
        host.ask_quit(f"{phase} of {story}", answered)

    def _cancel_and_exit(self) -> None:
        handle = self.handle
        if handle is not None:
            handle.cancel()
            with contextlib.suppress(TimeoutError):
                handle.wait(QUIT_WAIT_SECONDS)
        self._on_ui(self._host.exit)

    # ---------------------------------------------------------------- images

    def toggle_image(self, path: str) -> None:
        """Attach the image at ``path`` to the next runs, or detach it if it is attached."""
        kept = tuple(image for image in self.images if image.path != path)
        if len(kept) < len(self.images):
            self.images = kept
            self._host.notify(f"image detached: {path}")
            return
        from promptdeck.core.project import check_image

        try:
            image = check_image(self._deck.workspace, path)
        except PromptdeckError as exc:
            self._host.notify(str(exc), severity="error", timeout=8)
            return
        self.images = (*self.images, image)
        from promptdeck.core.run import describe_image

        self._host.notify(f"image attached: {describe_image(image)}")


@dataclass(frozen=True)
class SuggestedRun:
    """What ``n`` runs: the flow's suggested phase, its request and why.

    Attributes:
        phase: the phase suggested.
        mode: its mode.
        request: the flow's own request (it carries the retry reason and the failure).
        why: the flow's reason, shown in the confirmation.
        moved: the phase on screen was another one: the screen moves to this one first.
    """

    phase: str
    mode: str
    request: PromptRequest
    why: str
    moved: bool


def suggested_run(
    choice: PhaseChoice, story_id: str, shown: tuple[str, str], selection: Selection
) -> SuggestedRun | str:
    """The run ``n`` starts for ``story_id`` (``shown``: the phase and mode on screen), or one
    line saying why the flow suggests none."""
    suggestion = choice.suggestion
    if suggestion is None:
        return choice.why_nothing_suggested()
    target = (suggestion.phase, suggestion.mode)
    request = choice.request(story_id, suggestion.phase, suggestion.mode, selection)
    return SuggestedRun(*target, request, suggestion.why, moved=shown != target)
