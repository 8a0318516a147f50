"""The Phases region: the six phases of the selected story, the live log, the outcome."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, ClassVar, Literal, assert_never

from promptdeck.core.units import context_share
from promptdeck.core.vocabulary import FAILURE, Outcome
from rich.style import Style
from rich.text import Text
from textual import events
from textual.app import ComposeResult
from textual.geometry import Region
from textual.message import Message
from textual.reactive import reactive
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Log, Static

from ...core.terminal import printable
from ...core.units import human_tokens
from ..format import cost_text, duration_text, share_bar
from ..session.run_feed import FLUSH_INTERVAL, RunFeed
from ..session.story_phases import PhaseRow
from .containers import Column
from .signal_highlighter import SignalHighlighter
from .turn_strip import TurnStrip

if TYPE_CHECKING:
    from promptdeck.core.records import RunResult
    from promptdeck.core.run import RunEvent

LOG_MAX_LINES = 5_000
"""Lines the log keeps on screen; the full stream is in the run record."""

STATE_MARKS = {
    "pending": "·",
    "suggested": "▶",
    "running": "◐",
    "done": "✓",
    "failed": "✗",
    "skipped": "–",
}


class PhaseList(Widget):
    """The six phases, one a line: mark, name, state, attempt; the selected one is marked."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {
        "phase-list--selected",
        "phase-list--done",
        "phase-list--failed",
        "phase-list--running",
        "phase-list--suggested",
        "phase-list--muted",
    }

    DEFAULT_CSS = """
    PhaseList {
        height: 6;
        padding: 0 1;
        & > .phase-list--selected { background: $boost; text-style: bold; }
        & > .phase-list--done { color: $success; }
        & > .phase-list--failed { color: $error; }
        & > .phase-list--running { color: $warning; text-style: bold; }
        & > .phase-list--suggested { color: $accent; text-style: bold; }
        & > .phase-list--muted { color: $text-muted; }
    }
    """

    rows: reactive[tuple[PhaseRow, ...]] = reactive(())
    selected: reactive[str] = reactive("dev")

    class PhaseChosen(Message):
        """A phase row was clicked."""

        def __init__(self, phase: str) -> None:
            super().__init__()
            self.phase = phase

    def on_click(self, event: events.Click) -> None:
        """A click on a row selects that phase."""
        row = event.y - self.styles.padding.top
        if 0 <= row < len(self.rows):
            self.post_message(self.PhaseChosen(self.rows[row].name))

    def render(self) -> Text:
        """One line per phase."""
        text = Text()
        for index, row in enumerate(self.rows):
            state_class = {
                "done": "phase-list--done",
                "failed": "phase-list--failed",
                "running": "phase-list--running",
                "suggested": "phase-list--suggested",
            }.get(row.state, "phase-list--muted")
            style = self.get_component_rich_style(state_class)
            pointer = "›" if row.name == self.selected else " "
            line = Text.assemble(
                (f"{pointer} {STATE_MARKS.get(row.state, '?')} ", style),
                (f"{row.name:<8}", "bold" if row.name == self.selected else ""),
                (f"{row.state:<10}", style),
                (f"#{row.attempt}" if row.attempt else "", "dim"),
            )
            if row.name == self.selected:
                line.stylize(self.get_component_rich_style("phase-list--selected", partial=True))
            if index:
                text.append("\n")
            text.append_text(line)
        return text


class ContextGauge(Static):
    """How full the agent's context window is, when the agent reports usage."""

    DEFAULT_CSS = """
    ContextGauge {
        height: 1;
        padding: 0 1;
        color: $secondary;
        display: none;
        &.-known { display: block; }
        &.-high { color: $warning; }
    }
    """

    def show_use(self, used_tokens: int | None, window_tokens: int) -> None:
        """Show ``used/window`` as a bar; hidden while usage is unknown."""
        share = context_share(used_tokens, window_tokens)
        if used_tokens is None or share is None:
            self.remove_class("-known")
            return
        self.add_class("-known")
        self.set_class(share >= 0.5, "-high")
        self.update(
            f"context {share_bar(used_tokens, window_tokens, 12)} {share:4.0%}"
            f"  {used_tokens:,}/{window_tokens:,}"
        )


class PhaseLog(Log):
    """The agent's output, bounded, with signal lines highlighted."""

    COMPONENT_CLASSES: ClassVar[set[str]] = {"phase-log--success", "phase-log--failure"}

    DEFAULT_CSS = """
    PhaseLog {
        height: 1fr;
        background: $surface;
        scrollbar-size-vertical: 1;
        & > .phase-log--success { color: $success; text-style: bold reverse; }
        & > .phase-log--failure { color: $error; text-style: bold reverse; }
    }
    """

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(highlight=True, max_lines=LOG_MAX_LINES, id=id)
        self.highlighter = SignalHighlighter()
        self._pass_style: Style | None = None

    def render_lines(self, crop: Region) -> list[Strip]:
        """Draw the lines in ``crop`` with the widget's style worked out once: Textual's log
        asks for it again for every line, blank ones too (some 5 ms for the empty log of a
        fresh app's first frame), and it cannot change within one drawing."""
        self._pass_style = super().rich_style
        try:
            return super().render_lines(crop)
        finally:
            self._pass_style = None

    @property
    def rich_style(self) -> Style:
        """The widget's style (the drawing's own, during a drawing)."""
        return self._pass_style if self._pass_style is not None else super().rich_style

    def on_mount(self) -> None:
        """Take the signal styles from the theme, now and whenever it changes."""
        self._restyle()
        self.watch(self.app, "theme", self._restyle, init=False)

    def _restyle(self) -> None:
        highlighter = self.highlighter
        if isinstance(highlighter, SignalHighlighter):
            highlighter.success_style = self.get_component_rich_style("phase-log--success")
            highlighter.failure_style = self.get_component_rich_style("phase-log--failure")
        self._render_line_cache.clear()
        self.refresh()

    def mark_signal(self, line: str, success: bool) -> None:
        """Remember ``line`` as a signal the runner counted, so it is highlighted."""
        highlighter = self.highlighter
        if isinstance(highlighter, SignalHighlighter):
            highlighter.add(line, success)
        self._render_line_cache.clear()
        self.refresh()

    def write_batch(self, lines: Iterable[str]) -> None:
        """Append a batch of lines in one call (one refresh, however many lines)."""
        batch = list(lines)
        if batch:
            self.write_lines(batch)

    def reset(self) -> None:
        """Clear the log and the remembered signals for a new run."""
        self.clear()
        highlighter = self.highlighter
        if isinstance(highlighter, SignalHighlighter):
            highlighter.forget()


class PhasePanel(Column):
    """Phases (state, attempt), the run's status line, the context gauge and the log.

    The panel owns a run's display: :meth:`listen` queues the runner's events (from its reader
    threads), a timer flushes them into the log, the status and the gauge, and the run's end
    is posted as :class:`RunFinished`.

    Args:
        context_window: the context window shown when the agent reports none.
        duration: how a duration is shown (the session's stable mode hides it).
        id: the widget id.
    """

    class RunFinished(Message):
        """The run shown has ended (its final status is already on the panel)."""

        def __init__(self, result: RunResult) -> None:
            super().__init__()
            self.result = result

    DEFAULT_CSS = """
    PhasePanel {
        background: $surface;
    }
    PhasePanel > #run-status {
        height: 3;
        padding: 0 1;
        color: $text-muted;
    }
    PhasePanel > #run-status.-success { color: $success; text-style: bold; }
    PhasePanel > #run-status.-failure { color: $error; text-style: bold; }
    PhasePanel > #run-status.-running { color: $warning; }
    """

    def __init__(
        self,
        *,
        context_window: int,
        duration: Callable[[float | None], str] = duration_text,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.context_window = context_window
        self._duration = duration
        self.feed = RunFeed()
        """Lines and events queued by the runner's threads until the next flush."""

    def on_mount(self) -> None:
        """Flush the feed on a timer (~30 Hz), so a fast agent never floods the event loop."""
        self.set_interval(FLUSH_INTERVAL, self._flush_feed, name="run-feed")

    def compose(self) -> ComposeResult:
        """The list, the status, the gauge and the log, top to bottom."""
        yield PhaseList(id="phase-list")
        yield Static("no run yet", id="run-status", markup=False)
        yield ContextGauge(id="context-gauge")
        yield TurnStrip(id="turn-strip")
        yield PhaseLog(id="phase-log")

    def show_phases(self, rows: Sequence[PhaseRow], selected: str) -> None:
        """Show the phases' states and which one is selected."""
        phase_list = self.query_one(PhaseList)
        phase_list.rows = tuple(rows)
        phase_list.selected = selected

    def show_context(self, used_tokens: int | None, window_tokens: int) -> None:
        """Update the context-use gauge."""
        self.query_one(ContextGauge).show_use(used_tokens, window_tokens)

    def show_status(self, text: str, tone: str = "") -> None:
        """Set the status line; ``tone`` is ``success``, ``failure``, ``running`` or empty."""
        status = self.query_one("#run-status", Static)
        status.update(printable(text), layout=False)
        for name in ("success", "failure", "running"):
            status.set_class(tone == name, f"-{name}")

    def begin_run(self, status: str) -> None:
        """A run has started: an empty log and ``status`` in the running tone."""
        self.query_one(PhaseLog).reset()
        self.query_one(TurnStrip).reset()
        self.show_status(status, "running")

    def focus_log(self) -> None:
        """Put the keyboard on the live log (to scroll it)."""
        self.query_one(PhaseLog).focus()

    def forget_feed(self) -> None:
        """Drop anything queued (before a new run starts feeding)."""
        self.feed.drain()

    def listen(self, event: RunEvent) -> None:
        """The runner's listener: only queue here (reader threads); the timer shows it."""
        if event.kind == "line":
            self.feed.push_line(log_line(event))
        elif event.kind == "notice":
            self.feed.push_line(printable(f"▸ {event.text}"))
        else:
            self.feed.push_event(event)

    def _flush_feed(self) -> None:
        batch = self.feed.drain()
        if not (batch.lines or batch.events):
            return
        log = self.query_one(PhaseLog)
        lines, dropped = batch.lines, batch.dropped
        if len(lines) > LOG_MAX_LINES:
            # The log keeps only its last LOG_MAX_LINES: never write what it would prune.
            dropped += len(lines) - LOG_MAX_LINES
            lines = lines[-LOG_MAX_LINES:]
        if dropped:
            log.write_line(f"… {dropped:,} lines not shown here (all are in the run record)")
        log.write_batch(lines)
        for event in batch.events:
            if event.kind == "signal" and event.signal is not None:
                shown = printable(event.signal.line)
                log.mark_signal(shown, event.signal.outcome != FAILURE)
                self.show_status(f"signal: {shown}", "running")
            elif event.kind == "usage":
                self.show_context(event.context_tokens, event.context_window or self.context_window)
                if event.usage is not None:
                    usage = event.usage
                    self.query_one(TurnStrip).add_usage(
                        usage.cache_read_tokens, usage.cache_creation_tokens, usage.input_tokens
                    )
            elif event.kind == "end" and event.result is not None:
                self._show_finished(event.result)
                result, strip = event.result, self.query_one(TurnStrip)
                if result.simulation:  # its usage is invented: no flight to show
                    strip.reset()
                else:
                    strip.load_record(result.run_dir, result.agent)
                self.post_message(self.RunFinished(event.result))

    def _show_finished(self, result: RunResult) -> None:
        tone = finished_tone(result.outcome)
        signal = result.signal.line if result.signal else "no signal"
        process = (
            f"process exit {result.process_exit}"
            if result.process_exit is not None
            else "process: no exit code"
        )
        tokens = ""
        if result.usage is not None:
            total, invalid = result.usage.checked_total()
            tokens = f" · {human_tokens(total)} tok" + "".join(f" + {text}" for text in invalid)
        self.show_status(
            # The phase's outcome (from its signal) and the process's own end, apart.
            f"phase {result.phase} #{result.attempt}: {result.outcome} — {signal}\n"
            f"{process} · {self._duration(result.duration_s)} · "
            f"{cost_text(result.cost_usd)}{tokens}",
            tone,
        )


def finished_tone(outcome: Outcome) -> Literal["success", "failure", ""]:
    """The status line's tone once a run has ended: a cancel is the user's choice, not a
    failure of the phase, so it has none."""
    match outcome:
        case "success":
            return "success"
        case "cancelled":
            return ""
        case (
            "failure"
            | "no-signal"
            | "timeout"
            | "crashed"
            | "launch-failed"
            | "git-failed"
            | "unsaved"
            | "status-failed"
            | "scope-violated"
        ):
            return "failure"
        case _:
            assert_never(outcome)


def log_line(event: RunEvent) -> str:
    """How one output line reads in the phase log: control characters made visible (the run
    record keeps the raw bytes)."""
    text = printable(event.text)
    if event.stream == "stderr":
        return f"stderr: {text}"
    if event.line_kind == "tool_use":
        return f"→ {text}"
    if event.line_kind == "tool_result":
        return f"  ← {text}"
    return text
