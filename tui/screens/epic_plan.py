"""The epic forecast: every story × phase of the selected story's epic, measured and priced.

The rows are core's (:func:`promptdeck.core.cost.plan_epic`), the same rows ``plan --epic N``
prints; this screen lays them out as a table, totals last.
"""

from __future__ import annotations

from typing import ClassVar

from promptdeck.core.cost import EpicPlan, money, plan_epic
from promptdeck.core.errors import PromptdeckError
from promptdeck.core.tokens import priced_model
from rich.text import Text
from textual import work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.screen import Screen
from textual.widgets import DataTable, Footer, Static

from ...core.terminal import printable_line
from ..context import DeckContext

PLAN_COLUMNS = (
    "story",
    "phase",
    "system bytes",
    "system tokens",
    "shared prefix",
    "dollars",
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
        padding: 0 1;
        color: $text-muted;
    }
    EpicPlanScreen DataTable {
        height: 1fr;
    }
    """

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,E,q", "app.pop_screen", "Back", id="plan.back", tooltip="Back"),
    ]

    def __init__(self, context: DeckContext, epic: str) -> None:
        super().__init__()
        self.context = context
        self.epic = epic
        self.plan: EpicPlan | None = None

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

    @work(thread=True, exclusive=True, group="plan", exit_on_error=False, description="Plan")
    def load(self) -> None:
        """Compose, measure and price the epic."""
        workspace = self.context.workspace
        model = priced_model(workspace, workspace.config.agent_default or "claude")
        try:
            plan = plan_epic(workspace, self.epic, model)
        except PromptdeckError as exc:
            self.app.call_from_thread(self._show_problem, str(exc))
            return
        self.app.call_from_thread(self._show_plan, plan)

    def _show_problem(self, message: str) -> None:
        self.query_one("#plan-note", Static).update(printable_line(message))

    def _show_plan(self, plan: EpicPlan) -> None:
        self.plan = plan
        table = self.query_one("#plan-table", DataTable)
        table.clear()
        for row in plan.rows:
            table.add_row(
                Text(printable_line(row.story_id), style="bold"),
                Text(row.phase),
                Text(f"{row.system_bytes:,}", justify="right"),
                Text(_num(row.system_tokens), justify="right"),
                Text(f"{row.shared_prefix_bytes:,}", justify="right"),
                Text(money(row.cost.dollars), justify="right"),
                Text(", ".join(row.flags) or "—"),
                key=f"{row.story_id}\0{row.phase}",
            )
        totals = plan.totals
        table.add_row(
            Text("(total)", style="bold"),
            Text(f"{len(plan.rows)} rows"),
            Text(f"{totals.system_bytes:,}", justify="right"),
            Text(_num(totals.system_tokens), justify="right"),
            Text(f"{totals.shared_prefix_bytes:,}", justify="right"),
            Text(money(totals.dollars), justify="right"),
            Text(""),
            key="total",
        )
        failed = "".join(f" · {story} not composed: {why}" for story, why in plan.failed)
        self.query_one("#plan-note", Static).update(
            printable_line(
                f"{plan.model} · {' → '.join(plan.phases)} · tokens: {plan.encoding}, an "
                f"estimate · same rows as `promptdeck plan --epic {plan.epic}`{failed}"
            )
        )
        table.focus()
