"""Many stories at once: interrupted runs resumed, the stories' predicted overlap, stories run
side by side in git worktrees with one merge lane, and CI jobs exported and read back.

:mod:`.resume` lists and settles runs promptdeck did not see end; :mod:`.overlap` predicts
which stories may run at the same time; :mod:`.parallel` runs them side by side, each in its
worktree (:mod:`.worktrees`), and :mod:`.merge` brings them back one at a time; :mod:`.ci`
exports them as CI jobs and reads the jobs' records back.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..homes import lazy_names

if TYPE_CHECKING:
    from .ci import Export, Imported, export_github, import_runs
    from .merge import MergeOutcome, merge_story
    from .overlap import Footprint, Overlap, OverlapPlan, epic_overlap, plan_overlap
    from .parallel import EpicRun, ParallelRequest, StoryRun, run_epic
    from .resume import (
        RESUME_MESSAGE,
        InterruptedRun,
        Resumption,
        interrupted_notice,
        interrupted_runs,
        pending_runs,
        phase_evidence,
        resume_run,
        session_of,
        settle_worktree,
        worktree_interrupted,
    )
    from .worktrees import StoryWorktree, list_worktrees, remove_worktree

_HOMES = {
    "Export": ".ci",
    "Imported": ".ci",
    "export_github": ".ci",
    "import_runs": ".ci",
    "MergeOutcome": ".merge",
    "merge_story": ".merge",
    "EpicRun": ".parallel",
    "ParallelRequest": ".parallel",
    "StoryRun": ".parallel",
    "run_epic": ".parallel",
    "StoryWorktree": ".worktrees",
    "list_worktrees": ".worktrees",
    "remove_worktree": ".worktrees",
    "Footprint": ".overlap",
    "Overlap": ".overlap",
    "OverlapPlan": ".overlap",
    "epic_overlap": ".overlap",
    "plan_overlap": ".overlap",
    "RESUME_MESSAGE": ".resume",
    "InterruptedRun": ".resume",
    "Resumption": ".resume",
    "interrupted_notice": ".resume",
    "pending_runs": ".resume",
    "interrupted_runs": ".resume",
    "phase_evidence": ".resume",
    "resume_run": ".resume",
    "session_of": ".resume",
    "settle_worktree": ".resume",
    "worktree_interrupted": ".resume",
}
"""Each public name and the module of this room that defines it (imported on first use)."""

__getattr__, __dir__ = lazy_names(__name__, _HOMES)

__all__ = [
    "RESUME_MESSAGE",
    "EpicRun",
    "Export",
    "Footprint",
    "Imported",
    "InterruptedRun",
    "MergeOutcome",
    "Overlap",
    "OverlapPlan",
    "ParallelRequest",
    "Resumption",
    "StoryRun",
    "StoryWorktree",
    "epic_overlap",
    "export_github",
    "import_runs",
    "interrupted_notice",
    "interrupted_runs",
    "list_worktrees",
    "merge_story",
    "pending_runs",
    "phase_evidence",
    "plan_overlap",
    "remove_worktree",
    "resume_run",
    "run_epic",
    "session_of",
    "settle_worktree",
    "worktree_interrupted",
]
