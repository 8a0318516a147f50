"""What a story will cost before it runs, and what it did cost after.

The model a run will use, resolved as its client resolves it (:mod:`.client_model`), and the
models its client reported using after (:mod:`.reported`); the cacheable-prefix meter
(:mod:`.prefix`: what consecutive phases' system prompts share), the predicted cost of a phase
and of a phase sequence from the dated price table (:mod:`.prediction`), a prompt against the
cache the project's latest run left (:mod:`.relation`), and a run's ``cost.json``: the
prediction at launch, the reported usage priced at the end (:mod:`.record`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..homes import lazy_names

if TYPE_CHECKING:
    from .client_model import ResolvedModel, client_default, forecast_model, resolve_model
    from .epic import EpicPlan, PlanRow, plan_epic
    from .estimate import (
        ANTHROPIC_API,
        Calibration,
        ClaudeEstimate,
        ExactCountError,
        calibrate,
        claude_estimate,
        claude_model,
        exact_claude_tokens,
    )
    from .prediction import (
        SCOPE,
        CostForecast,
        PhaseCost,
        cache_row,
        cost_line,
        forecast,
        money,
        price_unknown,
    )
    from .prefix import DEFAULT_SEQUENCE, CacheMeter, measure_cache
    from .record import CostRecord, read_cost, record_actual, record_prediction
    from .relation import run_prediction

_HOMES = {
    "client_default": ".client_model",
    "forecast_model": ".client_model",
    "ResolvedModel": ".client_model",
    "resolve_model": ".client_model",
    "EpicPlan": ".epic",
    "plan_epic": ".epic",
    "PlanRow": ".epic",
    "ANTHROPIC_API": ".estimate",
    "calibrate": ".estimate",
    "Calibration": ".estimate",
    "claude_estimate": ".estimate",
    "claude_model": ".estimate",
    "ClaudeEstimate": ".estimate",
    "exact_claude_tokens": ".estimate",
    "ExactCountError": ".estimate",
    "cache_row": ".prediction",
    "price_unknown": ".prediction",
    "SCOPE": ".prediction",
    "cost_line": ".prediction",
    "CostForecast": ".prediction",
    "forecast": ".prediction",
    "money": ".prediction",
    "PhaseCost": ".prediction",
    "CacheMeter": ".prefix",
    "DEFAULT_SEQUENCE": ".prefix",
    "measure_cache": ".prefix",
    "CostRecord": ".record",
    "read_cost": ".record",
    "record_actual": ".record",
    "record_prediction": ".record",
    "run_prediction": ".relation",
}
"""Each public name and the module of this room that defines it (imported on first use)."""

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

__all__ = [
    "ANTHROPIC_API",
    "DEFAULT_SEQUENCE",
    "SCOPE",
    "CacheMeter",
    "Calibration",
    "ClaudeEstimate",
    "CostForecast",
    "CostRecord",
    "EpicPlan",
    "ExactCountError",
    "PhaseCost",
    "PlanRow",
    "ResolvedModel",
    "cache_row",
    "calibrate",
    "claude_estimate",
    "claude_model",
    "client_default",
    "cost_line",
    "exact_claude_tokens",
    "forecast",
    "forecast_model",
    "measure_cache",
    "money",
    "plan_epic",
    "price_unknown",
    "read_cost",
    "record_actual",
    "record_prediction",
    "resolve_model",
    "run_prediction",
]
