"""The phase flow (seed 002, with seed 003's retry rules), derived from the run records.

Manual stepping is the default: promptdeck suggests the next phase and the user starts it.
The flow of one story::

    kickoff (optional, non-blocking)
      → dev → git add -A → review → commit on REVIEW PASSED / REVIEW PASSED WITH FIXES
    dev BLOCKED / FAILED, or REVIEW FAILED
      → failure analysis (optional) → dev again in ``optimize`` mode with the reason,
        up to ``agent.max_attempts`` attempts. The analysis is informational (seed 002): a
        Skip or Escalate recommendation is shown with the retry and stops the flow only when
        ``[flow] honour_analysis`` is on
    a run that ended with no signal (timeout, crash, silence)
      → the same phase again, with no retry context (seed 003)
    every story of the epic done → UAT, then retro (both non-blocking)

Until a dev run is recorded, the story's tracked status stands in for the records (see
:func:`status_start`): a story the plan calls ``review`` (v7 ``built``, ``in-review``) is
implemented, so review is next; one it calls ``in-progress`` is under way, so dev is next.
Kickoff, behind both, is not suggested for them; it stays one key away in the app and
``--phase kickoff`` on the command line. ``backlog`` and ``ready-for-dev`` start at the
beginning, as before (kickoff when offered, else dev).

``skip`` passes over optional phases (``run --auto`` runs kickoff, failure analysis and retro
only when asked, see :mod:`.optional_phases`): the flow goes on as if they had been declined.

:func:`story_flow` turns a story's runs into phase states and a :class:`Suggestion`;
:func:`run_auto` (``run --auto``) follows the suggestions until the story is done or stuck;
:func:`auto_course` (``run --auto --dry-run``) follows them over runs assumed to succeed.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import field
from typing import TYPE_CHECKING

from ..injection.model import Selection
from ..lean_dataclass import dataclass
from ..phases.table import PHASE_NAMES
from ..project.config import Config
from ..project.workspace import Workspace
from ..prompt.request import FailureInfo, PromptRequest
from ..stories.model import Story, StoryCatalog
from ..vocabulary import FAILURE, PHASE_STATES, SUCCESS, PhaseState

if TYPE_CHECKING:
    from ..records.reader import RunInfo

STATES = PHASE_STATES
"""What a phase can be for a story."""
CANCELLED = "cancelled"
"""A run the user stopped: not an attempt. The flow replays as if it had not happened, so the
next suggestion (its mode, retry reason and attempt number) is the one before the cancel."""
MAX_AUTO_STEPS = 24


@dataclass(frozen=True)
class Suggestion:
    """The phase to run next, and how.

    Attributes:
        phase: the phase.
        mode: ``create`` or ``optimize`` (a retry carrying a reason).
        retry_reason: the failure reason the retry carries (None after no signal).
        failure: for the failure-analysis phase: what failed.
        attempt: the attempt number this run will be.
        why: one line saying why this phase is next.
        optional: the phase may be skipped (kickoff, failure analysis, UAT, retro).
        variant: ``standard`` or ``party``; None takes the workspace's default.
        basis: what the suggestion rests on when no dev run is recorded and the tracked
            status decides it, briefly (``status 'review', sprint-status.yaml:12``); empty
            when the records decide. The preview's title shows it after ``next``.
    """

    phase: str
    mode: str = "create"
    retry_reason: str | None = None
    failure: FailureInfo | None = None
    attempt: int = 1
    why: str = ""
    optional: bool = False
    variant: str | None = None
    basis: str = ""

    def request(self, story_id: str, selection: Selection | None = None) -> PromptRequest:
        """The prompt request for this suggestion."""
        return PromptRequest(
            story_id=story_id,
            phase=self.phase,
            mode=self.mode,
            selection=selection or Selection(),
            retry_reason=self.retry_reason,
            failure=self.failure,
            variant=self.variant,
        )


@dataclass(frozen=True)
class StoryFlow:
    """A story's place in the flow.

    Attributes:
        story_id: the story.
        states: each phase's state, in phase order.
        suggestion: what to run next, or None.
        note: why nothing is suggested, or extra advice.
        done: the story's review passed (and was committed) after its last dev run.
    """

    story_id: str
    states: Mapping[str, PhaseState]
    suggestion: Suggestion | None
    note: str = ""
    done: bool = False


@dataclass
class _Track:
    """One phase's history, replayed from the records."""

    last: RunInfo | None = None
    failures: int = 0

    def add(self, run: RunInfo) -> None:
        self.last = run
        self.failures = 0 if run.outcome == SUCCESS else self.failures + 1

    @property
    def outcome(self) -> str | None:
        return self.last.outcome if self.last is not None else None


def _reason(run: RunInfo) -> str | None:
    signal = run.signal or {}
    reason = signal.get("reason")
    return str(reason) if reason else None


def _signal_name(run: RunInfo) -> str:
    signal = run.signal or {}
    return str(signal.get("name") or "no signal")


def _state(track: _Track) -> PhaseState:
    outcome = track.outcome
    if outcome is None:
        return "pending"
    if outcome == "running":
        return "running"
    return "done" if outcome == SUCCESS else "failed"


@dataclass
class _Replay:
    kickoff: _Track = field(default_factory=_Track)
    dev: _Track = field(default_factory=_Track)
    review: _Track = field(default_factory=_Track)
    failure: _Track = field(default_factory=_Track)
    uat: _Track = field(default_factory=_Track)
    retro: _Track = field(default_factory=_Track)
    analysis_pending_for: RunInfo | None = None
    analysis_result: RunInfo | None = None
    running: bool = False
    review_failures: int = 0
    """Failed reviews since the last passed one. Unlike ``review.failures`` it survives the
    dev reworks in between, so ``agent.max_attempts`` bounds a review that keeps failing."""


def _replay(runs: Sequence[RunInfo]) -> _Replay:
    state = _Replay()
    for run in sorted(runs, key=lambda r: (r.started, r.id)):
        if run.run_meta.mode == "chat" or run.outcome == CANCELLED:
            continue
        if run.outcome == "running":
            state.running = True
        track = getattr(state, run.phase, None)
        if not isinstance(track, _Track):
            continue
        track.add(run)
        if run.phase == "review":
            state.review_failures = 0 if run.outcome == SUCCESS else state.review_failures + 1
        if run.phase == "dev":
            # New code: any earlier review is about code that no longer exists.
            state.review = _Track()
        if run.phase in ("dev", "review") and run.outcome == FAILURE:
            state.analysis_pending_for = run
            state.analysis_result = None
        elif run.phase in ("dev", "review"):
            state.analysis_pending_for = None
            state.analysis_result = None
        if run.phase == "failure" and state.analysis_pending_for is not None:
            state.analysis_result = run
    return state


def epic_done(story: Story, catalog: StoryCatalog, runs: Sequence[RunInfo]) -> bool:
    """True when every story of ``story``'s epic is done (catalog status, or a passed review
    after its last dev run in the records)."""
    for other in catalog.in_group(story.group):
        if other.status == "done":
            continue
        mine = [r for r in runs if r.story.lower() == other.id.lower()]
        replay = _replay(mine)
        if replay.review.outcome != SUCCESS:
            return False
    return True


def story_flow(
    story: Story,
    runs: Sequence[RunInfo],
    config: Config,
    *,
    all_epic_done: bool = False,
    epic_runs: Sequence[RunInfo] = (),
    skip: frozenset[str] = frozenset(),
) -> StoryFlow:
    """Phase states and the suggested next phase for ``story``.

    Args:
        story: the story.
        runs: the story's runs (any order).
        config: for ``agent.max_attempts``.
        all_epic_done: every story of the epic is done (UAT and retro become available).
        epic_runs: UAT and retro runs of any story of the same epic.
        skip: optional phases to pass over (kickoff, failure, uat, retro).
    """
    state = _replay(runs)
    epic = _replay([r for r in epic_runs if r.phase in ("uat", "retro")])
    states: dict[str, PhaseState] = {name: "pending" for name in PHASE_NAMES}
    for name in ("kickoff", "dev", "review", "failure"):
        states[name] = _state(getattr(state, name))
    for name in ("uat", "retro"):
        states[name] = _state(getattr(epic, name))
    start = status_start(story) if state.dev.last is None else None
    if states["kickoff"] == "pending" and (state.dev.last is not None or start is not None):
        states["kickoff"] = "skipped"
    # A story its tracking already calls done (and no dev run since) is not offered a kickoff.
    done = state.review.outcome == SUCCESS or (story.status == "done" and state.dev.last is None)
    suggestion, note = _suggest(
        state, epic, config, done=done, all_epic_done=all_epic_done, skip=skip, start=start
    )
    if not story.status_known and state.dev.last is None and not done:
        # A status promptdeck cannot read (`deployed-awaiting-user-smoke`) may mean the work
        # is long finished: no fresh kickoff is offered; the user picks the phase.
        suggestion = None
        note = (
            f"status '{story.status}' is not one promptdeck knows"
            + (f" ({story.status_source})" if story.status_source else "")
            + ": choose a phase yourself"
        )
    if suggestion is not None:
        states[suggestion.phase] = "suggested"
    return StoryFlow(story.id, states, suggestion, note, done)


@dataclass(frozen=True)
class StatusStart:
    """Where a story's tracked status puts it while no dev run is recorded.

    Attributes:
        phase: ``review`` (the work is implemented) or ``dev`` (the work is under way).
        why: the suggestion's reason, naming the status and where it was read
            (``status 'review' (sprint-status.yaml:12): the work is implemented``).
        basis: the status and the file it was read from, for a title
            (``status 'review', sprint-status.yaml:12``).
    """

    phase: str
    why: str
    basis: str


_STATUS_STARTS = {
    "review": ("review", "the work is implemented"),
    "in-progress": ("dev", "the work is under way"),
}
"""The statuses that put a story past its kickoff. ``backlog`` and ``ready-for-dev`` start
where the flow starts (kickoff when it is offered, else dev); ``done`` is done. A v7 plan's
``built`` and ``in-review`` are read as ``review``, its ``blocked`` as ``in-progress``."""


def status_start(story: Story) -> StatusStart | None:
    """The phase ``story``'s tracked status says is next when no dev run is recorded, or None
    when the flow starts from its beginning (``backlog``, ``ready-for-dev``, ``done``, or a
    status promptdeck does not know)."""
    if not story.status_known or story.status not in _STATUS_STARTS:
        return None
    phase, says = _STATUS_STARTS[story.status]
    where = "; ".join(part for part in (story.status_note, story.status_source) if part)
    shown = f"status '{story.status}'"
    # The title has little room: the file's name and line, not its folders.
    source = story.status_source.rsplit("/", 1)[-1]
    return StatusStart(
        phase,
        shown + (f" ({where})" if where else "") + f": {says}",
        shown + (f", {source}" if source else ""),
    )


def _suggest(
    state: _Replay,
    epic: _Replay,
    config: Config,
    *,
    done: bool,
    all_epic_done: bool,
    skip: frozenset[str] = frozenset(),
    start: StatusStart | None = None,
) -> tuple[Suggestion | None, str]:
    limit = config.agent_max_attempts
    if state.running:
        return None, "a run of this story is in progress"
    if done:
        if not all_epic_done:
            return None, "story done; UAT and retro follow once every story of the epic is done"
        if epic.uat.last is None and "uat" not in skip:
            return Suggestion("uat", why="every story of the epic is done", optional=True), ""
        if epic.retro.last is None and "retro" not in skip:
            return Suggestion("retro", why="UAT was run", optional=True), ""
        return None, "story and epic done" + _retro_note(epic, skip)
    dev = state.dev
    if dev.last is None and start is not None and start.phase == "dev":
        return Suggestion("dev", why=start.why, basis=start.basis), ""
    # The status says the work is implemented: the flow goes on as after a passed dev run.
    implemented = dev.last is None and start is not None and start.phase == "review"
    if dev.last is None and not implemented:
        if state.kickoff.last is None and "kickoff" not in skip:
            return (
                Suggestion("kickoff", why="a fresh story (kickoff is optional)", optional=True),
                "",
            )
        why = "kickoff was run" if state.kickoff.last is not None else "kickoff not asked for"
        return Suggestion("dev", why=why), ""
    failed = state.analysis_pending_for
    if failed is not None:
        reason = _reason(failed) or ""
        attempts = dev.failures if failed.phase == "dev" else state.review_failures
        if attempts >= limit and failed.phase == "dev":
            return None, f"dev failed {attempts} times (agent.max_attempts = {limit})"
        if failed.phase == "review" and attempts >= limit:
            return None, f"review failed {attempts} times (agent.max_attempts = {limit})"
        analysis = state.analysis_result
        if analysis is None and "failure" not in skip:
            return (
                Suggestion(
                    "failure",
                    failure=FailureInfo(failed.phase, _signal_name(failed), reason),
                    why=f"{failed.phase} ended with {_signal_name(failed)}",
                    optional=True,
                ),
                "",
            )
        recommendation = (
            _reason(analysis) if analysis is not None and analysis.outcome == SUCCESS else None
        )
        why = f"retry after {_signal_name(failed)}: {reason}"
        if recommendation in ("Skip", "Escalate"):
            if config.flow_honour_analysis:
                return None, f"failure analysis recommends {recommendation} (flow.honour_analysis)"
            # Seed 002: the analysis is informational; it never changes the retry decision.
            why += f" · failure analysis recommends {recommendation} (informational)"
        return (
            Suggestion(
                "dev",
                mode="optimize",
                retry_reason=reason or None,
                attempt=dev.failures + 1 if failed.phase == "dev" else 1,
                why=why,
            ),
            "",
        )
    if dev.outcome != SUCCESS and not implemented:
        if dev.failures >= limit:
            return None, f"dev ended without a signal {dev.failures} times (max {limit})"
        return (
            Suggestion(
                "dev", attempt=dev.failures + 1, why=f"dev ended with {dev.outcome}: run it again"
            ),
            "",
        )
    review = state.review
    if review.last is None:
        if implemented and start is not None:
            return Suggestion("review", why=start.why, basis=start.basis), ""
        return Suggestion("review", why="dev completed and its changes are staged"), ""
    if review.failures >= limit:
        return None, f"review ended without a signal {review.failures} times (max {limit})"
    return (
        Suggestion(
            "review",
            attempt=review.failures + 1,
            why=f"review ended with {review.outcome}: run it again",
        ),
        "",
    )


def _retro_note(epic: _Replay, skip: frozenset[str]) -> str:
    if epic.retro.last is not None and epic.retro.outcome != SUCCESS:
        # Seed 002: a failed retro is a warning; the epic is complete all the same.
        return f" (warning: the retro ended with {epic.retro.outcome})"
    if epic.retro.last is None and "retro" in skip:
        return " (retro not asked for)"
    return ""


def flow_for(
    workspace: Workspace,
    catalog: StoryCatalog,
    story: Story,
    runs: Sequence[RunInfo] | None = None,
    *,
    skip: frozenset[str] = frozenset(),
) -> StoryFlow:
    """:func:`story_flow` from the workspace's records.

    Args:
        runs: every run of the workspace, when the caller has read them already (reading
            them means opening every run folder).
        skip: optional phases to pass over (``run --auto`` without them asked for).
    """
    if runs is None:
        from ..records.reader import list_runs  # here: most callers hand in the runs they read

        runs = list_runs(workspace.root)
    mine = [r for r in runs if r.story.lower() == story.id.lower()]
    group = {s.id.lower() for s in catalog.in_group(story.group)}
    epic_runs = [r for r in runs if r.story.lower() in group]
    return story_flow(
        story,
        mine,
        workspace.config,
        all_epic_done=epic_done(story, catalog, runs),
        epic_runs=epic_runs,
        skip=skip,
    )


def last_failure(
    workspace: Workspace, story_id: str, runs: Sequence[RunInfo] | None = None
) -> FailureInfo | None:
    """What the failure-analysis phase should be told: the story's last failed dev or review
    run, or None. ``runs``: the workspace's runs, when the caller has read them already."""
    if runs is None:
        from ..records.reader import list_runs

        runs = list_runs(workspace.root, story_id)
    wanted = story_id.lower()
    for run in reversed(runs):
        if run.story.lower() != wanted:
            continue
        if run.phase in ("dev", "review") and run.outcome not in (SUCCESS, "running"):
            message = _reason(run) or str((run.result or {}).get("message") or run.outcome)
            return FailureInfo(run.phase, _signal_name(run), message)
    return None


@dataclass(frozen=True)
class AutoStep:
    """One step of ``--auto``: the suggestion followed and the run's result."""

    suggestion: Suggestion
    result: object


def run_auto(
    workspace: Workspace,
    story_id: str,
    run_step: Callable[[Story, StoryCatalog, Suggestion], object],
    *,
    load: Callable[[Workspace], StoryCatalog],
    first: Suggestion | None = None,
    on_suggestion: Callable[[Suggestion], None] | None = None,
    max_steps: int = MAX_AUTO_STEPS,
    skip: frozenset[str] = frozenset(),
) -> tuple[list[AutoStep], StoryFlow]:
    """Follow the suggestions for one story until none is left (``run --auto``).

    Args:
        workspace: the workspace.
        story_id: the story.
        run_step: runs one suggestion to its end (composes, starts, waits) and returns its
            result; the catalog is reloaded before each step, so each compose reads the files
            as the previous phase left them.
        load: loads the catalog (``load_catalog``).
        first: start with this instead of the first suggestion (``--phase`` given).
        on_suggestion: told each suggestion before it runs.
        max_steps: a bound on the number of runs.
        skip: optional phases not asked for, passed over (see :mod:`.optional_phases`).

    Returns:
        The steps taken and the story's flow at the end.
    """
    steps: list[AutoStep] = []
    catalog = load(workspace)
    story = catalog.find(story_id)
    flow = flow_for(workspace, catalog, story, skip=skip)
    suggestion = first or flow.suggestion
    while suggestion is not None and len(steps) < max_steps:
        if on_suggestion is not None:
            on_suggestion(suggestion)
        result = run_step(story, catalog, suggestion)
        steps.append(AutoStep(suggestion, result))
        # Cancelled, a refused git step, an unsaved record, a status that could not be
        # written: running on would only repeat it.
        if getattr(result, "outcome", None) in (
            "cancelled",
            "git-failed",
            "unsaved",
            "status-failed",
            "scope-violated",
        ):
            break
        catalog = load(workspace)
        story = catalog.find(story_id)
        flow = flow_for(workspace, catalog, story, skip=skip)
        suggestion = flow.suggestion
    return steps, flow


def auto_course(
    workspace: Workspace,
    catalog: StoryCatalog,
    story: Story,
    *,
    first: Suggestion | None = None,
    skip: frozenset[str] = frozenset(),
    max_steps: int = MAX_AUTO_STEPS,
) -> tuple[tuple[Suggestion, ...], StoryFlow]:
    """The phases ``run --auto`` would run for ``story``, in order, each with why, were each to
    end with success: :func:`run_auto`'s own suggestions, followed over assumed passing runs
    added to the records read (nothing is run or written).

    Args:
        first: start with this instead of the first suggestion (``--phase`` given).
        skip: optional phases not asked for (see :mod:`.optional_phases`).

    Returns:
        The phases, and the story's flow after the last (its note says what is left).
    """
    from ..records.reader import RunInfo, list_runs

    runs = list(list_runs(workspace.root))
    flow = flow_for(workspace, catalog, story, runs, skip=skip)
    suggestion = first or flow.suggestion
    course: list[Suggestion] = []
    latest = max((run.started for run in runs), default=0.0)
    while suggestion is not None and len(course) < max_steps:
        course.append(suggestion)
        latest += 1.0
        meta = {
            "story": story.id,
            "phase": suggestion.phase,
            "mode": suggestion.mode,
            "attempt": suggestion.attempt,
            "started_ts": latest,
        }
        assumed = f"assumed-{len(course)}"
        runs.append(RunInfo(assumed, workspace.root, meta, {"outcome": SUCCESS}, ()))
        flow = flow_for(workspace, catalog, story, runs, skip=skip)
        suggestion = flow.suggestion
    return tuple(course), flow
