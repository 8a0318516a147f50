"""The runner: one fresh agent process per phase, streamed, recorded, timed out, cancellable.

:func:`start_run` is what both faces call. It writes the run folder (the exact prompt files
first), records git's state, launches the backend's process in its own process group, reads
stdout and stderr line by line in threads, turns each line into :class:`RunEvent` values for
the listener (the CLI prints them; the app batches them into its log), records everything as
it arrives, and when the process ends settles the outcome — the last signal of the phase's
contract decides; no signal is an outcome of its own — checks the story file stayed
append-only, stages after a completed dev phase and commits after a passed review.

The process itself — launch, reader threads, the deadline, and a cancel's SIGINT, then
SIGTERM, then SIGKILL to the group, a bounded wait after each — is supervised by
:mod:`promptdeck.core.supervise`; the outcome is decided from the events by
:mod:`promptdeck.core.outcome`. This module holds the run's policy: the record, the stream's
meaning, git and the settling. A missing binary, a crash or a timeout ends as a one-line
outcome with exit code 5, never a traceback.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from . import gitops
from .agents import get_agent, resolve_agent_name
from .agents.base import (
    RESULT,
    SESSION,
    TEXT,
    USAGE,
    Agent,
    AgentEvent,
    LaunchRequest,
    LaunchSpec,
    OutputParser,
    Usage,
    fast_factory,
    is_simulation,
)
from .errors import (
    InjectionTooLarge,
)
from .keys import normalize_key
from .learnings import learnings_path, start_learnings
from .locks import StoryLock
from .locks import acquire as acquire_lock
from .outcome import ProcessEnd, decide_outcome, exit_code_for, outcome_message, settle_outcome
from .records import RunRecord, iso_time, next_attempt
from .rules import note_rules_read
from .signals import Signal, SignalParser, deciding_signal
from .status_writeback import write_back, write_start
from .supervise import CANCEL_GRACE, ProcessSupervisor
from .supervise import READ_CHUNK as READ_CHUNK
from .system_prompt_log import injection_facts, log_injection
from .vocabulary import SUCCESS, Outcome, RunEventKind, Stream
from .workspace import Workspace

_T = TypeVar("_T")

if TYPE_CHECKING:
    from .images import ImageFile
    from .prompt import ComposedPrompt

LINE_CAP = 1024 * 1024
"""Bytes of one output line held in memory to parse and show; the record on disk keeps the
whole line, however long: memory stays flat whatever the agent prints."""

Listener = Callable[["RunEvent"], None]


@dataclass(frozen=True)
class RunEvent:
    """What the runner tells its listener, from the reader threads.

    Attributes:
        kind: ``line`` (an output line), ``signal``, ``usage``, ``session``, ``notice``
            (promptdeck's own messages: git, warnings) or ``end``.
        text: the line or message.
        stream: ``stdout``, ``stderr`` or ``promptdeck``.
        agent_text: the line is the agent's own text (where signals count).
        line_kind: for ``line``: the parsed kind (``text``, ``tool_use``, ``tool_result``,
            ``info``, ``result``, ``session``, ``usage``).
        signal: for ``signal``.
        usage: for ``usage``: the latest message's usage.
        context_tokens: tokens in the context window, when known.
        context_window: the window size, when known.
        session_id: for ``session``.
        cost_usd: the run's cost, when reported.
        result: for ``end``.
        at: the time (epoch seconds).
    """

    kind: RunEventKind
    text: str = ""
    stream: Stream = "stdout"
    agent_text: bool = False
    line_kind: str = ""
    signal: Signal | None = None
    usage: Usage | None = None
    context_tokens: int | None = None
    context_window: int | None = None
    session_id: str | None = None
    cost_usd: float | None = None
    result: RunResult | None = None
    at: float = 0.0

    @property
    def context_used(self) -> float | None:
        """Context use as a fraction of the window, when both are known."""
        if self.context_tokens is None or not self.context_window:
            return None
        return self.context_tokens / self.context_window


@dataclass(frozen=True)
class RunResult:
    """How a run ended (``result.json``)."""

    run_id: str
    run_dir: Path
    story_id: str
    phase: str
    attempt: int
    mode: str
    agent: str
    outcome: Outcome
    exit_code: int
    process_exit: int | None
    duration_s: float
    signal: Signal | None
    signals: tuple[Signal, ...]
    message: str
    usage: Usage | None = None
    cost_usd: float | None = None
    context_tokens: int | None = None
    context_window: int | None = None
    session_id: str | None = None
    sha_before: str | None = None
    sha_after: str | None = None
    staged_stat: str | None = None
    commit: str | None = None
    story_rewritten: bool = False
    warnings: tuple[str, ...] = ()
    simulation: bool = False
    git_output: str | None = None
    changed_paths: dict[str, str | None] | None = None

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``result.json`` and ``run --json``."""
        return {
            "run_id": self.run_id,
            "story": self.story_id,
            "phase": self.phase,
            "attempt": self.attempt,
            "mode": self.mode,
            "agent": self.agent,
            "outcome": self.outcome,
            "exit_code": self.exit_code,
            "process_exit": self.process_exit,
            "duration_s": round(self.duration_s, 3),
            "signal": self.signal.to_dict() if self.signal else None,
            "signals": len(self.signals),
            "message": self.message,
            "usage": self.usage.to_dict() if self.usage else None,
            "cost_usd": self.cost_usd,
            "context_tokens": self.context_tokens,
            "context_window": self.context_window,
            "session_id": self.session_id,
            "sha_before": self.sha_before,
            "sha_after": self.sha_after,
            "staged_stat": self.staged_stat,
            "commit": self.commit,
            "story_rewritten": self.story_rewritten,
            "warnings": list(self.warnings),
            "simulation": self.simulation,
            "git_output": self.git_output,
            "changed_paths": self.changed_paths,
        }


_event = fast_factory(RunEvent)


class LineSplitter:
    """Cuts raw chunks into lines, holding at most ``cap`` bytes of any one line; the bytes
    beyond are counted, not kept."""

    def __init__(self, cap: int) -> None:
        self.cap = cap
        self._parts: list[bytes] = []
        self._held = 0
        self._dropped = 0

    def feed(self, chunk: bytes) -> list[tuple[bytes, int]]:
        """The lines ``chunk`` completes: (the line's first ``cap`` bytes, bytes dropped)."""
        lines: list[tuple[bytes, int]] = []
        start = 0
        while True:
            end = chunk.find(b"\n", start)
            stop = len(chunk) if end < 0 else end + 1
            self._keep(chunk, start, stop)
            if end < 0:
                return lines
            lines.append(self._take())
            start = stop

    def finish(self) -> tuple[bytes, int] | None:
        """The unterminated last line, if any."""
        return self._take() if self._parts or self._dropped else None

    def _keep(self, chunk: bytes, start: int, stop: int) -> None:
        room = self.cap - self._held
        size = stop - start
        if room > 0 and size:
            kept = chunk[start : start + min(room, size)]
            self._parts.append(kept)
            self._held += len(kept)
            size -= len(kept)
        self._dropped += size

    def _take(self) -> tuple[bytes, int]:
        line = b"".join(self._parts)
        dropped = self._dropped
        self._parts, self._held, self._dropped = [], 0, 0
        return line, dropped


class StreamProcessor:
    """Parses, records and reports output lines: the runner's per-line work.

    Separate from the process handling so the benchmark measures exactly what a run does.
    Thread-safe: stdout and stderr reader threads call it concurrently.
    """

    def __init__(
        self,
        parser: OutputParser,
        record: RunRecord,
        listener: Listener | None = None,
        *,
        stream_format: str = "jsonl",
    ) -> None:
        self.parser = parser
        self.record = record
        self.listener = listener
        self.signal_parser = SignalParser()
        self.session_id: str | None = None
        self.usage: Usage | None = None
        self.total_usage: Usage | None = None
        self.context_tokens: int | None = None
        self.context_window: int | None = None
        self.cost_usd: float | None = None
        self.agent_error = False
        self.lines = 0
        self._stdout_lines = LineSplitter(LINE_CAP)
        self._stderr_lines = LineSplitter(LINE_CAP)
        self._plain = stream_format == "text"
        self._lock = threading.Lock()

    def _emit(self, event: RunEvent) -> None:
        if self.listener is None:
            return
        try:
            self.listener(event)
        except Exception as exc:  # a listener's bug must not stop the recording
            self.record.log(f"listener error: {exc!r}")
            self.listener = None

    def stdout_line(self, raw: bytes) -> None:
        """One raw stdout line (with or without its newline)."""
        self.record.append_stream(raw)
        self._parse_stdout(raw, 0)

    def stderr_line(self, raw: bytes) -> None:
        """One raw stderr line: recorded and shown, never read for signals."""
        self.record.append_stderr(raw)
        self._show_stderr(raw, 0)

    def stdout_chunk(self, raw: bytes) -> None:
        """Raw stdout bytes as read: recorded as they are at once (a partial last line
        included), parsed line by line with at most :data:`LINE_CAP` bytes of a line held."""
        self.record.write_stream(raw)
        for line, dropped in self._stdout_lines.feed(raw):
            self._parse_stdout(line, dropped)

    def stderr_chunk(self, raw: bytes) -> None:
        """Raw stderr bytes as read (see :meth:`stdout_chunk`)."""
        self.record.write_stderr(raw)
        for line, dropped in self._stderr_lines.feed(raw):
            self._show_stderr(line, dropped)

    def end_of_stream(self, is_stdout: bool) -> None:
        """The pipe closed: an unterminated last line is parsed (or shown) now."""
        lines = self._stdout_lines if is_stdout else self._stderr_lines
        last = lines.finish()
        if is_stdout:
            self.record.end_stream()
            if last is not None:
                self._parse_stdout(*last)
        else:
            self.record.end_stderr()
            if last is not None:
                self._show_stderr(*last)

    def _decode(self, raw: bytes, dropped: int, where: str) -> str:
        line = raw.decode("utf-8", "replace").rstrip("\r\n")
        if dropped:
            line += f" … [{dropped:,} more bytes of this line are kept in {where}]"
        return line

    def _parse_stdout(self, raw: bytes, dropped: int) -> None:
        now = time.time()
        line = self._decode(raw, dropped, self.record.stream_path.name)
        with self._lock:
            self.lines += 1
            for event in self.parser.parse(line):
                self._handle(event, now)

    def _show_stderr(self, raw: bytes, dropped: int) -> None:
        now = time.time()
        line = self._decode(raw, dropped, "stderr.log")
        with self._lock:
            self._emit(RunEvent("line", line, stream="stderr", line_kind="info", at=now))

    def _handle(self, event: AgentEvent, now: float) -> None:
        kind = event.kind
        listening = self.listener is not None
        if kind == TEXT:
            if listening:
                self._emit(
                    _event(kind="line", text=event.text, agent_text=True, line_kind=TEXT, at=now)
                )
            if self._plain:
                found = self.signal_parser.feed(event.text + "\n")
            else:
                found = self.signal_parser.feed(event.text)
                found += self.signal_parser.flush()
            for signal in found:
                self.record.append_signal(signal.to_dict(), now)
                self._emit(RunEvent("signal", signal.line, signal=signal, at=now))
            return
        if kind == USAGE:
            self.usage = event.usage
            changed = False
            if event.context_tokens is not None and event.context_tokens != self.context_tokens:
                self.context_tokens = event.context_tokens
                changed = True
            if event.context_window and event.context_window != self.context_window:
                self.context_window = event.context_window
                changed = True
            # Every content block of a message repeats its usage: report changes only.
            if listening and changed:
                self._emit(
                    _event(
                        kind="usage",
                        usage=event.usage,
                        context_tokens=self.context_tokens,
                        context_window=self.context_window,
                        at=now,
                    )
                )
            return
        if kind == SESSION:
            if event.session_id:
                self.session_id = event.session_id
                self._emit(RunEvent("session", event.text, session_id=event.session_id, at=now))
            return
        if kind == RESULT:
            if event.session_id:
                self.session_id = event.session_id
            if event.usage is not None:
                self.total_usage = event.usage
            if event.cost_usd is not None:
                self.cost_usd = event.cost_usd
            self.agent_error = self.agent_error or event.is_error
        if listening:
            self._emit(
                _event(
                    kind="line", text=event.text, line_kind=kind, cost_usd=event.cost_usd, at=now
                )
            )

    def finish(self) -> None:
        """End of output: a last unterminated line of plain text is judged too."""
        with self._lock:
            now = time.time()
            for signal in self.signal_parser.flush():
                self.record.append_signal(signal.to_dict(), now)
                self._emit(RunEvent("signal", signal.line, signal=signal, at=now))


@dataclass
class _Control:
    cancel: threading.Event = field(default_factory=threading.Event)
    done: threading.Event = field(default_factory=threading.Event)
    result: RunResult | None = None


class RunHandle:
    """A run in progress: :meth:`cancel` it, :meth:`wait` for its :class:`RunResult`."""

    def __init__(self, run_id: str, run_dir: Path, control: _Control) -> None:
        self.run_id = run_id
        self.run_dir = run_dir
        self._control = control
        self.interrupted_by: int | None = None
        """The signal (SIGINT, SIGTERM, SIGHUP) that made promptdeck cancel the run, if any."""

    def cancel(self) -> None:
        """Ask the run to stop (SIGINT → SIGTERM → SIGKILL to its group); returns at once."""
        self._control.cancel.set()

    @property
    def done(self) -> bool:
        """True once the result is settled."""
        return self._control.done.is_set()

    def wait(self, timeout: float | None = None) -> RunResult:
        """Block until the run ends; returns its result.

        Raises:
            TimeoutError: ``timeout`` passed first.
        """
        if not self._control.done.wait(timeout):
            raise TimeoutError(f"run {self.run_id} still running after {timeout} s")
        assert self._control.result is not None
        return self._control.result


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
class PreparedRun:
    """A run folder with its prompt files written, and the launch built (not started)."""

    record: RunRecord
    agent: Agent
    spec: LaunchSpec
    request: LaunchRequest
    system_path: Path
    user_path: Path


def _check_size(prompt: ComposedPrompt) -> None:
    injection = prompt.injection
    if injection.level == "error":
        raise InjectionTooLarge(
            injection.size_bytes,
            injection.error_bytes,
            injection.command_name,
            injection.largest(None),
        )


def prepare_run(
    workspace: Workspace,
    prompt: ComposedPrompt,
    *,
    agent: str | None = None,
    replay_script: str | None = None,
    dry_run: bool = False,
    attempt: int = 1,
    resume_session: str | None = None,
    turn: int = 0,
    user_text: str | None = None,
    images: tuple[ImageFile, ...] = (),
) -> PreparedRun:
    """Write the prompt files and build the launch, without starting anything.

    Args:
        user_text: send this user message instead of ``prompt.user`` (a chat turn).

    Raises:
        InjectionTooLarge: the injection is over the error line (exit 3).
        UsageError: an unknown agent, or an unusable ``command`` template.
    """
    _check_size(prompt)
    backend = get_agent(
        resolve_agent_name(agent, workspace.config), workspace.config, replay_script=replay_script
    )
    story = prompt.story
    phase = prompt.request.phase
    if dry_run:
        record = RunRecord.dry_run(workspace.root)
    else:
        record = RunRecord.create(
            workspace.root, story.id, phase, stream_format=backend.stream_format
        )
    try:
        system_path, user_path = record.write_prompt(
            prompt.system, prompt.user if user_text is None else user_text
        )
    except BaseException:
        record.discard()
        raise
    request = LaunchRequest(
        run_dir=record.dir,
        root=workspace.root,
        story_id=story.id,
        phase=phase,
        story_path=story.path,
        epic=story.group,
        resume_session=resume_session,
        turn=turn,
        attempt=attempt,
        images=tuple(image.absolute for image in images),
    )
    try:
        spec = backend.launch(request)
    except BaseException:
        record.discard()
        raise
    return PreparedRun(record, backend, spec, request, system_path, user_path)


def _layers_meta(prompt: ComposedPrompt) -> list[dict[str, Any]]:
    return [{"id": layer.layer_id, "sha256": layer.sha256} for layer in prompt.layers]


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

    Raises:
        InjectionTooLarge: over the size limit (exit 3).
        GitError: ``use_git`` and the workspace is not in a git repository (exit 2).
        UsageError: bad agent name or command template (exit 2).
        NoAgentError: no agent named and no real one found (exit 2).
        StoryLocked: another promptdeck run holds the story (exit 7).
        OSError: the run folder cannot be written (a read-only project, a full disk).
    """
    config = workspace.config
    request = prompt.request
    story = prompt.story
    chat = resume_session is not None or user_text is not None
    repo = gitops.require_repo(workspace.root) if use_git else None
    _check_size(prompt)
    resolve_agent_name(agent, config)
    try:
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
) -> RunHandle:
    config = workspace.config
    request = prompt.request
    story = prompt.story
    record, spec = prepared.record, prepared.spec
    started = time.time()
    warnings: list[str] = [*prompt.warnings, *spec.warnings]
    before = (
        gitops.snapshot(repo, _earlier_changes(workspace, story.id)) if repo is not None else None
    )
    simulation = is_simulation(prepared.agent.name)
    if request.phase == "dev" and not chat and start_learnings(workspace, story):
        # Seed 003: the first dev run starts the shared learnings file (core/learnings.py).
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
    meta: dict[str, Any] = {
        "run_id": record.id,
        "story": story.id,
        "story_title": story.title,
        "story_path": story.path,
        "epic": story.group,
        "phase": request.phase,
        "attempt": number,
        "mode": "chat" if chat else request.mode,
        "retry_reason": request.retry_reason,
        "variant": prompt.variant,
        "agent": prepared.agent.name,
        "simulation": simulation,
        **spec.to_dict(),
        "started": iso_time(started),
        "started_ts": started,
        "pid": os.getpid(),
        "timeout_s": timeout if timeout is not None else config.agent_timeout,
        "git": repo is not None,
        "sha_before": before.head if before else None,
        "signature": prompt.signature,
        "layers": _layers_meta(prompt),
        "instructions_sha256": prompt.instructions.sha256 if prompt.instructions else None,
        "rules": (
            {
                "path": prompt.rules.path,
                "status": prompt.rules.status,
                "sha256": prompt.rules.sha256,
            }
            if prompt.rules
            else None
        ),
        "system_bytes": len(prompt.system.encode("utf-8")),
        "user_bytes": prepared.user_path.stat().st_size,
        "resume_session": resume_session,
        "turn": turn,
        "images": [image.to_dict() for image in images],
        "status_at_start": started_status.to_dict() if started_status else None,
    }
    alert = _record_injection(workspace, prompt, record.id, prepared.agent.name, resume_session)
    if alert:
        warnings.append(alert)
        meta["rules_alert"] = alert
    record.write_meta(meta)
    control = _Control()
    supervisor = _Supervisor(
        workspace=workspace,
        prepared=prepared,
        prompt=prompt,
        listener=listener,
        timeout=timeout if timeout is not None else config.agent_timeout,
        repo=repo,
        before=before,
        chat=chat,
        control=control,
        started=started,
        warnings=warnings,
        cancel_grace=cancel_grace,
        lock=lock,
    )
    if alert:
        supervisor.notice(f"error: {alert}")
    thread = threading.Thread(target=supervisor.run, name=f"run-{record.id}", daemon=True)
    thread.start()
    return RunHandle(record.id, record.dir, control)


CHANGED_PATHS_KEPT = 2000
"""At most this many changed paths are kept in a run's ``result.json``."""


def _earlier_changes(workspace: Workspace, story_id: str) -> dict[str, str | None]:
    """Paths earlier runs of the story changed, with the fingerprint each run left (the
    latest run wins)."""
    from .records import list_runs

    changes: dict[str, str | None] = {}
    for run in list_runs(workspace.root, story_id):
        recorded = (run.result or {}).get("changed_paths")
        if isinstance(recorded, dict):
            for path, mark in recorded.items():
                if isinstance(path, str) and (mark is None or isinstance(mark, str)):
                    changes[path] = mark
    return changes


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


class _Supervisor:
    """Owns one run: its notices, its process (through :class:`ProcessSupervisor`), and the
    settling — outcome, story check, status write-back, git, record."""

    def __init__(
        self,
        *,
        workspace: Workspace,
        prepared: PreparedRun,
        prompt: ComposedPrompt,
        listener: Listener | None,
        timeout: float,
        repo: Any,
        before: gitops.GitSnapshot | None,
        chat: bool,
        control: _Control,
        started: float,
        warnings: list[str],
        cancel_grace: tuple[float, float],
        lock: StoryLock | None = None,
    ) -> None:
        self.lock = lock
        self.simulation = is_simulation(prepared.agent.name)
        self.git_output: str | None = None
        self.workspace = workspace
        self.prepared = prepared
        self.prompt = prompt
        self.timeout = timeout
        self.repo = repo
        self.before = before
        self.chat = chat
        self.control = control
        self.started = started
        self.warnings = warnings
        self.cancel_grace = cancel_grace
        self.record = prepared.record
        self.processor = StreamProcessor(
            prepared.agent.output_parser(),
            prepared.record,
            listener,
            stream_format=prepared.agent.stream_format,
        )
        self.process: ProcessSupervisor | None = None
        self.story_before: bytes | None = None

    def notice(self, text: str) -> None:
        self.record.log(text)
        self.processor._emit(RunEvent("notice", text, stream="promptdeck", at=time.time()))

    def run(self) -> None:
        try:
            self._run()
        except Exception as exc:  # never leave a waiter hanging on a bug
            with contextlib.suppress(Exception):
                self.record.log(f"internal error: {exc!r}")
            if not self.control.done.is_set():
                try:
                    self._settle(None, f"internal error: {exc}", crashed=True)
                except Exception as again:
                    self._publish(self._bare_result(f"internal error: {exc}; then: {again}"))

    def _bare_result(self, message: str) -> RunResult:
        """The least result there is: for when settling itself failed."""
        return RunResult(
            run_id=self.record.id,
            run_dir=self.record.dir,
            story_id=self.prompt.story.id,
            phase=self.prompt.request.phase,
            attempt=self.prepared.request.attempt,
            mode="chat" if self.chat else self.prompt.request.mode,
            agent=self.prepared.agent.name,
            outcome="crashed",
            exit_code=exit_code_for("crashed"),
            process_exit=None,
            duration_s=time.time() - self.started,
            signal=None,
            signals=(),
            message=message,
            warnings=tuple(self.warnings),
        )

    def _story_file(self) -> Path | None:
        path = self.prompt.story.path
        return self.workspace.root / path if path else None

    def _run(self) -> None:
        story_file = self._story_file()
        if story_file is not None:
            try:
                self.story_before = story_file.read_bytes()
            except OSError:
                self.story_before = None
        if self.before is not None and self.before.dirty and not self.chat:
            shown = ", ".join(self.before.dirty[:5])
            more = f" and {len(self.before.dirty) - 5} more" if len(self.before.dirty) > 5 else ""
            warning = (
                f"{len(self.before.dirty)} file(s) were already changed before this phase "
                f"(not by it): {shown}{more}"
            )
            self.warnings.append(warning)
            self.notice(f"warning: {warning}")
        if self.before is not None and self.before.problem and self._git_step_applies():
            self.notice(f"warning: git: {self.before.problem}: the git step will be refused")
        if self._git_step_applies() and self.simulation and not self._simulation_may_git():
            self.notice(
                "replay is a simulation: its work will not be staged or committed "
                "([agent] replay_git = true allows it)"
            )
        spec = self.prepared.spec
        for warning in spec.warnings:
            self.notice(f"warning: {warning}")
        try:
            # The launch's scope (codex: its profile link) lasts exactly as long as the process.
            with spec.scope() if spec.scope is not None else contextlib.nullcontext():
                returncode = self._process(spec)
        except OSError as exc:
            self._settle(None, f"cannot prepare the launch: {exc}", launch_failed=True)
            return
        if returncode is not None:
            self._settle(returncode, None)

    def _process(self, spec: LaunchSpec) -> int | None:
        """Start, stream and wait; the return code, or None when the launch failed (settled)."""
        self.process = ProcessSupervisor(
            spec,
            on_stdout=self.processor.stdout_chunk,
            on_stderr=self.processor.stderr_chunk,
            on_stream_end=self.processor.end_of_stream,
            cancel=self.control.cancel,
            deadline=self.started + self.timeout,
            timeout=self.timeout,
            cancel_grace=self.cancel_grace,
            notice=self.notice,
            log=self.record.log,
        )
        ended = self.process.run()
        if ended.launch_error is not None:
            self._settle(None, ended.launch_error, launch_failed=True)
            return None
        self.processor.finish()
        return ended.returncode

    def _settle(
        self,
        returncode: int | None,
        error: str | None,
        *,
        launch_failed: bool = False,
        crashed: bool = False,
    ) -> None:
        phase = self.prompt.request.phase
        signals = tuple(self.processor.signal_parser.signals)
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
        deciding = deciding_signal([s for s in signals if s not in foreign], phase)
        outcome = decide_outcome(
            ProcessEnd(
                signal=deciding.outcome if deciding is not None else None,
                returncode=returncode,
                launch_failed=launch_failed,
                timed_out=self.process is not None and self.process.timed_out,
                cancelled=self.process is not None and self.process.cancelled,
                crashed=crashed,
                agent_error=self.processor.agent_error,
            )
        )
        if deciding is None and signals:
            self.warnings.append(
                f"{len(signals)} signal(s) seen, none of the {phase} phase's contract"
            )
        story_flag = self._guarded("check the story file", self._check_story, False)
        # After the append-only check (a Status line is earlier content) and before git, so
        # the new status is staged and committed with the phase's work.
        update = self._guarded(
            "write the story's status back",
            lambda: write_back(
                self.workspace,
                self.prompt.story,
                phase,
                outcome == SUCCESS and not self.chat and self._writes_status(),
                self.record.dir,
            ),
            None,
        )
        if update is not None:
            self.notice("status written back:\n" + update.summary())
        changed = self._guarded("list the phase's changes", self._changes, None)
        no_git: tuple[str | None, str | None, str | None] = (None, None, None)
        git_failure: list[str] = []

        def git_step() -> tuple[str | None, str | None, str | None]:
            try:
                return self._git_after(outcome, phase, git_failure, changed)
            except Exception as exc:
                git_failure.append(f"git step failed: {exc}")
                raise

        staged_stat, commit_sha, sha_after = self._guarded("update git", git_step, no_git)
        if git_failure and outcome == SUCCESS:
            error = error or git_failure[0]
        outcome = settle_outcome(outcome, git_failed=bool(git_failure))
        duration = time.time() - self.started
        message = error or outcome_message(
            outcome,
            signal_line=deciding.line if deciding is not None else None,
            returncode=returncode,
            timeout=self.timeout,
        )
        result = RunResult(
            run_id=self.record.id,
            run_dir=self.record.dir,
            story_id=self.prompt.story.id,
            phase=phase,
            attempt=self.prepared.request.attempt,
            mode="chat" if self.chat else self.prompt.request.mode,
            agent=self.prepared.agent.name,
            outcome=outcome,
            exit_code=exit_code_for(outcome),
            process_exit=returncode,
            duration_s=duration,
            signal=deciding,
            signals=signals,
            message=message,
            usage=self.processor.total_usage or self.processor.usage,
            # A simulation's reported cost is not money: never shown as such.
            cost_usd=None if self.simulation else self.processor.cost_usd,
            context_tokens=self.processor.context_tokens,
            context_window=self.processor.context_window,
            session_id=self.processor.session_id,
            sha_before=self.before.head if self.before else None,
            sha_after=sha_after,
            staged_stat=staged_stat,
            commit=commit_sha,
            story_rewritten=story_flag,
            warnings=tuple(self.warnings),
            simulation=self.simulation,
            git_output=self.git_output,
            changed_paths=dict(list(changed.items())[:CHANGED_PATHS_KEPT]) if changed else changed,
        )
        self._publish(result)

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

    def _publish(self, result: RunResult) -> None:
        """Record and announce the result, then release every waiter, whatever fails."""
        failures: list[str] = []
        try:
            self.record.write_result(result.to_dict())
            self.record.log(f"end: {result.outcome} ({result.message})")
        except Exception as exc:  # the run folder may be gone; the waiter must still wake
            failures.append(str(exc))
        if self.record.write_error is not None:
            failures.insert(0, self.record.write_error)
        if failures:
            # Not saved is not a success, whatever the agent said: exit 7.
            unsaved = settle_outcome(result.outcome, unsaved=True)
            result = dataclasses.replace(
                result,
                outcome=unsaved,
                exit_code=exit_code_for(unsaved),
                message=f"not saved: the run record could not be written: {failures[0]}",
                warnings=(*result.warnings, f"could not write the run record: {failures[0]}"),
            )
        try:
            self.processor._emit(
                RunEvent("end", result.message, stream="promptdeck", result=result, at=time.time())
            )
        finally:
            with contextlib.suppress(Exception):
                self.record.close()
            if self.lock is not None:
                self.lock.release()
            self.control.result = result
            self.control.done.set()

    def _check_story(self) -> bool:
        story_file = self._story_file()
        if story_file is None or self.story_before is None:
            return False
        try:
            after = story_file.read_bytes()
        except OSError:
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
        outcome: str,
        phase: str,
        failure: list[str],
        changes: dict[str, str | None] | None = None,
    ) -> tuple[str | None, str | None, str | None]:
        """Stage after a completed dev phase, commit after a passed review: only the phase's
        own changes. A refusal or failure goes into ``failure`` (the run becomes
        ``git-failed``)."""
        if self.repo is None:
            return None, None, None
        from .errors import GitError

        staged: str | None = None
        commit_sha: str | None = None
        if not (self._git_step_applies() and outcome == SUCCESS):
            return None, None, gitops.head_sha(self.repo)
        if self.simulation and not self._simulation_may_git():
            self.notice("replay is a simulation: nothing staged or committed")
            return None, None, gitops.head_sha(self.repo)
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
        return staged, commit_sha, gitops.head_sha(self.repo)
