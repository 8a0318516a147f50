"""What a worker that failed unexpectedly says.

Textual's ``Worker.StateChanged`` does not bubble, so every screen or widget that runs workers
reports its own, through :func:`report_failure`, instead of letting a failure vanish.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, Protocol

from textual.widget import Widget
from textual.worker import Worker, WorkerState

FAILURE_TOAST_SECONDS = 15
"""How long the toast of a failed worker stays."""


def report_failure(node: Widget, event: Worker.StateChanged) -> None:
    """Tell the user, on ``node``, that the worker of ``event`` failed, and with what."""
    if event.state == WorkerState.ERROR:
        worker = event.worker
        node.notify(
            f"{worker.description or worker.name} failed: {worker.error!r}",
            severity="error",
            timeout=FAILURE_TOAST_SECONDS,
        )


class WorkerHost(Protocol):
    """What a plain controller needs of the screen it works for: its thread workers and the
    UI thread (the screen's worker-failure handler reports a step that fails unexpectedly)."""

    def worker(self, step: Callable[[], None], group: str, description: str) -> None:
        """Take ``step`` in an exclusive thread worker of ``group``."""

    def on_ui(self, callback: Callable[..., Any], *args: Any, **kwargs: Any) -> None:
        """Call ``callback`` on the UI thread (from a worker's thread)."""

    def busy(self, groups: Iterable[str]) -> bool:
        """A worker of one of ``groups`` has not finished."""
