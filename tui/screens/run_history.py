"""Run history: every run of the workspace, newest first; Enter opens one."""

from __future__ import annotations

from typing import ClassVar

from promptdeck.core.agents.base import agent_label
from promptdeck.core.records import RunInfo, list_runs
from promptdeck.core.workspace import Workspace
from rich.style import Style
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from ..format import cost_text, duration_text, printable_line

OUTCOME_TONES = {
    "success": "success",
    "failure": "error",
    "no-signal": "warning",
    "timeout": "warning",
    "cancelled": "warning",
    "crashed": "error",
    "launch-failed": "error",
}
"""Which theme colour each outcome is drawn in."""


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

    def __init__(self, workspace: Workspace, workspace_label: str) -> None:
        super().__init__()
        self._workspace = workspace
        self._workspace_label = workspace_label
        self.runs: tuple[RunInfo, ...] = ()

    def compose(self) -> ComposeResult:
        """Title, table, footer."""
        yield Static(f"Runs · {self._workspace_label}", id="history-title")
        yield Static("loading runs…", id="history-empty")
        table: DataTable[Text] = DataTable(id="history-table", cursor_type="row")
        yield table
        yield Footer()

    def on_mount(self) -> None:
        """Set up the columns and read the runs."""
        table = self.query_one("#history-table", DataTable)
        for label, key in (
            ("story", "story"),
            ("phase", "phase"),
            ("#", "attempt"),
            ("mode", "mode"),
            ("agent", "agent"),
            ("outcome", "outcome"),
            ("signal", "signal"),
            ("duration", "duration"),
            ("cost", "cost"),
        ):
            table.add_column(label, key=key)
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
        self.app.call_from_thread(self._show_runs, runs)

    def _show_runs(self, runs: tuple[RunInfo, ...]) -> None:
        self.runs = runs
        table = self.query_one("#history-table", DataTable)
        table.clear()
        empty = self.query_one("#history-empty", Static)
        empty.display = not runs
        empty.update("no runs yet: run a phase with r on the main screen")
        for run in runs:
            row = run.to_dict()
            outcome = str(row["outcome"])
            table.add_row(
                Text(printable_line(run.story), style="bold"),
                Text(printable_line(run.phase)),
                Text(str(run.attempt)),
                Text(printable_line(str(row.get("mode") or ""))),
                Text(printable_line(agent_label(str(row.get("agent") or "")))),
                Text(printable_line(outcome), style=self._tone(outcome)),
                Text(
                    printable_line(str(row.get("signal") or "—")),
                    overflow="ellipsis",
                    no_wrap=True,
                ),
                Text(self._duration(_number(row.get("duration_s"))), justify="right"),
                Text(cost_text(_number(row.get("cost_usd"))), justify="right"),
                key=run.id,
            )
        if runs:
            table.focus()

    def _tone(self, outcome: str) -> Style:
        tone = OUTCOME_TONES.get(outcome)
        color = getattr(self.app.current_theme, tone, None) if tone else None
        return Style(color=color, bold=True) if color else Style(dim=True)

    def _duration(self, seconds: float | None) -> str:
        shown = getattr(self.app, "duration", duration_text)
        return str(shown(seconds))

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        """Open the run under the cursor."""
        from .run_detail import RunDetailScreen

        if 0 <= event.cursor_row < len(self.runs):
            self.app.push_screen(RunDetailScreen(self.runs[event.cursor_row]))


def _number(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
