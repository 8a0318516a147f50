"""What a story will cost before it runs, and what it did cost after.

The cacheable-prefix meter (:mod:`.prefix`: what consecutive phases' system prompts share), the
predicted cost of a phase and of a phase sequence from the dated price table
(:mod:`.prediction`), a prompt against the cache the project's latest run left (:mod:`.relation`),
and a run's ``cost.json``: the prediction at launch, the reported usage priced at the end
(:mod:`.record`); the epic forecast, every story × phase of an epic (:mod:`.epic`); and
a calibrated Claude-family token estimate with the opt-in exact count (:mod:`.estimate`).
"""

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
from .prediction import CostForecast, PhaseCost, cache_row, cost_line, forecast, money
from .prefix import DEFAULT_SEQUENCE, CacheMeter, measure_cache
from .record import CostRecord, read_cost, record_actual, record_prediction
from .relation import run_prediction

__all__ = [
    "ANTHROPIC_API",
    "DEFAULT_SEQUENCE",
    "CacheMeter",
    "Calibration",
    "ClaudeEstimate",
    "CostForecast",
    "CostRecord",
    "EpicPlan",
    "ExactCountError",
    "PhaseCost",
    "PlanRow",
    "cache_row",
    "calibrate",
    "claude_estimate",
    "claude_model",
    "cost_line",
    "exact_claude_tokens",
    "forecast",
    "measure_cache",
    "money",
    "plan_epic",
    "read_cost",
    "record_actual",
    "record_prediction",
    "run_prediction",
]
