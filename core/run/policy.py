"""A run's policy once its process has ended: what the outcome is, what git does, what is
recorded.

:class:`RunPolicy` settles a run from the facts the process supervision and the stream
gathered: signals naming another story are set aside, the outcome is decided by
:func:`promptdeck.core.phases.outcome.decide_outcome`, the story file is checked to have stayed
append-only, the story's status is written back, a completed dev phase is staged and a
passed review committed, and the one :class:`RunResult` is built (:meth:`RunPolicy.result`,
the only place one is made) and written as ``result.json``. Each step's failure is a
warning, never a hung run.
"""

from __future__ import annotations

import contextlib
import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from ..agent_names import is_simulation
from ..cost.record import record_actual, record_prediction
from ..errors import GitError
from ..flight.store import turns_of
from ..guard.check import ScopeCheck, ScopeGuard
from ..lean_dataclass import dataclass
from ..phases.outcome import (
    ProcessEnd,
    decide_outcome,
    exit_code_for,
    outcome_message,
    settle_outcome,
)
from ..phases.signals import Signal, deciding_signal
from ..plans.writeback import StatusUpdate, write_back
from ..project.textfiles import TextProblem, read_file_bytes
from ..project.workspace import Workspace
from ..records.schema import RunResult
from ..stories.keys import normalize_key
from ..vocabulary import SUCCESS, Outcome
from . import gitops
from .plan import run_model
from .stream import StreamProcessor

if TYPE_CHECKING:
    from ..prompt.request import ComposedPrompt
    from .prepare import PreparedRun

_T = TypeVar("_T")

CHANGED_PATHS_KEPT = 2000
"""At most this many changed paths are kept in a run's ``result.json``."""


def story_rewritten(before: bytes, after: bytes) -> bool:
    """True when ``after`` changed ``before``'s content rather than only appending to it.

    Ticking a task checkbox (``[ ]`` → ``[x]``) is not a rewrite: agents mark tasks done.
    Un-ticking one (``[x]`` → ``[ ]``) is: it undoes recorded work.
    """
    if after.startswith(before):
        return False
    head = after[: len(before)]
    if len(head) != len(before):
        return True
    for index, (old, new) in enumerate(zip(before, head, strict=True)):
        if old == new:
            continue
        ticked = (
            old == 0x20
            and new in (0x78, 0x58)  # x, X
            and before[index - 1 : index] == b"["
            and before[index + 1 : index + 2] == b"]"
        )
        if not ticked:
            return True
    return False


@dataclass(frozen=True)
class ProcessFacts:
    """How the process part of a run ended, as the supervision saw it.

    Attributes:
        returncode: the process's exit code; None when it never started or was not reaped.
        error: the one line that explains a run that could not launch or crashed.
        launch_failed: the process could not be started.
        crashed: promptdeck itself failed while the run went on.
        timed_out: the time limit stopped it.
        cancelled: the user stopped it.
    """

    returncode: int | None = None
    error: str | None = None
    launch_failed: bool = False
    crashed: bool = False
    timed_out: bool = False
    cancelled: bool = False


@dataclass(frozen=True)
class _GitStep:
    staged_stat: str | None = None
    commit: str | None = None
    sha_after: str | None = None


class RunPolicy:
    """The decisions of one run: the warnings before it, and its settling after.

    Args:
        notice: tells the listener (and the session log) one of promptdeck's own lines.
        warnings: the run's warnings so far; the policy adds its own to the same list.
    """

    def __init__(
        self,
        *,
        workspace: Workspace,
        prepared: PreparedRun,
        prompt: ComposedPrompt,
        repo: Any,
        before: gitops.GitSnapshot | None,
        chat: bool,
        started: float,
        timeout: float,
        warnings: list[str],
        notice: Callable[[str], None],
    ) -> None:
        self.workspace = workspace
        self.prepared = prepared
        self.prompt = prompt
        self.record = prepared.record
        self.repo = repo
        self.before = before
        self.chat = chat
        self.started = started
        self.timeout = timeout
        self.warnings = warnings
        self.notice = notice
        self.simulation = is_simulation(prepared.agent.name)
        self.git_output: str | None = None
        self.story_before: bytes | None = None
        self.scope_guard: ScopeGuard | None = None

    # -- before the launch ------------------------------------------------------------------

    def before_launch(self) -> None:
        """Keep the story file's bytes for the append-only check, and say what the git step
        will (not) do: changes already there, a repository mid-merge, a simulation."""
        # The plan's protected files as they are before the agent starts (after promptdeck's
        # own in-progress status write): what is put back if the agent changes them.
        self.scope_guard = self._guarded(
            "record the write scope",
            lambda: ScopeGuard(self.workspace.root, self.prepared.scope),
            None,
        )
        if self.scope_guard is not None:
            for note in self.scope_guard.notes:
                self.warnings.append(f"write scope: {note}")
                self.notice(f"warning: write scope: {note}")
        story_file = self._story_file()
        if story_file is not None:
            self.story_before = self._story_bytes(story_file)
        before = self.before
        if before is not None and before.dirty and not self.chat:
            shown = ", ".join(before.dirty[:5])
            more = f" and {len(before.dirty) - 5} more" if len(before.dirty) > 5 else ""
            warning = (
                f"{len(before.dirty)} file(s) were already changed before this phase "
                f"(not by it): {shown}{more}"
            )
            self.warnings.append(warning)
            self.notice(f"warning: {warning}")
        if before is not None and before.problem and self._git_step_applies():
            self.notice(f"warning: git: {before.problem}: the git step will be refused")
        if self._git_step_applies() and self.simulation and not self._simulation_may_git():
            self.notice(
                "replay is a simulation: its work will not be staged or committed "
                "([agent] replay_git = true allows it)"
            )
        for warning in self.prepared.spec.warnings:
            self.notice(f"warning: {warning}")
        if not self.chat:
            self._guarded(
                "record the predicted cost",
                lambda: record_prediction(
                    self.workspace,
                    self.prompt,
                    self.record.dir,
                    self.prepared.agent.name,
                    model=run_model(self.workspace, self.prepared.agent.name),
                ),
                None,
            )

    # -- the settling -----------------------------------------------------------------------

    def settle(self, processor: StreamProcessor, facts: ProcessFacts) -> RunResult:
        """The run's result once its process has ended (not yet written)."""
        # One piece: the order is the contract (scope before the status write-back, both
        # before git), and the nested steps fill the failure lists read after them.
        phase = self.prompt.request.phase
        signals = tuple(processor.signal_parser.signals)
        foreign = self._foreign(signals)
        deciding = deciding_signal([s for s in signals if s not in foreign], phase)
        outcome = decide_outcome(
            ProcessEnd(
                signal=deciding.outcome if deciding is not None else None,
                returncode=facts.returncode,
                launch_failed=facts.launch_failed,
                timed_out=facts.timed_out,
                cancelled=facts.cancelled,
                crashed=facts.crashed,
                agent_error=processor.agent_error,
            )
        )
        if deciding is None and signals:
            self.warnings.append(
                f"{len(signals)} signal(s) seen, none of the {phase} phase's contract"
            )
        # First of all: the plan is put back before promptdeck writes a status into it or git
        # sees any of it, and a run that broke its scope is no success (nothing staged).
        scope = self._guarded("check the write scope", self._check_scope, None)
        # A check that could not be done proves nothing: never a success, nothing staged.
        scope_unchecked = self.scope_guard is not None and scope is None
        scope_violated = scope_unchecked or (scope is not None and scope.violated)
        if scope_violated:
            outcome = "scope-violated"
        story_flag = self._guarded("check the story file", self._check_story, False)
        # After the append-only check (a Status line is earlier content) and before git, so
        # the new status is staged and committed with the phase's work.
        status_failures: list[str] = []

        def status_step() -> StatusUpdate | None:
            try:
                update = write_back(
                    self.workspace,
                    self.prompt.story,
                    phase,
                    outcome == SUCCESS and not self.chat and self._writes_status(),
                    self.record.dir,
                )
            except Exception as exc:
                status_failures.append(str(exc))
                raise
            if update is not None:
                status_failures.extend(update.failures)
            return update

        update = self._guarded("write the story's status back", status_step, None)
        if update is not None:
            self.notice("status written back:\n" + update.summary())
        status_failure = (
            f"status write-back failed: {status_failures[0]}" if status_failures else None
        )
        changed = self._guarded("list the phase's changes", self._changes, None)
        git_failure: list[str] = []

        def git_step() -> _GitStep:
            try:
                return self._git_after(outcome, phase, git_failure, changed)
            except Exception as exc:
                git_failure.append(f"git step failed: {exc}")
                raise

        git = self._guarded("update git", git_step, _GitStep())
        error = facts.error
        if git_failure and outcome == SUCCESS:
            error = error or git_failure[0]
        if status_failure is not None and outcome == SUCCESS:
            error = error or status_failure
        outcome = settle_outcome(
            outcome,
            git_failed=bool(git_failure),
            status_failed=status_failure is not None,
            scope_violated=scope_violated,
        )
        if scope_violated:
            error = error or (
                scope.summary()
                if scope is not None
                else "scope violated: the write scope could not be checked; nothing staged"
            )
        message = error or outcome_message(
            outcome,
            signal_line=deciding.line if deciding is not None else None,
            returncode=facts.returncode,
            timeout=self.timeout,
        )
        return self.result(
            outcome,
            message,
            returncode=facts.returncode,
            deciding=deciding,
            signals=signals,
            processor=processor,
            git=git,
            story_flag=story_flag,
            changed=changed,
        )

    def result(
        self,
        outcome: Outcome,
        message: str,
        *,
        returncode: int | None = None,
        deciding: Signal | None = None,
        signals: tuple[Signal, ...] = (),
        processor: StreamProcessor | None = None,
        git: _GitStep | None = None,
        story_flag: bool = False,
        changed: dict[str, str | None] | None = None,
    ) -> RunResult:
        """The run's :class:`RunResult`: the one place it is built.

        With only an outcome and a message it is the least result there is, for when the
        settling itself failed: what the stream and git said is left out.
        """
        git = git or _GitStep()
        stream = processor
        before = self.before
        return RunResult(
            run_id=self.record.id,
            run_dir=self.record.dir,
            story_id=self.prompt.story.id,
            phase=self.prompt.request.phase,
            attempt=self.prepared.request.attempt,
            mode="chat" if self.chat else self.prompt.request.mode,
            agent=self.prepared.agent.name,
            outcome=outcome,
            exit_code=exit_code_for(outcome),
            process_exit=returncode,
            duration_s=time.time() - self.started,
            signal=deciding,
            signals=signals,
            message=message,
            usage=(stream.total_usage or stream.usage) if stream else None,
            # A simulation's reported cost is not money: never shown as such.
            cost_usd=None if self.simulation or stream is None else stream.cost_usd,
            context_tokens=stream.context_tokens if stream else None,
            context_window=stream.context_window if stream else None,
            session_id=stream.session_id if stream else None,
            sha_before=before.head if before is not None else None,
            sha_after=git.sha_after,
            staged_stat=git.staged_stat,
            commit=git.commit,
            story_rewritten=story_flag,
            warnings=tuple(self.warnings),
            simulation=self.simulation,
            git_output=self.git_output,
            changed_paths=dict(list(changed.items())[:CHANGED_PATHS_KEPT]) if changed else changed,
        )

    def write(self, result: RunResult) -> RunResult:
        """Write ``result.json``; a record that could not be written (now or by any append
        during the run) makes the result ``unsaved``: not saved is not a success (exit 7)."""
        failures: list[str] = []
        try:
            self.record.write_result(result.to_dict())
            self.record.log(f"end: {result.outcome} ({result.message})")
        except Exception as exc:  # the run folder may be gone; the waiter must still wake
            failures.append(str(exc))
        if not self.chat:
            self._guarded(
                "record the reported cost",
                lambda: record_actual(self.workspace, self.record.dir, self.prepared.agent.name),
                None,
            )
            self._guarded(
                "record the turn list",
                lambda: turns_of(
                    self.record.dir,
                    self.workspace.root,
                    self.prepared.agent.name,
                    str(self.prepared.spec.cwd),
                ),
                None,
            )
        if self.record.write_error is not None:
            failures.insert(0, self.record.write_error)
        if not failures:
            return result
        unsaved = settle_outcome(result.outcome, unsaved=True)
        return dataclasses.replace(
            result,
            outcome=unsaved,
            exit_code=exit_code_for(unsaved),
            message=f"not saved: the run record could not be written: {failures[0]}",
            warnings=(*result.warnings, f"could not write the run record: {failures[0]}"),
        )

    # -- the steps --------------------------------------------------------------------------

    def _foreign(self, signals: tuple[Signal, ...]) -> list[Signal]:
        """Signals naming another story: they decide nothing, and say so."""
        own = normalize_key(self.prompt.story.id)
        foreign = [s for s in signals if s.story is not None and normalize_key(s.story) != own]
        for signal in foreign:
            note = (
                f"signal ignored: {signal.line!r} names story {signal.story}, "
                f"not {self.prompt.story.id}"
            )
            self.warnings.append(note)
            with contextlib.suppress(Exception):
                self.notice(f"warning: {note}")
        return foreign

    def _guarded(self, what: str, step: Callable[[], _T], fallback: _T) -> _T:
        """Run one settling step; its failure becomes a warning, never a hung run."""
        try:
            return step()
        except Exception as exc:
            warning = f"could not {what}: {exc}"
            self.warnings.append(warning)
            with contextlib.suppress(Exception):
                self.notice(f"warning: {warning}")
            return fallback

    def _story_bytes(self, story_file: Path) -> bytes | None:
        """The story file's bytes through the guarded reader (an agent may have left a FIFO
        or a link out of the project in its place), or None."""
        data = read_file_bytes(
            story_file, self.workspace.root.resolve(), limit=self.workspace.config.read_max_bytes
        )
        return None if isinstance(data, TextProblem) else data

    def _check_scope(self) -> ScopeCheck | None:
        """Compare the protected files with their record, put back what changed, keep the
        attempt as a diff in the run folder, and say each file in the run's warnings."""
        guard = self.scope_guard
        if guard is None:
            return None
        check = guard.check()
        if not check.violated:
            return check
        kept = self.record.keep_scope_violations(check.diff)
        for violation in check.violations:
            line = f"write scope: {violation.line()}"
            self.warnings.append(line)
            self.notice(f"error: {line}")
        self.warnings.append(f"write scope: the attempted changes are kept in {kept}")
        return check

    def _story_file(self) -> Path | None:
        path = self.prompt.story.path
        return self.workspace.root / path if path else None

    def _check_story(self) -> bool:
        story_file = self._story_file()
        if story_file is None or self.story_before is None:
            return False
        after = self._story_bytes(story_file)
        if after is None:
            after = b""
        if not story_rewritten(self.story_before, after):
            return False
        kept = self.record.keep_story_before(self.story_before)
        warning = (
            f"the phase changed earlier content of {self.prompt.story.path} (story files are "
            f"append-only); the prior version is kept in {kept}"
        )
        self.warnings.append(warning)
        self.notice(f"warning: {warning}")
        return True

    def _changes(self) -> dict[str, str | None] | None:
        """The paths this phase changed (kept so the story's later phases stage them)."""
        if self.repo is None or self.before is None or self.chat:
            return None
        return gitops.phase_changes(self.repo, self.before)

    def _git_step_applies(self) -> bool:
        phase = self.prompt.request.phase
        return self.repo is not None and not self.chat and phase in ("dev", "review")

    def _simulation_may_git(self) -> bool:
        return self.workspace.config.agent_replay_git

    def _writes_status(self) -> bool:
        """A simulation writes no status into a real project (only where it may commit)."""
        return not self.simulation or self._simulation_may_git()

    def _git_after(
        self,
        outcome: Outcome,
        phase: str,
        failure: list[str],
        changes: dict[str, str | None] | None = None,
    ) -> _GitStep:
        """Stage after a completed dev phase, commit after a passed review: only the phase's
        own changes. A refusal or failure goes into ``failure`` (the run becomes
        ``git-failed``)."""
        if self.repo is None:
            return _GitStep()
        staged: str | None = None
        commit_sha: str | None = None
        if not (self._git_step_applies() and outcome == SUCCESS):
            return _GitStep(sha_after=gitops.head_sha(self.repo))
        if self.simulation and not self._simulation_may_git():
            self.notice("replay is a simulation: nothing staged or committed")
            return _GitStep(sha_after=gitops.head_sha(self.repo))
        assert self.before is not None
        try:
            problem = gitops.in_progress(self.repo)
            if problem:
                raise gitops.GitStepError(f"git step refused: {problem}; nothing staged")
            report = gitops.stage_phase(
                self.repo, self.before, self.workspace.config.git_max_file_bytes, changes
            )
            staged = report.stat
            self.notice(report.describe())
            if phase == "review":
                story = self.prompt.story
                message = gitops.commit_message(
                    self.workspace.config.git_commit_template, story.id, story.title
                )
                commit_sha = gitops.commit_staged(self.repo, message)
                signing = gitops.signing_programs(self.repo)
                if commit_sha and signing:
                    self.warnings.append(
                        f"the repository's own config names a signing program "
                        f"({', '.join(signing)}): the commit was not signed, so it did not run"
                    )
                if commit_sha:
                    self.notice(f"committed {commit_sha[:10]}: {message}")
                else:
                    self.notice("nothing staged: no commit")
        except GitError as exc:
            output = getattr(exc, "output", "")
            if output:
                self.git_output = output
                self.notice(f"git said:\n{output}")
            failure.append(str(exc))
            self.warnings.append(str(exc))
            self.notice(f"error: {exc}")
        return _GitStep(staged, commit_sha, gitops.head_sha(self.repo))
