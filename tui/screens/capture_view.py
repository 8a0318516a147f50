"""The capture view: the real client run once on the previewed prompt against a loopback
stand-in of its API, and the request it sent, part by part.

The work is core's (:func:`promptdeck.core.capture.capture_prompt`, the same call
``promptdeck capture`` makes); it runs in a thread worker, the screen shows a progress line
while the client runs, then the parts — or one line saying why there is no capture (the
client is missing, it hung, it sent nothing of promptdeck's: ``capture``'s exit 12). Escape
closes; a client still running is left to its bound (:data:`CAPTURE_TIMEOUT`).
"""

from __future__ import annotations

import threading
import time
from typing import ClassVar

from promptdeck.core.capture import (
    CAPTURE_TIMEOUT,
    CLIENTS,
    Capture,
    capture_prompt,
    capture_summary,
    remember_capture,
)
from promptdeck.core.errors import PromptdeckError
from promptdeck.core.prompt import ComposedPrompt
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Footer, Static
from textual.worker import get_current_worker

from ...core.terminal import printable_line
from ...core.units import human_bytes, human_tokens
from ..context import DeckContext
from ..widgets.capture_parts import CaptureParts, PartRow, PartsTable

PROGRESS_TICK_SECONDS = 1.0


def capture_client(agent: str) -> str:
    """The client a capture runs: the session's agent when capture knows it, else the first
    client capture knows (the replay simulation sends no request to capture)."""
    return agent if agent in CLIENTS else CLIENTS[0]


def part_flags(capture: Capture, name: str, note: str = "") -> tuple[str, ...]:
    """What to know about the part called ``name``: the text it repeats of an earlier part
    (``repeats CLAUDE.md (868 B)``), and the part's own note."""
    flags = [
        f"repeats {dup.first} ({human_bytes(dup.bytes)})"
        for dup in capture.duplicates
        if dup.second == name
    ]
    return (*flags, *([note] if note else []))


def parts_table(capture: Capture) -> PartsTable:
    """The rows the view shows for ``capture``, as shares of its model's window."""
    rows = tuple(
        PartRow(
            part.name,
            part.kind,
            part.bytes,
            None if part.kind == "envelope" else part.tokens,
            part_flags(capture, part.name, part.note),
        )
        for part in capture.parts
    )
    return PartsTable(rows, capture.window, capture.request.size)


class CaptureScreen(ModalScreen[Capture | None]):
    """The request one client sends for the previewed story and phase; dismissed with the
    capture (None when there is none), which is also kept for the meters.

    Args:
        deck: the session (workspace, token counter, agent).
        prompt: the prompt previewed: the capture sends exactly it.
        client: the client to run (``claude`` …).
        timeout: seconds the client may take before the capture stops.
    """

    DEFAULT_CSS = """
    CaptureScreen {
        align: center middle;
    }
    CaptureScreen > Vertical {
        width: 94%;
        height: auto;
        max-height: 92%;
        border: round $primary;
        background: $surface;
    }
    CaptureScreen #capture-title {
        height: auto;
        padding: 0 1;
        background: $panel;
        text-style: bold;
    }
    CaptureScreen #capture-status {
        height: auto;
        padding: 0 1;
    }
    CaptureScreen #capture-status.-failed {
        color: $error;
        text-style: bold;
    }
    CaptureScreen #capture-note {
        height: auto;
        padding: 0 1;
        color: $text-muted;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close", id="capture.close", tooltip="Close the capture"),
    ]

    def __init__(
        self,
        deck: DeckContext,
        prompt: ComposedPrompt,
        client: str,
        *,
        timeout: float = CAPTURE_TIMEOUT,
    ) -> None:
        super().__init__()
        self._deck = deck
        self._prompt = prompt
        self.client = client
        self._timeout = timeout
        self._started = 0.0
        self._ticker: Timer | None = None
        # Set when the view closes or the app quits: the client is killed at once instead of
        # holding the app's exit until its bound.
        self._stop = threading.Event()
        self.capture: Capture | None = None
        """The capture, once the client has answered."""
        self.failure = ""
        """Why there is no capture, once that is known."""

    @property
    def finished(self) -> bool:
        """True once the capture is shown or its failure is."""
        return self.capture is not None or bool(self.failure)

    def compose(self) -> ComposeResult:
        """Title, status line, the parts, a note, the footer."""
        prompt = self._prompt
        title = (
            f"Capture · {self.client} · story {printable_line(prompt.story.id)} · "
            f"{prompt.request.phase}"
        )
        with Vertical():
            yield Static(title, id="capture-title", markup=False)
            yield Static(self._progress(), id="capture-status", markup=False)
            yield CaptureParts(id="capture-parts")
            yield Static("", id="capture-note", markup=False)
        yield Footer()

    def on_mount(self) -> None:
        """Start the client and the progress line."""
        self._started = time.monotonic()
        self._ticker = self.set_interval(PROGRESS_TICK_SECONDS, self._tick, name="capture-tick")
        self._run_capture()

    def on_unmount(self) -> None:
        """The view is gone (closed, or the app quits): a client still running is stopped."""
        self._stop.set()

    def _progress(self) -> str:
        waited = time.monotonic() - self._started if self._started else 0.0
        return (
            f"running {self.client} once against 127.0.0.1 (a canned answer, nothing leaves "
            f"the machine)… {self._deck.duration(waited)} · stops after {self._timeout:.0f} s"
        )

    def _stop_ticking(self) -> None:
        if self._ticker is not None:
            self._ticker.stop()

    def _tick(self) -> None:
        if not self.finished:
            self.query_one("#capture-status", Static).update(self._progress())

    @work(thread=True, exclusive=True, group="capture", exit_on_error=False, description="Capture")
    def _run_capture(self) -> None:
        deck = self._deck
        try:
            capture = capture_prompt(
                deck.workspace,
                self._prompt,
                deck.counter,
                client=self.client,
                timeout=self._timeout,
                stop=self._stop,
            )
        except PromptdeckError as exc:
            if not get_current_worker().is_cancelled:
                self.app.call_from_thread(self._show_failure, str(exc))
            return
        # Kept per client and version, as the CLI keeps it: the meters show its overhead.
        kept = remember_capture(capture)
        if kept is not None:
            self.app.call_from_thread(self._deck.board.add_notices, "capture", [kept])
        if not get_current_worker().is_cancelled:
            self.app.call_from_thread(self._show_capture, capture)

    def _show_failure(self, message: str) -> None:
        self.failure = message
        self._stop_ticking()
        status = self.query_one("#capture-status", Static)
        status.add_class("-failed")
        status.update(f"✖ {printable_line(message)}")
        self.query_one("#capture-note", Static).update(
            "nothing was sent anywhere · the same capture from the shell: "
            f"promptdeck capture --client {self.client} --story {self._prompt.story.id} "
            f"--phase {self._prompt.request.phase}"
        )

    def _show_capture(self, capture: Capture) -> None:
        self.capture = capture
        self._stop_ticking()
        request = capture.request
        summary = capture_summary(capture)
        cut = " — cut at the memory bound" if request.cut else ""
        version = capture.client_version or "(version unknown)"
        self.query_one("#capture-status", Static).update(
            printable_line(
                f"{self.client} {version} · {capture.model or 'no model named'} · "
                f"{human_bytes(request.size)} ({request.size:,} bytes), "
                f"{capture.requests} request(s){cut} · client overhead "
                f"{human_tokens(summary.overhead_tokens)} tok"
            )
        )
        self.query_one(CaptureParts).table = parts_table(capture)
        self.query_one("#capture-note", Static).update(
            f"tokens in {self._deck.encoding} (promptdeck's encoding: an estimate for "
            f"{self.client}'s model) · shares of a {capture.window:,}-token window · the "
            "parts sum to the request · kept for the context-window view"
        )

    def action_close(self) -> None:
        """Escape: close (a client still running is stopped, its answer unused)."""
        self._stop.set()
        self.workers.cancel_group(self, "capture")
        self.dismiss(self.capture)
