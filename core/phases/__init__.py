"""The phases: the six phases and their contracts, the signals an agent prints, and a run's
outcome as a pure function of its events.

:mod:`.table` is the phase table (entry, contract, apply policy, transfers); :mod:`.signals`
parses both signal families incrementally; :mod:`.outcome` decides and maps to exit codes.
"""

from __future__ import annotations

from .signals import Signal, SignalParser, match_line
from .table import PHASE_NAMES, PHASES, SIGNAL_SPECS

__all__ = [
    "PHASES",
    "PHASE_NAMES",
    "SIGNAL_SPECS",
    "Signal",
    "SignalParser",
    "match_line",
]
