"""Runs interrupted with the app (or the terminal) before they ended, and what continues them.

At start the app says once, as a notice, that interrupted runs wait
(:func:`interrupted_line`: core's :func:`~promptdeck.core.fleet.interrupted_notice`, which names
``promptdeck resume``); the run history shows each interrupted run's agent session
(:func:`interrupted_sessions`), the one a resume continues. Both read run records: blocking,
for a worker; the fleet room loads with them, never at the app's start.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from promptdeck.core.records import RunInfo


def interrupted_line(root: Path) -> str | None:
    """One line when runs of the workspace at ``root`` were interrupted and not yet resumed."""
    from promptdeck.core.fleet import interrupted_notice

    return interrupted_notice(root)


def interrupted_sessions(runs: Sequence[RunInfo]) -> dict[str, str]:
    """Each interrupted run's id → what its signal cell says: its agent session and what
    continues it (``session 5f0c… · promptdeck resume <run>``, or the run that resumed it)."""
    from promptdeck.core.fleet import interrupted_runs

    shown: dict[str, str] = {}
    for run in interrupted_runs(list(runs), pending=False):
        session = f"session {run.session_id}" if run.session_id else "no session recorded"
        then = (
            f"resumed by {run.continued_by}"
            if run.continued_by
            else f"promptdeck resume {run.run_id}"
        )
        shown[run.run_id] = f"{session} · {then}"
    return shown
