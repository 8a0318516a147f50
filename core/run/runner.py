"""The runner: one fresh agent process per phase, streamed, recorded, timed out, cancellable.

:func:`start_run` is what both faces call. It takes the story's lock, writes the run folder
(the exact prompt files first, :mod:`promptdeck.core.run.prepare`), records git's state and
the run's :class:`RunMeta`, and hands the run to its thread (:mod:`promptdeck.core.run.handle`),
returning a :class:`RunHandle` at once. The run's parts live apart:

- :mod:`promptdeck.core.run.supervise`: the process — launch, reader threads, the deadline, a
  cancel's SIGINT, then SIGTERM, then SIGKILL to the group;
- :mod:`promptdeck.core.run.stream`: the output — lines parsed, recorded, told to the
  listener as :class:`RunEvent` values;
- :mod:`promptdeck.core.run.policy`: what happens once the process has ended — the outcome
  (decided by :mod:`promptdeck.core.phases.outcome`), the append-only check of the story file, the
  status write-back, staging after a completed dev phase and a commit after a passed review,
  and the result written;
- :mod:`promptdeck.core.records.schema`: the one schema of a run's metadata and result, which
  the records and the faces read back.

A missing binary, a crash or a timeout ends as a one-line outcome with exit code 5, never a
traceback.

Crash safety: ``meta.json`` (phase, attempt, ``sha_before``, the prompt files beside it) and
``resume.json`` (the paths already changed at the start) are written atomically before the
agent starts; ``resume.json`` is written again, with ``session_id``, as soon as the agent
reports its session — so a run whose promptdeck is killed can be resumed
(:mod:`promptdeck.core.fleet.resume`). A resumed run names the run it continues
(``continues`` in its ``meta.json``).
"""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agent_names import is_simulation
from ..agents.base import is_session_id
from ..agents.registry import resolve_agent_name
from ..injection.choices import LEFT_OUT_REASON
from ..layers.rules import note_rules_read
from ..plans.writeback import write_start
from ..project.textfiles import TextProblem, read_json_object
from ..project.trust import check_trusted
from ..project.workspace import Workspace
from ..prompt.learnings import learnings_path, start_learnings
from ..records.launched import note_launched
from ..records.reader import list_runs, next_attempt
from ..records.schema import RunMeta
from ..records.writer import iso_time, runs_dir
from . import gitops
from .handle import RunControl, RunHandle, RunSupervisor
from .locks import StoryLock
from .locks import acquire as acquire_lock
from .policy import RunPolicy
from .prepare import PreparedRun, check_size, prepare_run
from .stream import Listener, RunEvent, StreamProcessor
from .supervise import CANCEL_GRACE
from .system_prompt_log import injection_facts, log_injection

if TYPE_CHECKING:
    from ..project.images import ImageFile
    from ..prompt.request import ComposedPrompt

__all__ = [
    "CONTINUES_KEY",
    "RESUME_FILE",
    "SESSION_KEY",
    "start_run",
]

RESUME_FILE = "resume.json"
"""What a resume needs beyond ``meta.json``: ``session_id`` and ``dirty_before``."""
SESSION_KEY = "session_id"
"""The key of ``resume.json`` that holds the agent's session id, written as soon as known."""
CONTINUES_KEY = "continues"
"""The key of ``meta.json`` that names the interrupted run a resumed run continues."""
DIRTY_KEY = "dirty_before"
"""The key of ``resume.json`` listing the paths already changed when the run started."""
DIRTY_KEPT = 2000


def start_run(
    workspace: Workspace,
    prompt: ComposedPrompt,
    *,
    agent: str | None = None,
    listener: Listener | None = None,
    timeout: float | None = None,
    use_git: bool = True,
    replay_script: str | None = None,
    attempt: int | None = None,
    resume_session: str | None = None,
    turn: int = 0,
    user_text: str | None = None,
    cancel_grace: tuple[float, float] = CANCEL_GRACE,
    images: tuple[ImageFile, ...] = (),
    prepared: PreparedRun | None = None,
    continues: str | None = None,
) -> RunHandle:
    """Start one phase run of ``prompt`` (exactly what the preview shows) and return at once.

    Args:
        workspace: the workspace; runs are recorded under its ``.promptdeck/runs``.
        prompt: the composed prompt: ``system`` and ``user`` are sent byte for byte.
        agent: the backend (default: config ``agent.default``).
        listener: called with every :class:`RunEvent`, from reader threads.
        timeout: seconds before the run is cancelled (default: config ``agent.timeout``).
        use_git: record SHAs, stage after dev, commit after review; False for ``--no-git``.
        replay_script: the replay agent's script (overrides config).
        attempt: the attempt number (default: counted from the records).
        resume_session: continue this agent session (a chat turn); git steps are skipped.
        turn: the chat turn number.
        user_text: the user message for a chat turn, instead of ``prompt.user``.
        cancel_grace: seconds to wait after SIGINT and after SIGTERM.
        images: checked images sent with the user message (``--image``).
        prepared: the run folder and launch :func:`prepare_run` built for this prompt (what a
            confirmation showed); it is started as it is, so the argv shown is the argv run.
        continues: the id of the interrupted run this one resumes: the phase goes on in
            ``resume_session`` (when there is one) as a phase run, not a chat turn — its status
            and git steps are the phase's.

    Raises:
        InjectionTooLarge: over the size limit (exit 3).
        GitError: ``use_git`` and the workspace is not in a git repository (exit 2).
        UsageError: bad agent name or command template (exit 2).
        NoAgentError: no agent named and no real one found (exit 2).
        StoryLocked: another promptdeck run holds the story (exit 7).
        UntrustedConfig: the project's config names the program or its arguments, and this
            version of it is not trusted (exit 10).
        OSError: the run folder cannot be written (a read-only project, a full disk).
    """
    # One piece: each `try` gives back exactly what the step before it took (the confirmed
    # run folder, the story's lock); split, who releases what would be spread out.
    config = workspace.config
    request = prompt.request
    story = prompt.story
    chat = (resume_session is not None or user_text is not None) and continues is None
    repo = gitops.require_repo(workspace.root) if use_git else None
    check_size(prompt)
    try:
        # The project's config may name the program this run starts: not without the user.
        check_trusted(workspace, resolve_agent_name(agent, config))
        lock = acquire_lock(workspace.root, story.id)
    except BaseException:
        if prepared is not None:
            prepared.record.discard()  # a confirmed plan that cannot start leaves no folder
        raise
    try:
        if prepared is None:
            number = (
                attempt
                if attempt is not None
                else next_attempt(workspace.root, story.id, request.phase)
            )
            prepared = prepare_run(
                workspace,
                prompt,
                agent=agent,
                replay_script=replay_script,
                attempt=number,
                resume_session=resume_session,
                turn=turn,
                user_text=user_text,
                images=images,
            )
        else:
            number = prepared.request.attempt
    except BaseException:
        lock.release()
        raise
    try:
        return _launch(
            workspace,
            prompt,
            prepared,
            repo,
            chat,
            number,
            listener,
            timeout,
            resume_session,
            turn,
            cancel_grace,
            lock,
            images,
            continues,
        )
    except BaseException:
        lock.release()
        prepared.record.discard()
        raise


def _launch(
    workspace: Workspace,
    prompt: ComposedPrompt,
    prepared: PreparedRun,
    repo: Any,
    chat: bool,
    number: int,
    listener: Listener | None,
    timeout: float | None,
    resume_session: str | None,
    turn: int,
    cancel_grace: tuple[float, float],
    lock: StoryLock,
    images: tuple[ImageFile, ...],
    continues: str | None = None,
) -> RunHandle:
    # One piece: the order is the contract (git snapshot, learnings, in-progress status,
    # injection note, then the meta that records them all before the agent starts), and
    # the meta alone reads nearly twenty of these locals.
    config = workspace.config
    request = prompt.request
    story = prompt.story
    record, spec = prepared.record, prepared.spec
    started = time.time()
    warnings: list[str] = [*prompt.warnings, *spec.warnings]
    if lock.taken_over:
        warnings.append(lock.taken_over)
    earlier = _earlier_changes(workspace, story.id)
    if repo is not None and continues is not None:
        earlier.update(_interrupted_changes(workspace, repo, continues))
    before = gitops.snapshot(repo, earlier) if repo is not None else None
    simulation = is_simulation(prepared.agent.name)
    if request.phase == "dev" and not chat and start_learnings(workspace, story):
        # Seed 003: the first dev run starts the shared learnings file (core/prompt/learnings.py).
        warnings.append(f"created {learnings_path(workspace, story)} from its template")
    # A simulation writes no status into a real project (only where it may commit: the demo).
    writes_status = not chat and (not simulation or config.agent_replay_git)
    started_status = None
    if writes_status:
        # After the fingerprints (so the edit is the phase's own, staged with its work) and
        # before the story file is read for the append-only check.
        try:
            started_status = write_start(workspace, story, request.phase)
        except OSError as exc:
            warnings.append(f"could not mark story {story.id} in-progress: {exc.strerror}")
        if started_status is not None:
            warnings.extend(
                f"could not mark story {story.id} in-progress: {failure}"
                for failure in started_status.failures
            )
    timeout_s = timeout if timeout is not None else config.agent_timeout
    alert = _record_injection(workspace, prompt, record.id, prepared.agent.name, resume_session)
    if alert:
        warnings.append(alert)
    meta = RunMeta(
        run_id=record.id,
        story=story.id,
        story_title=story.title,
        story_path=story.path,
        epic=story.group,
        phase=request.phase,
        attempt=number,
        mode="chat" if chat else request.mode,
        retry_reason=request.retry_reason,
        variant=prompt.variant,
        agent=prepared.agent.name,
        simulation=simulation,
        argv=tuple(spec.argv),
        cwd=str(spec.cwd),
        env_names=tuple(sorted(spec.env)),
        stdin_bytes=None if spec.stdin is None else len(spec.stdin),
        system_channel=spec.system_channel or None,
        started=iso_time(started),
        started_ts=started,
        pid=os.getpid(),
        timeout_s=timeout_s,
        git=repo is not None,
        sha_before=before.head if before else None,
        signature=prompt.signature,
        layers=tuple({"id": layer.layer_id, "sha256": layer.sha256} for layer in prompt.layers),
        instructions_sha256=prompt.instructions.sha256 if prompt.instructions else None,
        rules=(
            {
                "path": prompt.rules.path,
                "status": prompt.rules.status,
                "sha256": prompt.rules.sha256,
            }
            if prompt.rules
            else None
        ),
        system_bytes=len(prompt.system.encode("utf-8")),
        user_bytes=prepared.user_path.stat().st_size,
        resume_session=resume_session,
        turn=turn,
        images=tuple(image.to_dict() for image in images),
        status_at_start=started_status.to_dict() if started_status else None,
        extra={CONTINUES_KEY: continues} if continues else {},
        rules_alert=alert,
        left_out=(
            *(
                {"path": f.path, "category": f.category, "status": f.status, "why": f.reason}
                for f in prompt.injection.files
                if not f.included
            ),
            *left_out_layers(prompt),
        ),
    )
    record.write_meta(meta.to_dict())
    # What was changed before the agent started: a resumed run stages the rest.
    keeper = SessionKeeper(
        record, {DIRTY_KEY: list(before.dirty[:DIRTY_KEPT]) if before is not None else None}
    )
    keeper.write()
    # Noted outside the project too: only a run noted there is ever resumed (an agent can
    # write a run folder inside the project, never in the user's state folder).
    unnoted = note_launched(record.id)
    if unnoted is not None:
        record.log(unnoted)
    keeper.listener = listener
    processor = StreamProcessor(
        prepared.agent.output_parser(),
        record,
        keeper,
        stream_format=prepared.agent.stream_format,
    )
    policy = RunPolicy(
        workspace=workspace,
        prepared=prepared,
        prompt=prompt,
        repo=repo,
        before=before,
        chat=chat,
        started=started,
        timeout=timeout_s,
        warnings=warnings,
        notice=processor.notice,
    )
    control = RunControl()
    supervisor = RunSupervisor(
        policy=policy,
        processor=processor,
        control=control,
        timeout=timeout_s,
        cancel_grace=cancel_grace,
        lock=lock,
    )
    if alert:
        processor.notice(f"error: {alert}")
    if lock.taken_over:
        processor.notice(f"warning: {lock.taken_over}")
    supervisor.start(f"run-{record.id}")
    return RunHandle(record.id, record.dir, control)


class SessionKeeper:
    """The run's ``resume.json``, and the listener in front of the caller's: the agent's
    session id is written there (atomically) the moment the agent reports it, so a run
    killed mid-stream can be resumed in its session.

    A value that is not a session id (a ``--flag`` printed by a hostile stream) is never
    recorded: it would be handed to the next agent's argv.
    """

    def __init__(self, record: Any, facts: dict[str, Any]) -> None:
        self._record = record
        self._facts = facts
        self._lock = threading.Lock()
        self.listener: Listener | None = None

    def write(self) -> None:
        """Write ``resume.json`` as it stands.

        Raises:
            OSError: the run folder cannot be written.
        """
        self._record.write_json(RESUME_FILE, {SESSION_KEY: None, **self._facts})

    def __call__(self, event: RunEvent) -> None:
        session = event.session_id
        if event.kind == "session" and session and is_session_id(session):
            with self._lock:
                if session != self._facts.get(SESSION_KEY):
                    self._facts[SESSION_KEY] = session
                    try:
                        self.write()
                    except OSError as exc:
                        self._record.log(f"could not record session {session}: {exc}")
        if self.listener is not None:
            try:
                self.listener(event)
            except Exception as exc:  # as the processor does: logged and dropped, never fatal
                self._record.log(f"listener error: {exc!r}")
                self.listener = None


def _earlier_changes(workspace: Workspace, story_id: str) -> dict[str, str | None]:
    """Paths earlier runs of the story changed, with the fingerprint each run left (the
    latest run wins)."""
    changes: dict[str, str | None] = {}
    for run in list_runs(workspace.root, story_id):
        result = run.run_result
        if result is not None and result.changed_paths is not None:
            changes.update(result.changed_paths)
    return changes


def _interrupted_changes(workspace: Workspace, repo: Any, run_id: str) -> dict[str, str | None]:
    """The paths an interrupted run changed before it stopped, as they are now: every path
    changed now that was not already changed when it started (its ``dirty_before``). A resumed
    run carries them as the story's work, so they are staged with the phase's."""
    facts = read_json_object(
        runs_dir(workspace.root) / run_id / RESUME_FILE, workspace.root.resolve()
    )
    listed = None if isinstance(facts, TextProblem) else facts.get(DIRTY_KEY)
    if not isinstance(listed, list):
        return {}
    already = {path for path in listed if isinstance(path, str)}
    top = Path(str(repo.working_tree_dir))
    return {
        path: gitops.fingerprint(top / path)
        for path in gitops.dirty_paths(repo)
        if path not in already
    }


def _record_injection(
    workspace: Workspace,
    prompt: ComposedPrompt,
    run_id: str,
    agent: str,
    resume_session: str | None,
) -> str | None:
    """Log a run's initial injection and count its rules read; the alert line, if due.

    A resumed turn injects nothing new by itself (a re-injection is the session's to log).
    """
    if resume_session is not None or prompt.instructions is None or prompt.rules is None:
        return None
    health = note_rules_read(workspace, prompt.rules)
    facts = injection_facts(
        "initial",
        prompt.instructions,
        prompt.rules,
        run_id=run_id,
        agent=agent,
        system_bytes=len(prompt.system.encode("utf-8")),
    )
    alert = health.message()
    log_injection(facts, alert=alert)
    return alert


def left_out_layers(prompt: ComposedPrompt) -> tuple[dict[str, str], ...]:
    """The run record's rows for the layers the user left out (Layer-0B, the rules)."""
    rules = prompt.rules
    if rules is None or not rules.left_out:
        return ()
    row = {"path": rules.path, "category": "layer", "status": "excluded", "why": LEFT_OUT_REASON}
    return ({**row, "layer": "Layer-0B"},)
