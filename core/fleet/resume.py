"""Runs that promptdeck did not see end: listed, settled from evidence, or resumed.

A run with no ``result.json`` whose promptdeck is gone was interrupted (``kill -9``, a power
cut, a closed terminal). Its ``meta.json`` says what it was (phase, attempt, ``sha_before``)
and ``resume.json``, once the agent reported it, its ``session_id``
(:mod:`promptdeck.core.run.runner`).

:func:`resume_run` settles one such run:

- when git and the plan already show the phase's result — a passed review's commit exists
  after ``sha_before``; a phase's status was written back by that run (its ``status.json``)
  and the plan still shows it — the run is recorded as succeeded from that evidence and
  nothing is started;
- otherwise the phase goes on as a run of its own, linked to the first (``continues``): in
  the agent's session when one was recorded (Claude Code ``--resume`` with the same system
  prompt file again, Codex ``exec resume``), or from the start with the same prompt files
  when the agent never reported one.

A run of a parallel epic lives in its story's worktree (:mod:`.worktrees`) until the flow ends
and its records are copied back. :func:`resume_run` finds an interrupted run there too, when
that worktree is not in use: it is settled or resumed inside the worktree (with the project's
trust, as the parallel run had it), the worktree is held while it runs, and
:func:`settle_worktree` then copies its records back and leaves the worktree for the next
``run --epic N --parallel K`` to take up the story's flow.
"""

from __future__ import annotations

import dataclasses
import os
import re
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agents.base import is_session_id
from ..errors import GitError, UsageError
from ..lean_dataclass import dataclass
from ..phases.outcome import exit_code_for
from ..plans.catalog import load_catalog
from ..plans.writeback import RECORD_NAME, STATUS_AFTER
from ..project.state_folder import check_state_path
from ..project.textfiles import RECORD_TEXT_LIMIT, TextProblem, read_json_object, read_text
from ..project.trust import check_trusted, config_trust, trust_config
from ..project.workspace import Workspace, open_workspace
from ..records.launched import launched_path, launched_runs
from ..records.reader import RunInfo, list_runs, load_run, load_run_dir
from ..records.schema import RunResult
from ..records.writer import RunRecord, runs_dir
from ..run import gitops
from ..run.runner import CONTINUES_KEY, RESUME_FILE, SESSION_KEY, start_run
from ..run.supervise import CANCEL_GRACE
from ..vocabulary import SUCCESS
from . import worktrees
from .worktrees import StoryWorktree

if TYPE_CHECKING:
    from ..run.handle import RunHandle
    from ..run.stream import Listener

RESUME_MESSAGE = (
    "promptdeck was interrupted while you worked on this phase, and your session goes on "
    "now. Continue where you left off: finish the phase as the instructions say and end "
    "with the phase's signal line."
)
"""The user message of a resumed session: the system prompt is sent again, unchanged."""

COMMITTING_PHASE = "review"
"""The phase whose success promptdeck commits (a passed review)."""

_SHA = re.compile(r"^[0-9a-f]{40,64}$")
_COMMITS_LOOKED_AT = 200


def session_of(run: RunInfo) -> str | None:
    """The agent session of a run: from its result, or from ``resume.json`` where the runner
    wrote it as soon as the agent reported it. Only a value that is a session id (records
    are files a repository can ship: a ``--flag`` is never handed to an argv)."""
    result = run.run_result
    kept = read_json_object(run.dir / RESUME_FILE, run.dir.parent.parent.parent.resolve())
    for value in (
        result.session_id if result is not None else None,
        None if isinstance(kept, TextProblem) else kept.get(SESSION_KEY),
    ):
        if isinstance(value, str) and is_session_id(value):
            return value
    return None


def continues_of(run: RunInfo) -> str | None:
    """The id of the interrupted run this run resumed, if it is a resumed run."""
    value = run.run_meta.extra.get(CONTINUES_KEY)
    return value if isinstance(value, str) and value else None


@dataclass(frozen=True)
class InterruptedRun:
    """A run with no result whose promptdeck is gone, and what can continue it.

    Attributes:
        run_id: the run.
        story: its story; ``phase`` and ``attempt`` the phase run.
        session_id: the agent's session, when the agent reported one before the end.
        continued_by: the run that resumed it, if one has.
    """

    run_id: str
    story: str
    phase: str
    attempt: int
    session_id: str | None
    continued_by: str | None = None

    def describe(self) -> str:
        """One line: the run, its session, and what resumes it."""
        session = f"session {self.session_id}" if self.session_id else "no session recorded"
        if self.continued_by:
            where = f"{self.run_id} ({self.story} {self.phase}, {session})"
            return f"{where}: resumed by {self.continued_by}"
        return (
            f"{self.run_id} ({self.story} {self.phase} #{self.attempt}, {session}): "
            f"promptdeck resume {self.run_id}"
        )

    def to_dict(self) -> dict[str, Any]:
        """JSON shape."""
        return dataclasses.asdict(self)


def interrupted_runs(runs: list[RunInfo], *, pending: bool = True) -> tuple[InterruptedRun, ...]:
    """The interrupted runs among ``runs`` (oldest first); only those no run has resumed yet
    when ``pending``."""
    resumed = {continues_of(run): run.id for run in runs if continues_of(run)}
    found: list[InterruptedRun] = []
    for run in runs:
        if run.outcome != "interrupted":
            continue
        later = resumed.get(run.id)
        if pending and later is not None:
            continue
        found.append(
            InterruptedRun(
                run.id, run.story, run.phase, run.attempt, session_of(run), continued_by=later
            )
        )
    return tuple(found)


def committed_runs(root: Path) -> frozenset[str]:
    """The ids of the run folders git tracks: records that came with the repository (a clone
    can ship ``.promptdeck/runs/``), never runs promptdeck recorded here. Resumed, such a
    record's ``system.md`` would replace promptdeck's system prompt."""
    repo = gitops.open_repo(root)
    if repo is None:
        return frozenset()
    runs = runs_dir(root.resolve())
    try:
        listed = gitops.run_git(repo, "ls-files", "-z", "--full-name", "--", str(runs))
    except GitError:
        return frozenset()
    top = Path(str(repo.working_tree_dir)).resolve()
    found: set[str] = set()
    for name in listed.split("\0"):
        try:
            parts = (top / name).relative_to(runs).parts
        except ValueError:
            continue
        if len(parts) > 1:
            found.add(parts[0])
    return frozenset(found)


def pending_runs(root: Path) -> tuple[InterruptedRun, ...]:
    """The interrupted runs of ``root`` no run has resumed, those promptdeck launched for this
    user only (:mod:`promptdeck.core.records.launched`) and never one whose record git tracks."""
    waiting = interrupted_runs(list_runs(root))
    if not waiting:
        return waiting
    launched = launched_runs()
    committed = committed_runs(root)
    return tuple(
        item for item in waiting if item.run_id in launched and item.run_id not in committed
    )


def interrupted_notice(root: Path) -> str | None:
    """The one line said at start when runs were interrupted and are not yet resumed."""
    waiting = pending_runs(root)
    if not waiting:
        return None
    first = waiting[-1]
    more = f" (and {len(waiting) - 1} more: promptdeck runs)" if len(waiting) > 1 else ""
    return (
        f"{len(waiting)} run(s) interrupted: {first.describe()}{more}"
        if len(waiting) > 1
        else f"a run was interrupted: {first.describe()}"
    )


# -- evidence ---------------------------------------------------------------------------------


def phase_evidence(workspace: Workspace, run: RunInfo) -> tuple[str, ...]:
    """What git and the plan show of an interrupted run's result: one line per fact, or
    nothing when they do not show it succeeded.

    A phase that commits (a passed review, with git) shows it only by its commit after
    ``sha_before``; another phase by the status its success wrote back (``status.json`` in
    its folder, with an edit) while the plan still shows that status.
    """
    meta = run.run_meta
    catalog = load_catalog(workspace)
    try:
        story = catalog.find(run.story)
    except UsageError:
        return ()
    root = workspace.root.resolve()
    status = read_json_object(run.dir / RECORD_NAME, root)
    wrote_status = (
        not isinstance(status, TextProblem)
        and bool(status.get("edits"))
        and not status.get("failures")
        and status.get("phase") == run.phase
    )
    expected = STATUS_AFTER.get(run.phase)
    facts: list[str] = []
    # A simulation commits only where the config lets it (the demo's replay_git).
    commits = not meta.simulation or workspace.config.agent_replay_git
    if meta.git and run.phase == COMMITTING_PHASE and commits:
        commit = _story_commit(workspace, meta.sha_before, story.id, story.title)
        if commit is None:
            return ()
        facts.append(f"commit {commit} after {str(meta.sha_before)[:10]}")
    if wrote_status and (expected is None or story.status == expected):
        facts.append(f"status {story.status} written back by the run")
    elif not facts:
        return ()
    return tuple(facts)


def _story_commit(
    workspace: Workspace, sha_before: str | None, story_id: str, title: str
) -> str | None:
    """The story's commit (its message from ``git.commit_template``) after ``sha_before``."""
    if not sha_before or not _SHA.match(sha_before):
        return None
    repo = gitops.open_repo(workspace.root)
    if repo is None:
        return None
    wanted = gitops.commit_message(workspace.config.git_commit_template, story_id, title).strip()
    try:
        for commit in repo.iter_commits(f"{sha_before}..HEAD", max_count=_COMMITS_LOOKED_AT):
            if str(commit.message).strip() == wanted:
                return str(commit.hexsha)
    except Exception:  # an unknown sha_before, a broken repository: no evidence
        return None
    return None


def record_from_evidence(run: RunInfo, facts: tuple[str, ...]) -> RunResult:
    """Write the interrupted run's ``result.json`` as succeeded, from ``facts``, and read it
    back as every record is read (a result is built in one place: the run's policy)."""
    meta = run.run_meta
    commit = next((f.split()[1] for f in facts if f.startswith("commit ")), None)
    record = {
        "run_id": run.id,
        "story": run.story,
        "phase": run.phase,
        "attempt": run.attempt,
        "mode": meta.mode or "create",
        "agent": meta.agent or "",
        "outcome": SUCCESS,
        "exit_code": exit_code_for(SUCCESS),
        "process_exit": None,
        "duration_s": round(max(0.0, time.time() - meta.started_ts), 3) if meta.started_ts else 0,
        "signal": None,
        "signals": 0,
        "message": "succeeded (recorded after promptdeck was interrupted): " + "; ".join(facts),
        "session_id": session_of(run),
        "sha_before": meta.sha_before,
        "commit": commit,
        "warnings": [],
        "simulation": meta.simulation,
        "evidence": list(facts),
    }
    RunRecord(run.dir, run.id).write_result(record)
    again = load_run_dir(run.dir)
    result = again.run_result if again is not None else None
    if result is None:
        raise UsageError(f"run {run.id}: its result could not be read back after it was written")
    return result


# -- resuming ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class Resumption:
    """What :func:`resume_run` did with an interrupted run.

    Attributes:
        interrupted: the run resumed.
        note: one line: what was done, and why.
        recorded: the result recorded from evidence (nothing was started), or None.
        handle: the resumed run, started; None when the result was recorded.
        worktree: the story worktree the run was resumed in (a parallel epic's), held until
            :func:`settle_worktree`; None for a run of the project itself.
    """

    interrupted: InterruptedRun
    note: str
    recorded: RunResult | None = None
    handle: RunHandle | None = None
    worktree: StoryWorktree | None = None


def run_in_worktree(root: Path, run_id: str) -> StoryWorktree | None:
    """The story worktree not in use whose own records hold the run ``run_id`` names (an id
    or a unique prefix; ``last`` is the project's own), or None."""
    if run_id == "last":
        return None
    for worktree in worktrees.list_worktrees(root):
        if worktree.state == "running" or not worktree.path.is_dir():
            continue
        try:
            load_run(worktree.path, run_id)
        except UsageError:
            continue
        return worktree
    return None


def worktree_interrupted(root: Path) -> list[tuple[StoryWorktree, InterruptedRun]]:
    """The interrupted runs not yet resumed in the story worktrees not in use."""
    found: list[tuple[StoryWorktree, InterruptedRun]] = []
    for worktree in worktrees.list_worktrees(root):
        if worktree.state == "running" or not worktree.path.is_dir():
            continue
        launched = launched_runs()
        found.extend(
            (worktree, item)
            for item in interrupted_runs(list_runs(worktree.path))
            if item.run_id in launched
        )
    return found


def release_worktree(workspace: Workspace, worktree: StoryWorktree, run_id: str) -> None:
    """Copy a story worktree's records back to the project and leave the worktree for the
    next parallel run to take up the story's flow."""
    worktrees.collect_runs(workspace, worktree)
    note = (
        f"run {run_id} resumed here; `promptdeck run --epic N --parallel K` goes on with the "
        "story's flow"
    )
    worktrees.save(
        workspace.root, dataclasses.replace(worktree, state="interrupted", pid=None, note=note)
    )


def settle_worktree(workspace: Workspace, resumption: Resumption) -> None:
    """After a run resumed in a story worktree ended: :func:`release_worktree` (nothing for a
    run of the project itself)."""
    if resumption.worktree is not None:
        release_worktree(workspace, resumption.worktree, resumption.interrupted.run_id)


def resumable(root: Path, run_id: str) -> tuple[RunInfo, InterruptedRun]:
    """The interrupted run ``run_id`` names (an id, a unique prefix, ``last``).

    Raises:
        UsageError: no such run, or it is not interrupted, or another run resumed it (exit 2).
    """
    runs = list_runs(root)
    run = load_run(root, run_id)
    if run.outcome == "running":
        raise UsageError(
            f"run {run.id} is still running (pid {run.run_meta.pid}): nothing to resume"
        )
    if run.outcome != "interrupted":
        raise UsageError(f"run {run.id} ended {run.outcome}: nothing to resume")
    # Settling a run writes in its folder: never through a link (to a folder of the project).
    check_state_path(root.resolve(), runs_dir(root.resolve()) / run.dir.name / RESUME_FILE)
    if run.id in committed_runs(root):
        raise UsageError(
            f"run {run.id}: its record is committed to the repository, not one promptdeck "
            "recorded here: it is not resumed"
        )
    if run.id not in launched_runs():
        raise UsageError(
            f"run {run.id}: promptdeck did not launch it for you (it is not in "
            f"{launched_path()}): a run folder written into the project by something else is "
            "not resumed"
        )
    found = next(i for i in interrupted_runs(runs, pending=False) if i.run_id == run.id)
    if found.continued_by is not None:
        raise UsageError(
            f"run {run.id} was already resumed by run {found.continued_by}: resume that one if it "
            "was interrupted too"
        )
    return run, found


def resume_run(
    workspace: Workspace,
    run_id: str,
    *,
    agent: str | None = None,
    listener: Listener | None = None,
    timeout: float | None = None,
    replay_script: str | None = None,
    cancel_grace: tuple[float, float] = CANCEL_GRACE,
) -> Resumption:
    """Settle or continue the interrupted run ``run_id`` (see the module's description): in
    the story worktree not in use whose records hold it, when one does (call
    :func:`settle_worktree` once its handle has ended).

    Raises:
        UsageError: not an interrupted run, its story is gone, or its prompt files cannot be
            read (exit 2); and whatever :func:`promptdeck.core.run.start_run` raises.
    """
    worktree = run_in_worktree(workspace.root, run_id)
    if worktree is not None:
        here = open_workspace(worktree.path)
        # The config the user trusted in the project was copied in: trusted here too.
        chosen = agent or load_run(here.root, run_id).run_meta.agent or ""
        if not config_trust(workspace, chosen).needed and config_trust(here, chosen).needed:
            trust_config(here)
        check_trusted(here, chosen)
        held = worktrees.save(
            workspace.root, dataclasses.replace(worktree, state="running", pid=os.getpid())
        )
        try:
            done = _resume_here(here, run_id, agent, listener, timeout, replay_script, cancel_grace)
        except BaseException:
            release_worktree(workspace, held, run_id)
            raise
        done = dataclasses.replace(
            done, worktree=held, note=f"{done.note} (in story {held.story}'s worktree)"
        )
        if done.handle is None:
            settle_worktree(workspace, done)
        return done
    return _resume_here(workspace, run_id, agent, listener, timeout, replay_script, cancel_grace)


def _resume_here(
    workspace: Workspace,
    run_id: str,
    agent: str | None,
    listener: Listener | None,
    timeout: float | None,
    replay_script: str | None,
    cancel_grace: tuple[float, float],
) -> Resumption:
    """:func:`resume_run` for a run of ``workspace``'s own records."""
    from ..prompt.compose import compose_prompt
    from ..prompt.request import PromptRequest

    run, interrupted = resumable(workspace.root, run_id)
    facts = phase_evidence(workspace, run)
    if facts:
        result = record_from_evidence(run, facts)
        return Resumption(interrupted, f"run {run.id} {result.message}", recorded=result)
    meta = run.run_meta
    root = workspace.root.resolve()
    system = read_text(run.dir / "system.md", root, limit=RECORD_TEXT_LIMIT)
    user = read_text(run.dir / "user.md", root, limit=RECORD_TEXT_LIMIT)
    for name, text in (("system.md", system), ("user.md", user)):
        if isinstance(text, TextProblem) and text.reason != "empty":
            raise UsageError(f"run {run.id}: {name}: {text}; it cannot be resumed")
    catalog = load_catalog(workspace)
    story = catalog.find(run.story)
    request = PromptRequest(
        story_id=story.id,
        phase=run.phase,
        mode=meta.mode if meta.mode in ("create", "optimize") else "create",
        retry_reason=meta.retry_reason,
        variant=meta.variant,
    )
    prompt = compose_prompt(workspace, catalog, request, count_tokens=False)
    prompt = dataclasses.replace(
        prompt,
        system=system if isinstance(system, str) else "",
        user=user if isinstance(user, str) else "",
    )
    session = interrupted.session_id
    chosen = agent or meta.agent
    if session is not None and agent is not None and agent != meta.agent:
        raise UsageError(
            f"run {run.id} ran with {meta.agent}, whose session {session} another agent cannot "
            "continue: leave out --agent"
        )
    handle = start_run(
        workspace,
        prompt,
        agent=chosen,
        listener=listener,
        timeout=timeout,
        use_git=meta.git,
        replay_script=replay_script,
        attempt=run.attempt,
        resume_session=session,
        user_text=RESUME_MESSAGE if session is not None else None,
        cancel_grace=cancel_grace,
        continues=run.id,
    )
    note = (
        f"resuming run {run.id} in session {session} as run {handle.run_id}"
        if session is not None
        else (
            f"run {run.id} stopped before the agent reported a session: its phase starts again "
            f"with the same prompt as run {handle.run_id}"
        )
    )
    return Resumption(interrupted, note, handle=handle)
