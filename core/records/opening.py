"""The phase a story opens on: what the user most likely wants to read first.

An unfinished story opens on the phase the flow suggests next (its mode too: a retry opens in
``optimize``); with no dev run recorded, the flow reads the story's tracked status, so a story
its plan calls ``review`` opens on review, and the reason says so (``next: status 'review',
sprint-status.yaml:12``). A done story is not asking for work: it opens on the phase of its
last run, so the prompt that made it is what shows, else on ``dev`` (the phase that does a
story's work) — never on an epic-wide UAT or retro just because the flow would offer one. A
user who always wants one phase sets it once (``open_phase``) and every story opens there.

The app and the CLI pick the same way: :func:`opening_phase` is pure, given the story's flow
and its runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from ..lean_dataclass import dataclass
from ..phases.table import PHASE_NAMES
from ..stories.model import Story

if TYPE_CHECKING:  # the reader is needed by those who read runs, not by this module
    from .reader import RunInfo

CANCELLED = "cancelled"
"""A run the user stopped: it says nothing about where the story stands."""


class NextPhase(Protocol):
    """What the flow suggests next (:class:`promptdeck.core.run.Suggestion`)."""

    @property
    def phase(self) -> str:
        """The phase."""

    @property
    def mode(self) -> str:
        """``create`` or ``optimize``."""

    @property
    def basis(self) -> str:
        """What the suggestion rests on when the story's tracked status decides it (no dev
        run recorded), briefly; empty when the records decide."""


class FlowState(Protocol):
    """Where a story stands in the flow (:class:`promptdeck.core.run.StoryFlow`): this module
    sits below the flow's room, so it reads the flow through these two attributes."""

    @property
    def done(self) -> bool:
        """The story's review passed after its last dev run."""

    @property
    def suggestion(self) -> NextPhase | None:
        """What to run next, if anything."""


DEFAULT_PHASE = "dev"
"""Where a story with nothing else to say opens: the phase that does its work."""


@dataclass(frozen=True)
class OpeningPhase:
    """The phase (and mode) a story opens on, and why.

    Attributes:
        phase: the phase.
        mode: ``create`` or ``optimize``.
        why: a few words the preview's title shows after the phase (``next``, ``last run``,
            ``setting``, ``done``; ``next: status 'review', sprint-status.yaml:12`` when the
            story's tracked status decided it).
    """

    phase: str
    mode: str = "create"
    why: str = ""


def last_run_phase(story_id: str, runs: Sequence[RunInfo]) -> str | None:
    """The phase of ``story_id``'s latest run (chat sessions and cancelled runs left out)."""
    wanted = story_id.lower()
    mine = [
        run
        for run in runs
        if run.story.lower() == wanted
        and run.phase in PHASE_NAMES
        and run.outcome != CANCELLED
        and run.run_meta.mode != "chat"
    ]
    if not mine:
        return None
    return max(mine, key=lambda run: (run.started, run.id)).phase


def opening_phase(
    story: Story,
    flow: FlowState,
    runs: Sequence[RunInfo],
    *,
    always: str | None = None,
) -> OpeningPhase:
    """The phase ``story`` opens on.

    Args:
        story: the story (its tracked status says whether it is done).
        flow: its flow, read from the same ``runs``.
        runs: the workspace's runs (or the story's own; others are passed over).
        always: the user's ``open_phase`` setting: every story opens on it.
    """
    if always in PHASE_NAMES:
        return OpeningPhase(always, why="setting")
    if flow.done or story.status == "done":
        last = last_run_phase(story.id, runs)
        if last is not None:
            return OpeningPhase(last, why="last run")
        return OpeningPhase(DEFAULT_PHASE, why="done")
    suggestion = flow.suggestion
    if suggestion is not None:
        why = f"next: {suggestion.basis}" if suggestion.basis else "next"
        return OpeningPhase(suggestion.phase, suggestion.mode, why=why)
    last = last_run_phase(story.id, runs)
    if last is not None:
        return OpeningPhase(last, why="last run")
    return OpeningPhase(DEFAULT_PHASE, why="default")
