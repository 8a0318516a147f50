"""The phases: the six phases and their contracts, the signals an agent prints, and a run's
outcome as a pure function of its events.

:mod:`.table` is the phase table (entry, contract, apply policy, transfers); :mod:`.signals`
parses both signal families incrementally; :mod:`.outcome` decides and maps to exit codes.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..homes import lazy_names

if TYPE_CHECKING:
    from .signals import Signal, SignalParser, match_line
    from .table import PHASE_NAMES, PHASES, SIGNAL_SPECS

_HOMES = {
    "Signal": ".signals",
    "SignalParser": ".signals",
    "match_line": ".signals",
    "PHASE_NAMES": ".table",
    "PHASES": ".table",
    "SIGNAL_SPECS": ".table",
}
"""Each public name and the module of this room that defines it (imported on first use)."""

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

__all__ = [
    "PHASES",
    "PHASE_NAMES",
    "SIGNAL_SPECS",
    "Signal",
    "SignalParser",
    "match_line",
]
