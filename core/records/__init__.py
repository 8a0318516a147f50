"""Run records: the one schema of a run's metadata and result, the writer of a run folder, reading
records back, and a recorded stream as the live panel showed it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..homes import lazy_names

if TYPE_CHECKING:
    from .opening import OpeningPhase, opening_phase
    from .reader import RunInfo, list_runs, load_run, scan_runs
    from .schema import RunMeta, RunResult, finite_json
    from .status_record import unwritten_status
    from .stream_view import readable_stream, shown_line

_HOMES = {
    "opening_phase": ".opening",
    "OpeningPhase": ".opening",
    "list_runs": ".reader",
    "load_run": ".reader",
    "RunInfo": ".reader",
    "scan_runs": ".reader",
    "RunMeta": ".schema",
    "RunResult": ".schema",
    "finite_json": ".schema",
    "unwritten_status": ".status_record",
    "readable_stream": ".stream_view",
    "shown_line": ".stream_view",
}
"""Each public name and the module of this room that defines it (imported on first use)."""

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

__all__ = [
    "OpeningPhase",
    "RunInfo",
    "RunMeta",
    "RunResult",
    "finite_json",
    "list_runs",
    "load_run",
    "opening_phase",
    "readable_stream",
    "scan_runs",
    "shown_line",
    "unwritten_status",
]
