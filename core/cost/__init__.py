"""What a story will cost before it runs, and what it did cost after.

The cacheable-prefix meter (:mod:`.prefix`: what consecutive phases' system prompts share), the
predicted cost of a phase and of a phase sequence from the dated price table
(:mod:`.prediction`), a prompt against the cache the project's latest run left (:mod:`.relation`),
and a run's ``cost.json``: the prediction at launch, the reported usage priced at the end
(:mod:`.record`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..homes import lazy_names

if TYPE_CHECKING:
    from .prediction import CostForecast, PhaseCost, cache_row, cost_line, forecast, money
    from .prefix import DEFAULT_SEQUENCE, CacheMeter, measure_cache
    from .record import CostRecord, read_cost, record_actual, record_prediction
    from .relation import run_prediction

_HOMES = {
    "CostForecast": ".prediction",
    "PhaseCost": ".prediction",
    "cache_row": ".prediction",
    "cost_line": ".prediction",
    "forecast": ".prediction",
    "money": ".prediction",
    "DEFAULT_SEQUENCE": ".prefix",
    "CacheMeter": ".prefix",
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
    "DEFAULT_SEQUENCE",
    "CacheMeter",
    "CostForecast",
    "CostRecord",
    "PhaseCost",
    "cache_row",
    "cost_line",
    "forecast",
    "measure_cache",
    "money",
    "read_cost",
    "record_actual",
    "record_prediction",
    "run_prediction",
]
