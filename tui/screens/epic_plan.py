"""The epic forecast: every story × phase of the selected story's epic, measured and priced.

The rows are core's (:func:`promptdeck.core.cost.plan_epic`), the same rows ``plan --epic N``
prints, each with its phase's whole-phase forecast; the controller
(:mod:`promptdeck.tui.session.epic_forecast`) makes them and this screen lays them out as a
table, totals last, and what the figures rest on under it.
"""

from __future__ import annotations

from typing import ClassVar

from promptdeck.core.cost import money
from promptdeck.core.errors import PromptdeckError
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from ...core.terminal import printable_line
from ..context import DeckContext
from ..session.client_models import ClientModels, installed_client_version
from ..session.epic_forecast import EpicView, epic_notes, forecast_epic

PLAN_COLUMNS = (
    "story",
    "phase",
    "system bytes",
    "system tokens",
    "shared prefix",
    "dollars",
    "whole phase",
    "flags",
)


def _num(value: int | None) -> str:
    return "—" if value is None else f"{value:,}"


class EpicPlanScreen(Screen[None]):
    """A table of one epic's story × phase rows and their totals."""

    DEFAULT_CSS = """
    EpicPlanScreen #plan-title {
        height: 1;
        padding: 0 1;
        background: $primary;
        color: $text;
        text-style: bold;
    }
    EpicPlanScreen #plan-note {
        height: auto;
        max-height: 8;
        padding: 0 1;
        color: $text-muted;
    }
    EpicPlanScreen DataTable {
        height: 1fr;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,E,q", "app.pop_screen", "Back", id="plan.back", tooltip="Back"),
        Binding(
            "a",
            "all_stories",
            "Done stories",
            id="plan.all_stories",
            tooltip="Include the epic's done stories, or leave them out again",
        ),
    ]

    def __init__(self, context: DeckContext, epic: str) -> None:
        super().__init__()
        self.context = context
        self.epic = epic
        self.all_stories = False
        """The epic's done stories are planned too (``plan --all``)."""
        self.view: EpicView | None = None
        self._models = ClientModels(None if context.stable else installed_client_version)

    def compose(self) -> ComposeResult:
        """Title, note, table, footer."""
        yield Static(f"Plan · epic {printable_line(self.epic)}", id="plan-title")
        yield Static("composing every story × phase…", id="plan-note")
        table: DataTable[Text] = DataTable(id="plan-table", cursor_type="row")
        yield table
        yield Footer()

    def on_mount(self) -> None:
        """Set up the columns and compose the epic (off the UI loop)."""
        table = self.query_one("#plan-table", DataTable)
        for key in PLAN_COLUMNS:
            table.add_column(key, key=key)
        self.load()

    def action_all_stories(self) -> None:
        """Plan the epic's done stories too, or leave them out again."""
        self.all_stories = not self.all_stories
        self.query_one("#plan-note", Static).update("composing every story × phase…")
        self.load()

    @work(thread=True, exclusive=True, group="plan", exit_on_error=False, description="Plan")
    def load(self) -> None:
        """Resolve the model, compose, measure and price the epic, and forecast each phase."""
        context = self.context
        try:
            view = forecast_epic(
                context.workspace,
                self.epic,
                context.agent,
                self._models,
                all_stories=self.all_stories,
            )
        except PromptdeckError as exc:
            self.app.call_from_thread(self._show_problem, str(exc))
            return
        if view.notes:
            self.app.call_from_thread(context.board.add_notices, "the model", list(view.notes))
        self.app.call_from_thread(self._show_plan, view)

    def _show_problem(self, message: str) -> None:
        self.query_one("#plan-note", Static).update(printable_line(message))

    def _show_plan(self, view: EpicView) -> None:
        self.view = view
        plan = view.plan
        table = self.query_one("#plan-table", DataTable)
        table.clear()
        for row, whole in zip(plan.rows, view.forecast.rows, strict=True):
            table.add_row(
                Text(printable_line(row.story_id), style="bold"),
                Text(row.phase),
                Text(f"{row.system_bytes:,}", justify="right"),
                Text(_num(row.system_tokens), justify="right"),
                Text(f"{row.shared_prefix_bytes:,}", justify="right"),
                Text(money(row.cost.dollars), justify="right"),
                Text(whole.cell()),
                Text(", ".join(row.flags) or "—", style="bold" if row.too_large else ""),
                key=f"{row.story_id}\0{row.phase}",
            )
        totals = plan.totals
        table.add_row(
            Text("(total)", style="bold"),
            Text(f"{len(plan.rows) - totals.left_out} rows"),
            Text(f"{totals.system_bytes:,}", justify="right"),
            Text(_num(totals.system_tokens), justify="right"),
            Text(f"{totals.shared_prefix_bytes:,}", justify="right"),
            Text(money(totals.dollars), justify="right"),
            Text(view.total_range),
            Text(""),
            key="total",
        )
        head = (
            f"{plan.model or 'model unknown'} · {' → '.join(plan.phases)} · tokens: "
            f"{plan.encoding}, an estimate · same rows as `promptdeck plan --epic {plan.epic}"
            f"{' --all' if self.all_stories else ''}`"
        )
        lines = [head, *epic_notes(view)]
        self.query_one("#plan-note", Static).update(
            Text("\n".join(printable_line(line) for line in lines))
        )
        table.focus()
