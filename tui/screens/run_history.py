"""Run history: every run of the workspace, newest first; Enter opens one."""

from __future__ import annotations

import time
from typing import ClassVar, Literal, assert_never

from promptdeck.core.agents import agent_label
from promptdeck.core.cost import CostRecord, money, read_cost
from promptdeck.core.records import RunInfo, list_runs
from promptdeck.core.vocabulary import RunState
from rich.style import Style
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from ...core.terminal import printable_line
from ..context import DeckContext
from ..format import cost_text
from ..session.interrupted import interrupted_sessions

Tone = Literal["success", "warning", "error"]
"""A theme colour an outcome is drawn in."""


def outcome_tone(state: RunState) -> Tone | None:
    """Which theme colour a run's outcome is drawn in; None (dim) while it has none yet.

    A git step or a record that failed is an error like a crash: neither is a success.
    """
    match state:
        case "success":
            return "success"
        case "no-signal" | "timeout" | "cancelled":
            return "warning"
        case (
            "failure"
            | "crashed"
            | "launch-failed"
            | "git-failed"
            | "unsaved"
            | "status-failed"
            | "scope-violated"
        ):
            return "error"
        case "running" | "interrupted" | "unknown":
            return None
        case _:
            assert_never(state)


HISTORY_COLUMNS = (
    "started",
    "story",
    "phase",
    "attempt",
    "mode",
    "agent",
    "outcome",
    "signal",
    "duration",
    "cost",
    "predicted",
    "actual",
    "miss",
)
HISTORY_LABELS = {"attempt": "#"}
NARROW_DROPS = frozenset({"mode", "agent", "cost", "predicted", "actual", "miss"})
WIDE_HISTORY = 100
SIGNAL_ROOM = 62
"""Columns the other cells of a narrow history take; the signal gets the rest."""


def _cut(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


class RunHistoryScreen(Screen[None]):
    """A table of runs (story, phase, attempt, agent, outcome, signal, duration, cost)."""

    DEFAULT_CSS = """
    RunHistoryScreen #history-title {
        height: 1;
        padding: 0 1;
        background: $primary;
        color: $text;
        text-style: bold;
    }
    RunHistoryScreen #history-empty {
        padding: 1 2;
        color: $text-muted;
    }
    RunHistoryScreen DataTable {
        height: 1fr;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding(
            "escape,h,q",
            "app.pop_screen",
            "Back",
            id="history.back",
            tooltip="Back to the main screen",
        ),
        Binding(
            "f5,ctrl+r",
            "reload",
            "Reload",
            id="history.reload",
            tooltip="Read the runs folder again",
        ),
    ]

    def __init__(self, context: DeckContext) -> None:
        super().__init__()
        self.context = context
        self._workspace = context.workspace
        self._workspace_label = context.workspace_label
        self.runs: tuple[RunInfo, ...] = ()
        self.columns: list[str] = []
        """The columns shown (fewer below 100 columns)."""

    def compose(self) -> ComposeResult:
        """Title, table, footer."""
        yield Static(f"Runs · {self._workspace_label}", id="history-title")
        yield Static("loading runs…", id="history-empty")
        table: DataTable[Text] = DataTable(id="history-table", cursor_type="row")
        yield table
        # The app's own ``^p Palette`` binding is in the footer already: not Textual's too.
        yield Footer(show_command_palette=False)

    def on_mount(self) -> None:
        """Set up the columns and read the runs."""
        table = self.query_one("#history-table", DataTable)
        # Below 100 columns mode, agent and cost step aside (the run detail has them), so the
        # start time, story, phase, outcome and signal fit 80 columns.
        narrow = self.app.size.width < WIDE_HISTORY
        self.columns = [key for key in HISTORY_COLUMNS if not (narrow and key in NARROW_DROPS)]
        for key in self.columns:
            table.add_column(HISTORY_LABELS.get(key, key), key=key)
        self.action_reload()

    @work(
        thread=True,
        exclusive=True,
        group="history",
        exit_on_error=False,
        description="Reading runs",
    )
    def action_reload(self) -> None:
        """Read the runs folder (off the UI loop)."""
        runs = tuple(reversed(list_runs(self._workspace.root)))
        sessions = (
            interrupted_sessions(runs) if any(r.outcome == "interrupted" for r in runs) else {}
        )
        self.app.call_from_thread(self._show_runs, runs, sessions)

    def _show_runs(self, runs: tuple[RunInfo, ...], sessions: dict[str, str]) -> None:
        """Show ``runs``; ``sessions``: what an interrupted run's signal cell says instead."""
        self.runs = runs
        table = self.query_one("#history-table", DataTable)
        table.clear()
        empty = self.query_one("#history-empty", Static)
        empty.display = not runs
        empty.update("no runs yet: run a phase with r on the main screen")
        stable = self.context.stable
        signal_width = max(self.app.size.width - SIGNAL_ROOM, 12)
        for run in runs:
            meta, result, signal = run.run_meta, run.run_result, run.run_signal
            started = (
                "—"
                if stable or not run.started
                else time.strftime("%m-%d %H:%M", time.localtime(run.started))
            )
            cells = {
                "started": Text(started),
                "story": Text(printable_line(run.story), style="bold"),
                "phase": Text(printable_line(run.phase_label)),
                "attempt": Text(str(run.attempt)),
                "mode": Text(printable_line(meta.mode or "")),
                "agent": Text(printable_line(agent_label(meta.agent or ""))),
                "outcome": Text(printable_line(run.outcome), style=self._tone(run.outcome)),
                "signal": Text(
                    _cut(
                        printable_line(
                            sessions.get(run.id) or (signal.name if signal else "") or "—"
                        ),
                        signal_width,
                    ),
                    no_wrap=True,
                ),
                "duration": Text(
                    self._duration(result.duration_s if result is not None else None),
                    justify="right",
                ),
                "cost": Text(
                    cost_text(result.cost_usd if result is not None else None), justify="right"
                ),
                **self._cost_cells(read_cost(run.dir, self._workspace.root)),
            }
            table.add_row(*(cells[key] for key in self.columns), key=run.id)
        if runs:
            table.focus()

    @staticmethod
    def _cost_cells(record: CostRecord | None) -> dict[str, Text]:
        # Predicted before the run, reported after: side by side, with the misses named.
        if record is None:
            return {"predicted": Text("—"), "actual": Text("—"), "miss": Text("—")}
        # The reported cost with the models the client reported using (core's form).
        return {
            "predicted": Text(money(record.predicted), justify="right"),
            "actual": Text(printable_line(record.actual_forms()[0]), justify="right"),
            "miss": Text(printable_line(", ".join(record.misses) or "—")),
        }

    def _tone(self, state: RunState) -> Style:
        tone = outcome_tone(state)
        color = getattr(self.app.current_theme, tone, None) if tone else None
        return Style(color=color, bold=True) if color else Style(dim=True)

    def _duration(self, seconds: float | None) -> str:
        shown = self.context.duration
        return str(shown(seconds))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Open the run under the cursor."""
        from .run_detail import RunDetailScreen

        if 0 <= event.cursor_row < len(self.runs):
            self.app.push_screen(RunDetailScreen(self.runs[event.cursor_row], self.context))
