"""One run in full: the exact system prompt and user message sent, the raw stream, the
signals and the result."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

from promptdeck.core.agents import agent_label
from promptdeck.core.phases import Signal
from promptdeck.core.project import TextProblem, read_file_bytes
from promptdeck.core.records import RunInfo, readable_stream, shown_line
from promptdeck.core.units import cost_label
from promptdeck.core.vocabulary import FAILURE
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import Footer, Static, TabbedContent, TabPane

from ...core.terminal import printable, printable_line
from ..context import DeckContext
from ..format import cost_text
from ..widgets.phase_panel import PhaseLog
from ..widgets.text_viewer import TextViewer

STREAM_NAMES = ("stream.jsonl", "stream.log")


SHOWN_BYTES = 2 * 1024 * 1024
"""The most of one record file shown; the record on disk keeps everything."""


def _read(path: Path) -> str:
    # Through the guarded reader (never a FIFO, at most SHOWN_BYTES held), and with control
    # characters made visible: the record keeps the agent's raw bytes, the screen does not.
    data = read_file_bytes(path, None, limit=2**62, head=SHOWN_BYTES)
    if isinstance(data, TextProblem):
        return f"({path.name}: {data})"
    text = data[:SHOWN_BYTES].decode("utf-8", errors="replace")
    if len(data) > SHOWN_BYTES:
        text += f"\n… (the first {SHOWN_BYTES:,} bytes shown; the whole file is {path})"
    return printable(text)


class RunDetailScreen(Screen[None]):
    """Tabs: system prompt, user message, stream, signals, result."""

    DEFAULT_CSS = """
    RunDetailScreen #detail-title {
        height: 1;
        padding: 0 1;
        background: $primary;
        color: $text;
        text-style: bold;
    }
    RunDetailScreen #detail-summary {
        height: auto;
        padding: 0 1;
        color: $text-muted;
    }
    RunDetailScreen TabbedContent {
        height: 1fr;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape,q",
            "app.pop_screen",
            "Back",
            id="detail.back",
            tooltip="Back to the run history",
        ),
    ]

    def __init__(self, run: RunInfo, context: DeckContext) -> None:
        super().__init__()
        self.run = run
        self.context = context

    def compose(self) -> ComposeResult:
        """Title, summary line, the tabs."""
        run = self.run
        meta, result, signal = run.run_meta, run.run_result, run.run_signal
        agent = agent_label(meta.agent or "")
        yield Static(
            printable_line(f"Run · {run.story} · {run.phase_label} #{run.attempt} · {agent}"),
            id="detail-title",
            markup=False,
        )
        named = (signal.name if signal else "") or "no signal"
        reason = f" — {signal.reason}" if signal and signal.reason else ""
        shown_duration = self.context.duration
        label = self.context.run_label
        yield Static(
            printable_line(f"outcome {run.outcome} · {named}{reason} · ")
            + f"{shown_duration(result.duration_s if result else None)} · "
            f"{cost_text(result.cost_usd if result else None)} · {label(run.id)}",
            id="detail-summary",
            markup=False,
        )
        stream = next(
            (run.dir / name for name in STREAM_NAMES if (run.dir / name).exists()),
            run.dir / STREAM_NAMES[0],
        )
        signals = "\n".join(json.dumps(dict(s), ensure_ascii=False) for s in run.signals)
        # The result tab shows the record whole, as it is on disk, below its summary.
        raw = json.dumps(dict(run.result), indent=2) if run.result else "(no result yet)"
        raw = "result.json, as recorded:\n" + raw
        with TabbedContent(id="detail-tabs", initial="detail-result"):
            with TabPane("Result", id="detail-result"):
                yield TextViewer(printable(result_summary(run) + "\n\n" + raw))
            with TabPane("Stream", id="detail-stream"):
                # Read like the live panel: parsed by the run's own agent, signals highlighted.
                yield PhaseLog(id="detail-log")
            with TabPane("Raw stream", id="detail-raw"):
                yield TextViewer(_read(stream))
            with TabPane("System prompt", id="detail-system"):
                yield TextViewer(_read(run.dir / "system.md"))
            with TabPane("User message", id="detail-user"):
                yield TextViewer(_read(run.dir / "user.md"))
            with TabPane("Signals", id="detail-signals"):
                yield TextViewer(printable(signals) or "(no signals)")
        # The app's own ``^p Palette`` binding is in the footer already: not Textual's too.
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        """Fill the readable stream and mark the signals the run counted."""
        lines = readable_stream(self.run, self.context.workspace.config)
        log = self.query_one("#detail-log", PhaseLog)
        for recorded in self.run.signals:
            signal = Signal.from_dict(recorded)
            if signal.line:
                log.mark_signal(signal.line, signal.outcome != FAILURE)
        log.write_batch(shown_line(line) for line in lines)


def result_summary(run: RunInfo) -> str:
    """The result as a person reads it: the phase's outcome and the process's end apart."""
    result = run.run_result
    if result is None:
        if run.result:
            return f"The result names no outcome promptdeck knows ({run.outcome})."
        return "No result yet: the run is still going, or it was interrupted."
    signal = result.signal
    lines = [
        f"phase outcome   {result.outcome}"
        + (f" — {signal.name}" if signal and signal.name else " — no signal"),
    ]
    if signal and signal.reason:
        lines.append(f"reason          {signal.reason}")
    if result.message:
        lines.append(f"message         {result.message}")
    lines.append(f"process exit    {result.process_exit}")
    for label, value in (
        ("duration", f"{result.duration_s:.1f} s" if result.duration_s is not None else None),
        ("cost (USD)", cost_label(result.cost_usd) if result.cost_usd is not None else None),
        ("tokens", result.usage.describe() if result.usage is not None else None),
        ("session", result.session_id),
        ("commit", result.commit),
    ):
        if value is not None:
            lines.append(f"{label:<15} {value}")
    for warning in result.warnings:
        lines.append(f"warning         {warning}")
    return "\n".join(lines)
