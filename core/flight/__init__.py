"""The flight recorder: every request a phase made, what each paid for, and forecasts with
ranges learned from the project's real runs.

A run's turn list (:mod:`.model`) is built from its recorded stream, joined with the client's
session transcript where one is whole and the session's (:mod:`.claude`, :mod:`.codex`, read by
the bounded :mod:`.lines` reader), and kept in the run folder (:mod:`.store`); where the spend
went and what looks wasted is :mod:`.attribution`, both put together for a run in
:mod:`.report`; the whole-phase forecast and its leave-one-out backtest are :mod:`.forecast`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..homes import lazy_names

if TYPE_CHECKING:
    from .attribution import Share, Spend
    from .forecast import (
        NO_HISTORY,
        Backtest,
        EpicForecast,
        PhaseForecast,
        Range,
        backtest,
        epic_forecast,
        phase_forecast,
    )
    from .model import Addition, Request, Subagent, ToolCall, TurnList
    from .report import FlightReport, flight_report
    from .store import TURNS_FILE, build_turns, read_turns, turns_of, write_turns

_HOMES = {
    "Share": ".attribution",
    "Spend": ".attribution",
    "NO_HISTORY": ".forecast",
    "Backtest": ".forecast",
    "EpicForecast": ".forecast",
    "epic_forecast": ".forecast",
    "PhaseForecast": ".forecast",
    "Range": ".forecast",
    "backtest": ".forecast",
    "phase_forecast": ".forecast",
    "Addition": ".model",
    "Request": ".model",
    "Subagent": ".model",
    "ToolCall": ".model",
    "TurnList": ".model",
    "FlightReport": ".report",
    "flight_report": ".report",
    "TURNS_FILE": ".store",
    "build_turns": ".store",
    "read_turns": ".store",
    "turns_of": ".store",
    "write_turns": ".store",
}
"""Each public name and the module of this room that defines it (imported on first use)."""

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

__all__ = [
    "NO_HISTORY",
    "TURNS_FILE",
    "Addition",
    "Backtest",
    "EpicForecast",
    "FlightReport",
    "PhaseForecast",
    "Range",
    "Request",
    "Share",
    "Spend",
    "Subagent",
    "ToolCall",
    "TurnList",
    "backtest",
    "build_turns",
    "epic_forecast",
    "flight_report",
    "phase_forecast",
    "read_turns",
    "turns_of",
    "write_turns",
]
