"""Run records: the one schema of a run's metadata and result, the writer of a run folder, reading
records back, and a recorded stream as the live panel showed it.
"""

from __future__ import annotations

from .opening import OpeningPhase, opening_phase
from .reader import RunInfo, list_runs, load_run, scan_runs
from .schema import RunMeta, RunResult
from .status_record import unwritten_status
from .stream_view import readable_stream, shown_line

__all__ = [
    "OpeningPhase",
    "RunInfo",
    "RunMeta",
    "RunResult",
    "list_runs",
    "load_run",
    "opening_phase",
    "readable_stream",
    "scan_runs",
    "shown_line",
    "unwritten_status",
]
