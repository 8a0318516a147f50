"""An epic's stories run side by side: ``run --epic N --parallel K``.

The waves come from the overlap plan (:mod:`.overlap`): the stories of a wave never touch the
same predicted files. Each story of a wave runs its whole flow (as ``run --auto`` does) in its
own worktree (:mod:`.worktrees`), at most ``parallel`` at once; its run records are copied
into the project's. Then the merge lane (:mod:`.merge`) brings the finished stories back into
the user's branch one at a time, in plan order; the next wave starts from the result, so it
sees the earlier waves' work. A story whose flow stopped short, or whose merge stopped, keeps
its worktree and branch, and the epic stops after that wave: the later waves may need it.

The user's checkout and HEAD move only at a merge. A story already ``done`` is passed over; a
worktree left by a promptdeck that was killed is taken up again where its records stand: its
interrupted run is settled from evidence or resumed (:mod:`.resume`), then its flow goes on.
"""

from __future__ import annotations

import dataclasses
import os
import threading
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from ..agents.registry import resolve_agent_name
from ..errors import PromptdeckError, SecretsInInjection, UsageError
from ..lean_dataclass import dataclass
from ..plans.catalog import load_catalog
from ..project.trust import check_trusted, config_trust, trust_config, trust_digest
from ..project.workspace import Workspace, open_workspace
from ..records.schema import RunResult
from ..run.flow import run_auto
from ..run.locks import holding
from ..run.optional_phases import auto_plan
from ..run.runner import start_run
from . import worktrees
from .merge import MergeOutcome, merge_story
from .overlap import OverlapPlan, epic_overlap
from .resume import pending_runs, resume_run
from .worktrees import StoryWorktree

if TYPE_CHECKING:
    from ..run.flow import Suggestion
    from ..stories.model import Story, StoryCatalog

Log = Callable[[str], None]
_COLLECTING = threading.Lock()
"""One story at a time copies its records into the project's."""


@dataclass(frozen=True)
class StoryRun:
    """One story of a parallel epic run.

    Attributes:
        story: the story.
        wave: its wave (1-based).
        done: its flow finished (review passed).
        results: its runs, in order.
        merge: what the merge lane did with it (None when it was not merged: not done).
        note: one line: why it stopped, what it did.
    """

    story: str
    wave: int
    done: bool
    results: tuple[RunResult, ...] = ()
    merge: MergeOutcome | None = None
    note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON shape."""
        merge = self.merge
        return {
            "story": self.story,
            "wave": self.wave,
            "done": self.done,
            "merged": merge.merged if merge is not None else False,
            "merge_commit": merge.commit if merge is not None else None,
            "conflicts": list(merge.conflicts) if merge is not None else [],
            "note": self.note,
            "runs": [result.run_id for result in self.results],
        }


@dataclass(frozen=True)
class EpicRun:
    """A parallel epic run: its plan, and each story's run in plan order."""

    epic: str
    plan: OverlapPlan
    stories: tuple[StoryRun, ...]
    stopped: str = ""
    """Why the epic stopped before its last wave (empty when every wave ran)."""

    @property
    def complete(self) -> bool:
        """Every story run was done and merged."""
        return not self.stopped and all(
            run.done and run.merge is not None and run.merge.merged for run in self.stories
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON shape of ``run --epic --parallel --json``."""
        return {
            "epic": self.epic,
            "waves": [list(wave) for wave in self.plan.waves],
            "stories": [run.to_dict() for run in self.stories],
            "stopped": self.stopped or None,
        }


@dataclass(frozen=True)
class ParallelRequest:
    """What a parallel epic run was asked: the epic, how many at once, the agent."""

    epic: str
    parallel: int
    agent: str | None = None
    replay_script: str | None = None
    timeout: float | None = None
    allow_secrets: bool = False


def run_epic(workspace: Workspace, request: ParallelRequest, log: Log) -> EpicRun:
    """Run the epic's stories wave by wave, each in its worktree, and merge them back.

    Raises:
        UsageError: ``parallel`` under 1, or a worktree that cannot be made (exit 2).
        UntrustedConfig: the project's config is not trusted (exit 10).
        GitError: the project is not in a git repository.
    """
    if request.parallel < 1:
        raise UsageError(f"--parallel {request.parallel}: expected at least 1")
    agent = resolve_agent_name(request.agent, workspace.config)
    check_trusted(workspace, agent)
    plan = epic_overlap(workspace, request.epic)
    for problem in plan.problems:
        log(f"warning: {problem}")
    catalog = load_catalog(workspace)
    done = {story.id for story in catalog.in_group(request.epic) if story.status == "done"}
    titles = {story.id: story.title for story in catalog.in_group(request.epic)}
    runs: list[StoryRun] = []
    for number, wave in enumerate(plan.waves, start=1):
        todo = [story for story in wave if story not in done]
        if not todo:
            continue
        log(f"wave {number}: {' '.join(todo)}")
        # The worktrees are made one by one here: git takes locks in the shared repository.
        ready = {story: _prepare(workspace, story, number, log) for story in todo}
        with ThreadPoolExecutor(max_workers=request.parallel) as pool:
            futures = [
                pool.submit(_story_flow, workspace, ready[story], number, request, agent, log)
                for story in todo
            ]
            finished = [future.result() for future in futures]
        for story_run in finished:  # the merge lane: one at a time, in plan order
            story_run = _merge(workspace, story_run, titles.get(story_run.story, ""), log)
            runs.append(story_run)
        left = [r.story for r in runs[-len(finished) :] if not (r.merge and r.merge.merged)]
        if left:
            stopped = f"wave {number} did not finish ({', '.join(left)}): later waves wait"
            log(stopped)
            return EpicRun(request.epic, plan, tuple(runs), stopped)
    return EpicRun(request.epic, plan, tuple(runs))


def _merge(workspace: Workspace, story_run: StoryRun, title: str, log: Log) -> StoryRun:
    worktree = worktrees.load(workspace.root, story_run.story)
    if not story_run.done or worktree is None:
        return story_run
    outcome = merge_story(workspace, worktree, title)
    log(outcome.note)
    if outcome.merged:
        worktrees.remove_worktree(workspace, worktree, branch=True)
    else:
        state = "waiting" if outcome.waiting else "conflict"
        worktrees.save(
            workspace.root, dataclasses.replace(worktree, state=state, note=outcome.note)
        )
    return dataclasses.replace(story_run, merge=outcome, note=outcome.note)


def _prepare(workspace: Workspace, story_id: str, wave: int, log: Log) -> StoryWorktree | StoryRun:
    """The story's worktree, made or taken up; or, when it cannot be, the story's end."""
    try:
        return _worktree_for(workspace, story_id, log)
    except PromptdeckError as exc:
        return StoryRun(story_id, wave, False, note=f"story {story_id}: {exc}")


def _story_flow(
    workspace: Workspace,
    ready: StoryWorktree | StoryRun,
    wave: int,
    request: ParallelRequest,
    agent: str,
    log: Log,
) -> StoryRun:
    """The story's whole flow in its worktree; never raises (its failure is its note)."""
    if isinstance(ready, StoryRun):
        return ready
    worktree, story_id = ready, ready.story
    try:
        if worktree.state in ("finished", "waiting"):
            return StoryRun(story_id, wave, True, note="finished earlier: waiting to merge")
        results, flow_done, note = _flow(workspace, worktree, request, agent)
    except PromptdeckError as exc:
        return StoryRun(story_id, wave, False, note=f"story {story_id}: {exc}")
    except Exception as exc:  # a story's bug must not stop the others'
        return StoryRun(story_id, wave, False, note=f"story {story_id}: internal error: {exc!r}")
    state = "finished" if flow_done else "stopped"
    worktrees.save(workspace.root, dataclasses.replace(worktree, state=state, note=note))
    log(f"story {story_id}: {state}" + (f" ({note})" if note else ""))
    return StoryRun(story_id, wave, flow_done, tuple(results), note=note)


def _worktree_for(workspace: Workspace, story_id: str, log: Log) -> StoryWorktree:
    existing = worktrees.load(workspace.root, story_id)
    if existing is None:
        made, notes = worktrees.create(workspace, story_id)
        for note in notes:
            log(f"warning: {note}")
        return made
    if existing.state in ("finished", "waiting"):
        return existing
    if existing.state == "interrupted" and existing.path.is_dir():
        log(f"story {story_id}: taking up its worktree left by pid {existing.pid}")
        return worktrees.save(
            workspace.root, dataclasses.replace(existing, state="running", pid=os.getpid())
        )
    raise UsageError(
        f"its worktree is {existing.state} ({existing.note or existing.branch}): settle it, or "
        f"`promptdeck resume --clean {story_id}`"
    )


def _same_trust(project: Workspace, here: Workspace) -> bool:
    """Whether the worktree's config, the programs it names and the client settings are the
    project's, byte for byte (what trusting either records is the same)."""
    try:
        mine = trust_digest(project)
        return mine is not None and trust_digest(here) == mine
    except PromptdeckError:  # too many files beside a named script: nothing is taken as same
        return False


def _flow(
    workspace: Workspace, worktree: StoryWorktree, request: ParallelRequest, agent: str
) -> tuple[list[RunResult], bool, str]:
    here = open_workspace(worktree.path)
    # The same config the user trusted in the project, copied in: trusted here too. Only the
    # same: a worktree taken up again holds what its agent wrote, and a config (or a program
    # it names) changed there is the user's to trust, never promptdeck's.
    if (
        not config_trust(workspace, agent).needed
        and config_trust(here, agent).needed
        and _same_trust(workspace, here)
    ):
        trust_config(here)
    check_trusted(here, agent)
    plan = auto_plan(here.config)
    # A run its promptdeck did not see end (kill -9): settled or resumed before the flow goes on.
    for waiting in pending_runs(here.root):
        resumed = resume_run(
            here,
            waiting.run_id,
            timeout=request.timeout,
            replay_script=request.replay_script,
        )
        if resumed.handle is not None:
            resumed.handle.wait()

    def step(current: Story, catalog: StoryCatalog, suggestion: Suggestion) -> RunResult:
        from ..prompt.compose import compose_prompt

        prompt = compose_prompt(here, catalog, suggestion.request(current.id), count_tokens=False)
        if prompt.injection.secrets and not request.allow_secrets:
            raise SecretsInInjection([str(finding) for finding in prompt.injection.secrets])
        handle = start_run(
            here,
            prompt,
            agent=agent,
            timeout=request.timeout,
            replay_script=request.replay_script,
        )
        return handle.wait()

    try:
        with holding(workspace.root, worktree.story):
            steps, flow = run_auto(here, worktree.story, step, load=load_catalog, skip=plan.skip)
    finally:
        with _COLLECTING:
            worktrees.collect_runs(workspace, worktree)
    results = [s.result for s in steps if isinstance(s.result, RunResult)]
    return results, flow.done, flow.note
