"""Many stories at once: interrupted runs resumed, the stories' predicted overlap, stories run
side by side in git worktrees with one merge lane, and CI jobs exported and read back.

:mod:`.resume` lists and settles runs promptdeck did not see end; :mod:`.overlap` predicts
which stories may run at the same time.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..homes import lazy_names

if TYPE_CHECKING:
    from .overlap import Footprint, Overlap, OverlapPlan, epic_overlap, plan_overlap
    from .resume import (
        RESUME_MESSAGE,
        InterruptedRun,
        Resumption,
        interrupted_notice,
        interrupted_runs,
        phase_evidence,
        resume_run,
        session_of,
    )

_HOMES = {
    "Footprint": ".overlap",
    "Overlap": ".overlap",
    "OverlapPlan": ".overlap",
    "epic_overlap": ".overlap",
    "plan_overlap": ".overlap",
    "RESUME_MESSAGE": ".resume",
    "InterruptedRun": ".resume",
    "Resumption": ".resume",
    "interrupted_notice": ".resume",
    "interrupted_runs": ".resume",
    "phase_evidence": ".resume",
    "resume_run": ".resume",
    "session_of": ".resume",
}
"""Each public name and the module of this room that defines it (imported on first use)."""

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

__all__ = [
    "RESUME_MESSAGE",
    "Footprint",
    "InterruptedRun",
    "Overlap",
    "OverlapPlan",
    "Resumption",
    "epic_overlap",
    "interrupted_notice",
    "interrupted_runs",
    "phase_evidence",
    "plan_overlap",
    "resume_run",
    "session_of",
]
