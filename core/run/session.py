"""Multi-turn sessions and re-injection of instructions and rules (seed 004, Req 3 and 4).

A chat continues a phase's conversation one turn at a time: each turn is a fresh agent
process resuming the session (``--resume <id>``) and is recorded as a run of its own. The
system prompt file is passed on every call (Claude Code does not keep an appended system
prompt across ``--resume``). On top of that, long sessions re-inject the instructions and the
workspace rules — read fresh, in the first injection's order, instructions first — at the head
of the turn's message:

- every ``session.reinjection_turns`` turns (default 15) since the last injection, and
- when context use first crosses 25 %, 50 % and 75 %, where the agent reports usage.

``session.reinjection_enabled`` / ``session.reinjection_turns`` in config, overridden by
``PROMPTDECK_REINJECTION_ENABLED`` / ``PROMPTDECK_REINJECTION_TURNS``. The effective settings
are logged at start; each re-injection logs its trigger and the files' mtime and sha256.
:func:`decide_reinjection` is the whole policy, as a pure function.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import asdict, field, fields, replace
from pathlib import Path
from typing import Any

from ..agents.base import is_session_id
from ..errors import AssetMissing, UsageError
from ..layers.instructions import InstructionsFile, load_instructions
from ..layers.rules import RulesFile, note_rules_read, read_rules, rules_health
from ..lean_dataclass import dataclass
from ..project.config import Config
from ..project.textfiles import TextProblem, read_json_object
from ..project.workspace import Workspace
from ..records.reader import list_runs
from ..records.writer import iso_time
from ..units import context_share
from .system_prompt_log import injection_facts, log_injection

THRESHOLDS = (0.25, 0.5, 0.75)
"""Context-use fractions that trigger a re-injection, each once (seed 004 Req 3)."""
ENV_ENABLED = "PROMPTDECK_REINJECTION_ENABLED"
ENV_TURNS = "PROMPTDECK_REINJECTION_TURNS"
SESSION_FILE = "session.json"
_TRUE = ("1", "true", "yes", "on")
_FALSE = ("0", "false", "no", "off")


@dataclass(frozen=True)
class ReinjectionSettings:
    """The effective re-injection policy.

    Attributes:
        enabled: re-inject at all (the first injection always happens).
        turns: turns between re-injections.
        thresholds: context-use fractions that trigger one.
        overrides: the environment variables that changed a config value.
    """

    enabled: bool = True
    turns: int = 15
    thresholds: tuple[float, ...] = THRESHOLDS
    overrides: tuple[str, ...] = ()

    def describe(self) -> str:
        """One log line with every effective value and where it came from."""
        marks = ", ".join(f"{t:.0%}" for t in self.thresholds)
        source = (
            f"config, overridden by {', '.join(self.overrides)}" if self.overrides else "config"
        )
        return (
            f"re-injection settings: enabled={str(self.enabled).lower()} turns={self.turns} "
            f"context thresholds={marks} (from {source})"
        )


def reinjection_settings(
    config: Config, environ: Mapping[str, str] | None = None
) -> ReinjectionSettings:
    """The settings from config, with the environment's overrides.

    Raises:
        UsageError: an override that is not a boolean / not a positive whole number.
    """
    env = os.environ if environ is None else environ
    enabled = config.session_reinjection_enabled
    turns = config.session_reinjection_turns
    overrides: list[str] = []
    raw = env.get(ENV_ENABLED)
    if raw is not None and raw.strip():
        value = raw.strip().lower()
        if value not in _TRUE + _FALSE:
            raise UsageError(f"{ENV_ENABLED}={raw!r}: expected true or false (or 1/0)")
        enabled = value in _TRUE
        overrides.append(ENV_ENABLED)
    raw = env.get(ENV_TURNS)
    if raw is not None and raw.strip():
        if not raw.strip().isdigit() or int(raw) < 1:
            raise UsageError(f"{ENV_TURNS}={raw!r}: expected a whole number of turns, at least 1")
        turns = int(raw)
        overrides.append(ENV_TURNS)
    return ReinjectionSettings(enabled=enabled, turns=turns, overrides=tuple(overrides))


@dataclass(frozen=True)
class SessionState:
    """Where a session stands before its next turn.

    Attributes:
        turns: turns completed so far.
        turns_since_injection: turns completed since the last (re-)injection.
        context_used: the latest context use (0–1), or None when the agent reports none.
        crossed: thresholds already acted on.
    """

    turns: int = 0
    turns_since_injection: int = 0
    context_used: float | None = None
    crossed: tuple[float, ...] = ()


@dataclass(frozen=True)
class Decision:
    """Whether the next turn re-injects, and why.

    Attributes:
        reinject: re-inject on this turn.
        trigger: ``turns`` or ``context`` (None when not re-injecting).
        detail: the trigger in words, for the log.
        crossed: the thresholds acted on, this decision included.
    """

    reinject: bool
    trigger: str | None = None
    detail: str = ""
    crossed: tuple[float, ...] = ()


def decide_reinjection(settings: ReinjectionSettings, state: SessionState) -> Decision:
    """Decide whether the next turn re-injects instructions and rules.

    The first turn is the initial injection, never a re-injection. When context use is known,
    each threshold triggers once as it is crossed (several crossed at once trigger once); if
    use falls back below a threshold (the agent compacted its context), that threshold is
    armed again. Independently, a re-injection happens once ``settings.turns`` turns have
    passed since the last injection.
    """
    used = state.context_used
    crossed = tuple(t for t in state.crossed if used is None or used >= t)
    if not settings.enabled or state.turns == 0:
        return Decision(False, crossed=crossed)
    if used is not None:
        newly = tuple(t for t in settings.thresholds if used >= t and t not in crossed)
        if newly:
            return Decision(
                True,
                "context",
                f"context use {used:.0%} crossed {max(newly):.0%}",
                tuple(sorted(crossed + newly)),
            )
    if state.turns_since_injection >= settings.turns:
        return Decision(
            True,
            "turns",
            f"{state.turns_since_injection} turns since the last injection "
            f"(every {settings.turns})",
            crossed,
        )
    return Decision(False, crossed=crossed)


def advance(state: SessionState, decision: Decision, context_used: float | None) -> SessionState:
    """The state after a turn that followed ``decision``."""
    injected = decision.reinject or state.turns == 0
    return SessionState(
        turns=state.turns + 1,
        turns_since_injection=1 if injected else state.turns_since_injection + 1,
        context_used=context_used if context_used is not None else state.context_used,
        crossed=decision.crossed,
    )


@dataclass
class Counters:
    """Seed 004's observability counters."""

    initial_injections: int = 0
    reinjections: int = 0
    failures: int = 0


@dataclass(frozen=True)
class FileVersion:
    """A file injected, as logged: path, status, sha256, mtime."""

    path: str
    status: str
    sha256: str | None
    mtime: float | None

    def describe(self) -> str:
        """``path sha256=… mtime=…`` for the log."""
        when = iso_time(self.mtime) if self.mtime is not None else "-"
        digest = self.sha256 or "-"
        return f"{self.path} [{self.status}] sha256={digest} mtime={when}"


def reinjection_text(workspace: Workspace) -> tuple[str, tuple[FileVersion, ...], list[str]]:
    """The block a re-injection puts at the head of the message, read fresh.

    Returns:
        The text (instructions, then rules when present), the files' versions, and warnings.

    Raises:
        AssetMissing: the bundled instructions cannot be read.
    """
    return _reinjection(load_instructions(), read_rules(workspace))


def _reinjection(
    instructions: InstructionsFile, rules: RulesFile
) -> tuple[str, tuple[FileVersion, ...], list[str]]:
    versions = [FileVersion(instructions.source, "ok", instructions.sha256, instructions.mtime)]
    parts = [
        "<system_reminder>\nThe instructions and workspace rules below still apply in full.\n",
        f"<instructions>\n{instructions.text.rstrip()}\n</instructions>\n",
    ]
    warnings: list[str] = []
    versions.append(FileVersion(rules.path, rules.status, rules.sha256, rules.mtime))
    if rules.present:
        parts.append(
            f'<workspace_rules path="{rules.path}">\n{rules.text.rstrip()}\n</workspace_rules>\n'
        )
    elif rules.warning:
        warnings.append(rules.warning)
    parts.append("</system_reminder>\n\n")
    return "".join(parts), tuple(versions), warnings


@dataclass(frozen=True)
class SessionSnapshot:
    """What ``session.json`` in a turn's run folder holds."""

    session_id: str | None
    state: SessionState
    counters: Counters
    settings: ReinjectionSettings
    last_trigger: str | None = None
    files: tuple[FileVersion, ...] = field(default=())

    def to_dict(self) -> dict[str, Any]:
        """JSON shape."""
        return {
            "session_id": self.session_id,
            "state": asdict(self.state),
            "counters": asdict(self.counters),
            "settings": asdict(self.settings),
            "last_trigger": self.last_trigger,
            "files": [asdict(f) for f in self.files],
        }


def _saved_session(path: Path, root: Path) -> tuple[SessionState, Counters] | None:
    """A chat's saved state and counters, or None when the file is missing, malformed or
    refused by the guarded reader (a FIFO, a device, a link out of ``root``)."""
    saved = read_json_object(path, root.resolve())
    if isinstance(saved, TextProblem):
        return None
    try:
        state_data = saved["state"]
        state = SessionState(
            turns=int(state_data.get("turns", 1)),
            turns_since_injection=int(state_data.get("turns_since_injection", 1)),
            context_used=_fraction(state_data.get("context_used")),
            crossed=tuple(float(mark) for mark in state_data.get("crossed") or ()),
        )
        known = {f.name for f in fields(Counters)}
        counts = saved.get("counters") or {}
        counters = Counters(**{k: int(v) for k, v in counts.items() if k in known})
    except (OSError, ValueError, TypeError, KeyError, AttributeError, OverflowError):
        return None
    return state, counters


def _fraction(value: object) -> float | None:
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def load_session(
    root: Path, story_id: str, phase: str
) -> tuple[str | None, SessionState, Counters]:
    """The latest session of a story's phase, from its runs: id, state and counters.

    A session that began as a plain run counts that run as its first turn (the initial
    injection).
    """
    for run in reversed(list_runs(root, story_id)):
        result = run.run_result
        if run.phase != phase or result is None:
            continue
        session_id = result.session_id
        # Run records are files a repository can ship: an id that is not one (a "--flag")
        # is passed over, never handed to the agent's argv.
        if not session_id or not is_session_id(session_id):
            continue
        saved = _saved_session(run.dir / SESSION_FILE, root)
        if saved is not None:
            return session_id, *saved
        tokens, window = result.context_tokens, result.context_window
        used = context_share(tokens, window)
        return session_id, SessionState(1, 1, used), Counters(initial_injections=1)
    return None, SessionState(), Counters()


Log = Callable[[str], None]


def stderr_log(message: str) -> None:
    """The default session log on stderr."""
    print(f"promptdeck: {message}", file=sys.stderr)


@dataclass
class TurnPlan:
    """What one turn sends, decided before it starts."""

    user_text: str
    decision: Decision
    initial: bool
    files: tuple[FileVersion, ...] = ()
    notes: list[str] = field(default_factory=list)
    rules_status: str | None = None
    """The status of the rules read this turn injects (None: nothing injected)."""
    alert: str | None = None
    """The repeated-failure error line, when this turn's read made it due."""


class Session:
    """One phase's conversation, continued turn by turn.

    It only decides and remembers; the caller runs each turn (``start_run`` with
    ``resume_session``) between :meth:`plan` and :meth:`finish`.
    """

    def __init__(
        self,
        workspace: Workspace,
        story_id: str,
        phase: str,
        *,
        settings: ReinjectionSettings | None = None,
        log: Log = stderr_log,
        fresh: bool = False,
    ) -> None:
        self.workspace = workspace
        self.story_id = story_id
        self.phase = phase
        self.settings = settings or reinjection_settings(workspace.config)
        self.log = log
        if fresh:
            self.session_id, self.state, self.counters = None, SessionState(), Counters()
        else:
            self.session_id, self.state, self.counters = load_session(
                workspace.root, story_id, phase
            )
        self.log(self.settings.describe())

    def plan(self, message: str, first_message: str, rules: RulesFile | None = None) -> TurnPlan:
        """The next turn's user message: re-injection block (when due) + ``message``.

        Args:
            message: what the user typed.
            first_message: the phase's composed user message, sent ahead of ``message`` when the
                session has no turn yet (the initial injection).
            rules: the rules as the turn's compose read them (the initial injection's; the run
                logs it and counts the read).
        """
        if self.session_id is None or self.state.turns == 0:
            text = first_message if not message else f"{first_message}\n\n{message}"
            status = rules.status if rules is not None else None
            notes = [rules.warning] if rules is not None and rules.warning else []
            return TurnPlan(text, Decision(False), initial=True, notes=notes, rules_status=status)
        decision = decide_reinjection(self.settings, self.state)
        if not decision.reinject:
            return TurnPlan(message, decision, initial=False)
        try:
            instructions = load_instructions()
        except AssetMissing as exc:
            self.counters.failures += 1
            self.log(f"re-injection failed ({decision.detail}): {exc}")
            return TurnPlan(message, replace(decision, reinject=False), False, notes=[str(exc)])
        fresh = read_rules(self.workspace)
        if rules is not None and rules.left_out:
            # The user left Layer-0B out of this story's prompt: a reminder keeps it out too.
            fresh = fresh.leave_out()
        block, files, notes = _reinjection(instructions, fresh)
        alert = note_rules_read(self.workspace, fresh).message()
        trigger = (
            f"context {max(decision.crossed):.0%}"
            if decision.trigger == "context" and decision.crossed
            else str(decision.trigger)
        )
        log_injection(injection_facts(trigger, instructions, fresh), alert=alert)
        return TurnPlan(
            block + message,
            decision,
            initial=False,
            files=files,
            notes=notes,
            rules_status=fresh.status,
            alert=alert,
        )

    def finish(
        self, plan: TurnPlan, run_dir: Path, session_id: str | None, context_used: float | None
    ) -> SessionSnapshot:
        """Record a finished turn: counters, state, the log lines and ``session.json``."""
        lines: list[str] = []
        if plan.initial:
            self.counters.initial_injections += 1
            lines.append("initial injection: system prompt file + phase message")
        if plan.decision.reinject:
            self.counters.reinjections += 1
            lines.append(
                f"re-injection #{self.counters.reinjections} at turn {self.state.turns + 1}: "
                f"trigger {plan.decision.trigger} ({plan.decision.detail})"
            )
            lines += [f"  injected {version.describe()}" for version in plan.files]
        lines += [f"warning: {note}" for note in plan.notes]
        # The first turn's rules warning and alert were shown before the turn ran (the
        # compose's warnings, the run's notice): recorded here, not said twice.
        shown = set(lines[-len(plan.notes) :]) if plan.initial and plan.notes else set()
        if plan.rules_status not in (None, "ok"):
            self.counters.failures += 1
            alert = plan.alert or (rules_health(self.workspace).message() if plan.initial else None)
            if alert:
                lines.append(f"error: {alert}")
                if plan.initial:
                    shown.add(lines[-1])
        if session_id:
            self.session_id = session_id
        self.state = advance(self.state, plan.decision, context_used)
        counters = self.counters
        lines.append(
            f"counters: initial={counters.initial_injections} "
            f"reinjections={counters.reinjections} failures={counters.failures}"
        )
        snapshot = SessionSnapshot(
            self.session_id,
            self.state,
            Counters(**asdict(self.counters)),
            self.settings,
            plan.decision.trigger,
            plan.files,
        )
        (run_dir / SESSION_FILE).write_text(
            json.dumps(snapshot.to_dict(), indent=2) + "\n", encoding="utf-8"
        )
        with (run_dir / "session.log").open("a", encoding="utf-8") as handle:
            for line in [self.settings.describe(), *lines]:
                handle.write(f"{iso_time(time.time())} {line}\n")
        for line in lines:
            if line not in shown:
                self.log(line)
        return snapshot
