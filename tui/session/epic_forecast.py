"""The epic forecast the plan screen shows, made apart from any screen.

:func:`forecast_epic` (blocking: it composes every story × phase) prices the epic as the model
the client will request (:mod:`.client_models`), the rows ``plan --epic N`` prints, each with
its phase's whole-phase forecast from this project's recorded runs
(:func:`promptdeck.core.flight.epic_forecast`); :func:`epic_notes` says, one line each, what the
figures rest on and what the total leaves out — the same lines ``plan --epic`` prints.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from promptdeck.core.lean_dataclass import dataclass

if TYPE_CHECKING:
    from promptdeck.core.cost import EpicPlan
    from promptdeck.core.flight import EpicForecast
    from promptdeck.core.project import Workspace

    from .client_models import ClientModels


@dataclass(frozen=True)
class EpicView:
    """One epic's plan and its whole-phase forecast, row for row.

    Attributes:
        plan: core's rows and totals.
        forecast: each row's whole-phase forecast, and the total's range.
        notes: the model resolution's notes (client files that could not be read).
    """

    plan: EpicPlan
    forecast: EpicForecast
    notes: tuple[str, ...] = ()

    @property
    def total_range(self) -> str:
        """The total's whole-phase range (``p50 $1.20 · p90 $2.10``), ``""`` without history."""
        from promptdeck.core.cost import money

        forecast = self.forecast
        if forecast.p50 is None:
            return ""
        return f"p50 {money(forecast.p50)} · p90 {money(forecast.p90)}"


def forecast_epic(
    workspace: Workspace,
    epic: str,
    agent: str,
    models: ClientModels,
    *,
    all_stories: bool = False,
) -> EpicView:
    """``epic`` composed, measured and priced as ``agent``'s client will run it (blocking).

    Raises:
        PromptdeckError: the epic has no stories (core's one line).
    """
    from promptdeck.core.cost import plan_epic
    from promptdeck.core.flight import epic_forecast

    model, notes = models.of(workspace, agent)
    plan = plan_epic(
        workspace, epic, model.model, model_source=model.source, all_stories=all_stories
    )
    return EpicView(plan, epic_forecast(workspace.root.resolve(), plan), notes)


def epic_notes(view: EpicView) -> list[str]:
    """What the figures rest on and what the total leaves out, one line each."""
    plan, forecast = view.plan, view.forecast
    lines = [
        f"model {plan.model or 'unknown'}: from {plan.model_source}",
        f"basis: {plan.basis}",
        forecast.describe(),
    ]
    unknown = next((row.cost.unknown for row in plan.rows if row.cost.unknown), "")
    if unknown:
        lines.append(f"{unknown}: no dollar figure")
    left_out = plan.totals.left_out
    if left_out:
        lines.append(
            f"too-large: {left_out} row(s) over the injection's error line cannot be sent: "
            "outside the total"
        )
    done = plan.done_left_out
    if done:
        lines.append(f"{len(done)} done story(ies) left out ({', '.join(done)}); a includes them")
    lines.extend(f"{story} not composed: {why}" for story, why in plan.failed)
    return lines
