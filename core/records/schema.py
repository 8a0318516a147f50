"""One schema for a run: its metadata (``meta.json``) and its result (``result.json``).

The runner builds a :class:`RunMeta` when it launches and a :class:`RunResult` when the run
settles; the records (:mod:`promptdeck.core.records`) read both back with ``from_dict``, and
the faces read the typed fields instead of string keys. ``to_dict`` writes exactly the keys
promptdeck has always written, in the same order; ``from_dict`` reads any record, an older
one missing later keys included (each missing or ill-typed value takes its default), and
keeps keys it does not name in ``extra`` so nothing is lost on a round trip.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import field
from pathlib import Path
from typing import Any

from ..agents.base import Usage
from ..lean_dataclass import dataclass
from ..phases.outcome import exit_code_for
from ..phases.signals import Signal
from ..vocabulary import Outcome, is_outcome

JSONObject = Mapping[str, Any]
"""A JSON object as read from a record: string keys, any values."""


def _text(data: JSONObject, key: str, default: str = "") -> str:
    value = data.get(key)
    return default if value is None else str(value)


def _opt_text(data: JSONObject, key: str) -> str | None:
    value = data.get(key)
    return value if isinstance(value, str) else None


def _int(data: JSONObject, key: str, default: int) -> int:
    value = data.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _opt_int(data: JSONObject, key: str) -> int | None:
    value = data.get(key)
    return value if isinstance(value, int) and not isinstance(value, bool) else None


NON_FINITE_TEXT = {"Infinity": math.inf, "-Infinity": -math.inf, "NaN": math.nan}
"""How a record keeps a figure that is no finite number: as text, since JSON has no
``Infinity`` or ``NaN`` (Python's own ``json`` would write them bare)."""


def finite_json(value: Any, *, keep_as_text: bool = False) -> Any:
    """``value`` (a JSON-shaped value) with every float that is not finite made None, or, with
    ``keep_as_text``, its :data:`NON_FINITE_TEXT` spelling: a run record keeps what the agent
    reported (``show`` says ``invalid (inf)``) and stays JSON; ``--json`` says ``null``."""
    if isinstance(value, float):
        if math.isfinite(value):
            return value
        if not keep_as_text:
            return None
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {key: finite_json(item, keep_as_text=keep_as_text) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [finite_json(item, keep_as_text=keep_as_text) for item in value]
    return value


def _opt_float(data: JSONObject, key: str) -> float | None:
    """``data[key]`` as a number, else None. A value that is no finite float (a record's
    ``Infinity``, its text spelling, ``1e999``, a 400-digit integer) is kept as infinity, so
    the record still says the agent reported something implausible (``invalid (inf)``, never
    a plain ``—``): every sum takes only plausible values
    (:func:`~promptdeck.core.units.valid_cost`), and ``--json`` writes it as ``null``
    (:func:`finite_json`)."""
    value = data.get(key)
    if isinstance(value, str) and value in NON_FINITE_TEXT:
        return NON_FINITE_TEXT[value]
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return float(value)
    except OverflowError:  # an integer too large for a float
        return math.inf


def _flag(data: JSONObject, key: str) -> bool:
    return data.get(key) is True


def _texts(data: JSONObject, key: str) -> tuple[str, ...]:
    value = data.get(key)
    if not isinstance(value, list | tuple):
        return ()
    return tuple(str(item) for item in value)


def _objects(data: JSONObject, key: str) -> tuple[JSONObject, ...]:
    value = data.get(key)
    if not isinstance(value, list | tuple):
        return ()
    return tuple(item for item in value if isinstance(item, Mapping))


def _object(data: JSONObject, key: str) -> JSONObject | None:
    value = data.get(key)
    return value if isinstance(value, Mapping) else None


def _extra(data: JSONObject, known: tuple[str, ...]) -> dict[str, Any]:
    return {key: value for key, value in data.items() if key not in known}


@dataclass(frozen=True)
class RunMeta:
    """What a run was started with (``meta.json``), written before the agent starts.

    Attributes:
        run_id: the run's id (its folder's name).
        story: the story id; ``story_title``, ``story_path`` and ``epic`` describe it.
        phase: the phase run.
        attempt: the attempt number of the phase for the story.
        mode: ``create``, ``optimize`` or ``chat``; None in a record that lacks it.
        retry_reason: the previous attempt's reason, for an ``optimize`` run.
        variant: ``standard`` or ``party``.
        agent: the backend's name; ``simulation`` when it is the replay agent.
        argv: the launch's argv; ``cwd``, ``env_names`` (the names of the variables set,
            never their values), ``stdin_bytes`` and ``system_channel`` complete it.
        started: the start time, ISO 8601 UTC; ``started_ts`` the same in epoch seconds.
        pid: promptdeck's own pid (a record without a result and a live pid is running).
        timeout_s: the run's time limit.
        git: git was used; ``sha_before`` is HEAD at the start.
        signature: the composed prompt's signature; ``layers`` each layer's id and sha256.
        instructions_sha256: the instructions file's hash; ``rules`` the rules file's path,
            status and hash.
        system_bytes: the system prompt's size; ``user_bytes`` the user message's.
        resume_session: the agent session a chat turn continues; ``turn`` its number.
        images: the images sent with the message.
        status_at_start: the story status written when the run started.
        rules_alert: the rules-health alert of this run, when one was due (written only then).
        left_out: each candidate file the injection did not carry, with its category, status
            and why (a toggle, the user's own choice, missing…); written only when there is one.
        extra: keys of the record this schema does not name, kept as they were.
    """

    run_id: str
    story: str
    phase: str
    attempt: int = 1
    story_title: str | None = None
    story_path: str | None = None
    epic: str | None = None
    mode: str | None = None
    retry_reason: str | None = None
    variant: str = "standard"
    agent: str | None = None
    simulation: bool = False
    argv: tuple[str, ...] = ()
    cwd: str | None = None
    env_names: tuple[str, ...] = ()
    stdin_bytes: int | None = None
    system_channel: str | None = None
    started: str | None = None
    started_ts: float = 0.0
    pid: int | None = None
    timeout_s: float | None = None
    git: bool = False
    sha_before: str | None = None
    signature: str | None = None
    layers: tuple[JSONObject, ...] = ()
    instructions_sha256: str | None = None
    rules: JSONObject | None = None
    system_bytes: int | None = None
    user_bytes: int | None = None
    resume_session: str | None = None
    turn: int = 0
    images: tuple[JSONObject, ...] = ()
    status_at_start: JSONObject | None = None
    rules_alert: str | None = None
    left_out: tuple[JSONObject, ...] = ()
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    KEYS = (
        "run_id",
        "story",
        "story_title",
        "story_path",
        "epic",
        "phase",
        "attempt",
        "mode",
        "retry_reason",
        "variant",
        "agent",
        "simulation",
        "argv",
        "cwd",
        "env_names",
        "stdin_bytes",
        "system_channel",
        "started",
        "started_ts",
        "pid",
        "timeout_s",
        "git",
        "sha_before",
        "signature",
        "layers",
        "instructions_sha256",
        "rules",
        "system_bytes",
        "user_bytes",
        "resume_session",
        "turn",
        "images",
        "status_at_start",
        "rules_alert",
        "left_out",
    )
    """The keys of ``meta.json``, in the order they are written."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``meta.json`` (``rules_alert`` only when there is one)."""
        data: dict[str, Any] = {
            "run_id": self.run_id,
            "story": self.story,
            "story_title": self.story_title,
            "story_path": self.story_path,
            "epic": self.epic,
            "phase": self.phase,
            "attempt": self.attempt,
            "mode": self.mode,
            "retry_reason": self.retry_reason,
            "variant": self.variant,
            "agent": self.agent,
            "simulation": self.simulation,
            "argv": list(self.argv),
            "cwd": self.cwd,
            "env_names": list(self.env_names),
            "stdin_bytes": self.stdin_bytes,
            "system_channel": self.system_channel,
            "started": self.started,
            "started_ts": self.started_ts,
            "pid": self.pid,
            "timeout_s": self.timeout_s,
            "git": self.git,
            "sha_before": self.sha_before,
            "signature": self.signature,
            "layers": [dict(layer) for layer in self.layers],
            "instructions_sha256": self.instructions_sha256,
            "rules": dict(self.rules) if self.rules is not None else None,
            "system_bytes": self.system_bytes,
            "user_bytes": self.user_bytes,
            "resume_session": self.resume_session,
            "turn": self.turn,
            "images": [dict(image) for image in self.images],
            "status_at_start": (
                dict(self.status_at_start) if self.status_at_start is not None else None
            ),
        }
        if self.rules_alert:
            data["rules_alert"] = self.rules_alert
        if self.left_out:
            data["left_out"] = [dict(item) for item in self.left_out]
        data.update(self.extra)
        return data

    @classmethod
    def from_dict(cls, data: JSONObject) -> RunMeta:
        """Read ``meta.json``: any record, missing or ill-typed values taking their defaults."""
        started_ts = _opt_float(data, "started_ts")
        return cls(
            run_id=_text(data, "run_id"),
            story=_text(data, "story"),
            phase=_text(data, "phase"),
            attempt=_int(data, "attempt", 1),
            story_title=_opt_text(data, "story_title"),
            story_path=_opt_text(data, "story_path"),
            epic=_opt_text(data, "epic"),
            mode=_opt_text(data, "mode"),
            retry_reason=_opt_text(data, "retry_reason"),
            variant=_opt_text(data, "variant") or "standard",
            agent=_opt_text(data, "agent"),
            simulation=_flag(data, "simulation"),
            argv=_texts(data, "argv"),
            cwd=_opt_text(data, "cwd"),
            env_names=_texts(data, "env_names"),
            stdin_bytes=_opt_int(data, "stdin_bytes"),
            system_channel=_opt_text(data, "system_channel"),
            started=_opt_text(data, "started"),
            started_ts=float(started_ts) if started_ts is not None else 0.0,
            pid=_opt_int(data, "pid"),
            timeout_s=_opt_float(data, "timeout_s"),
            git=_flag(data, "git"),
            sha_before=_opt_text(data, "sha_before"),
            signature=_opt_text(data, "signature"),
            layers=_objects(data, "layers"),
            instructions_sha256=_opt_text(data, "instructions_sha256"),
            rules=_object(data, "rules"),
            system_bytes=_opt_int(data, "system_bytes"),
            user_bytes=_opt_int(data, "user_bytes"),
            resume_session=_opt_text(data, "resume_session"),
            turn=_int(data, "turn", 0),
            images=_objects(data, "images"),
            status_at_start=_object(data, "status_at_start"),
            rules_alert=_opt_text(data, "rules_alert"),
            left_out=_objects(data, "left_out"),
            extra=_extra(data, cls.KEYS),
        )


@dataclass(frozen=True)
class RunResult:
    """How a run ended (``result.json``, ``run --json``).

    Attributes:
        run_dir: the run folder (not written: the record is the folder).
        story_id: the story (``story`` in the JSON).
        signal: the deciding signal, if any.
        signals: every signal the run printed (their count in the JSON; read back from
            ``signals.jsonl``).
        process_exit: the process's own exit code, apart from the phase's outcome.
        changed_paths: the paths the phase changed, with their fingerprints.
        extra: keys of the record this schema does not name, kept as they were.
    """

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
    extra: Mapping[str, Any] = field(default_factory=dict, compare=False)

    KEYS = (
        "run_id",
        "story",
        "phase",
        "attempt",
        "mode",
        "agent",
        "outcome",
        "exit_code",
        "process_exit",
        "duration_s",
        "signal",
        "signals",
        "message",
        "usage",
        "cost_usd",
        "context_tokens",
        "context_window",
        "session_id",
        "sha_before",
        "sha_after",
        "staged_stat",
        "commit",
        "story_rewritten",
        "warnings",
        "simulation",
        "git_output",
        "changed_paths",
    )
    """The keys of ``result.json``, in the order they are written."""

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of ``result.json`` and ``run --json``."""
        data: dict[str, Any] = {
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
        data.update(self.extra)
        return data

    @classmethod
    def from_dict(
        cls,
        data: JSONObject,
        run_dir: Path,
        signals: tuple[Signal, ...] = (),
        *,
        meta: RunMeta | None = None,
    ) -> RunResult:
        """Read ``result.json`` of the run in ``run_dir``.

        Args:
            signals: the run's signals (``signals.jsonl``); the JSON holds only their count.
            meta: the run's metadata, for the story, phase, attempt, mode and agent of a
                record that lacks them.

        Raises:
            ValueError: the record names no outcome promptdeck knows.
        """
        outcome = data.get("outcome")
        if not is_outcome(outcome):
            raise ValueError(f"result.json: unknown outcome {outcome!r}")
        signal = _object(data, "signal")
        usage = _object(data, "usage")
        changed = _object(data, "changed_paths")
        duration = _opt_float(data, "duration_s")
        return cls(
            run_id=_text(data, "run_id", meta.run_id if meta else run_dir.name),
            run_dir=run_dir,
            story_id=_text(data, "story", meta.story if meta else ""),
            phase=_text(data, "phase", meta.phase if meta else ""),
            attempt=_int(data, "attempt", meta.attempt if meta else 1),
            mode=_text(data, "mode", (meta.mode if meta else None) or ""),
            agent=_text(data, "agent", (meta.agent if meta else None) or ""),
            outcome=outcome,
            exit_code=_int(data, "exit_code", exit_code_for(outcome)),
            process_exit=_opt_int(data, "process_exit"),
            duration_s=float(duration) if duration is not None else 0.0,
            signal=Signal.from_dict(signal) if signal is not None else None,
            signals=signals,
            message=_text(data, "message"),
            usage=Usage.from_dict(usage) if usage is not None else None,
            cost_usd=_opt_float(data, "cost_usd"),
            context_tokens=_opt_int(data, "context_tokens"),
            context_window=_opt_int(data, "context_window"),
            session_id=_opt_text(data, "session_id"),
            sha_before=_opt_text(data, "sha_before"),
            sha_after=_opt_text(data, "sha_after"),
            staged_stat=_opt_text(data, "staged_stat"),
            commit=_opt_text(data, "commit"),
            story_rewritten=_flag(data, "story_rewritten"),
            warnings=_texts(data, "warnings"),
            simulation=_flag(data, "simulation"),
            git_output=_opt_text(data, "git_output"),
            changed_paths=(
                {
                    str(path): mark
                    for path, mark in changed.items()
                    if mark is None or isinstance(mark, str)
                }
                if changed is not None
                else None
            ),
            extra=_extra(data, cls.KEYS),
        )
