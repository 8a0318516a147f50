"""The interface every agent backend implements.

A backend does two things: given the run folder and the prompt, it builds a
:class:`LaunchSpec` (argv, environment additions, stdin bytes, working folder); and it turns
each line the process prints into :class:`AgentEvent` values (assistant text, tool use, tool
result, usage, session id, the final result). The runner does everything else, identically for
every backend. The system prompt always reaches the agent through ``<run>/system.md`` (or the
user message through stdin), never as one argv string: Linux refuses any single argument over
131,072 bytes (``MAX_ARG_STRLEN``).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from contextlib import AbstractContextManager
from dataclasses import MISSING, field, fields
from pathlib import Path
from typing import Any, Protocol, TypeVar

from ..errors import UsageError
from ..lean_dataclass import dataclass
from ..textfit import one_line_preview
from ..units import shown_number, tokens_total, valid_tokens

TEXT = "text"
"""Event kind: text the agent itself says (signals count here)."""
TOOL_USE = "tool_use"
TOOL_RESULT = "tool_result"
USAGE = "usage"
SESSION = "session"
RESULT = "result"
INFO = "info"
"""Event kind: anything else worth showing (system lines, reasoning, unparsed output)."""


_T = TypeVar("_T")


def fast_factory(cls: type[_T]) -> Callable[..., _T]:
    """A keyword-only constructor for a frozen dataclass without ``__post_init__`` that skips
    the per-field ``object.__setattr__`` of the generated ``__init__``: events are built for
    every output line, and that setter dominated the cost of a line."""
    defaults: dict[str, Any] = {}
    for spec in fields(cls):  # type: ignore[arg-type]
        if spec.default is not MISSING:
            defaults[spec.name] = spec.default
    new = object.__new__
    set_dict = object.__setattr__

    def make(**values: Any) -> _T:
        obj = new(cls)
        state = defaults.copy()
        state.update(values)
        set_dict(obj, "__dict__", state)
        return obj

    return make


@dataclass(frozen=True)
class Usage:
    """Token usage as the agent reports it."""

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_creation_tokens: int = 0
    reasoning_output_tokens: int = 0
    """Output tokens spent on reasoning, where the agent reports them (Codex); part of
    ``output_tokens``, never added to it."""

    @property
    def context_tokens(self) -> int:
        """Tokens the model saw as input: input + cache read + cache creation (a count that
        is not plausible — negative, absurdly large — is left out: the agent's numbers are
        data, not trusted)."""
        return tokens_total(self.input_tokens, self.cache_read_tokens, self.cache_creation_tokens)[
            0
        ]

    def checked_total(self) -> tuple[int, tuple[str, ...]]:
        """Input, cache and output tokens summed over the plausible counts, with
        ``invalid (value)`` for each count left out."""
        return tokens_total(
            self.input_tokens,
            self.cache_read_tokens,
            self.cache_creation_tokens,
            self.output_tokens,
        )

    def total_label(self) -> str:
        """``12,345`` or ``12,345 + invalid (-5)``: the plausible total, and what was left out."""
        total, invalid = self.checked_total()
        return " + ".join([f"{total:,}", *invalid])

    def describe(self) -> str:
        """Every count by name, an implausible one shown as ``invalid (value)``."""
        return ", ".join(
            f"{name} {count:,}"
            if (count := valid_tokens(value)) is not None
            else f"{name} invalid ({shown_number(value)})"
            for name, value in self.to_dict().items()
        )

    def to_dict(self) -> dict[str, int]:
        """The JSON shape in ``result.json`` and ``runs --json``."""
        return {
            "input": self.input_tokens,
            "output": self.output_tokens,
            "cache_read": self.cache_read_tokens,
            "cache_creation": self.cache_creation_tokens,
            "reasoning_output": self.reasoning_output_tokens,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Usage:
        """Rebuild from :meth:`to_dict` output (missing keys count as 0)."""

        def num(key: str) -> int:
            value = data.get(key)
            return value if isinstance(value, int) else 0

        return cls(
            num("input"),
            num("output"),
            num("cache_read"),
            num("cache_creation"),
            num("reasoning_output"),
        )


@dataclass(frozen=True)
class AgentEvent:
    """One thing parsed from the agent's output.

    Attributes:
        kind: :data:`TEXT`, :data:`TOOL_USE`, :data:`TOOL_RESULT`, :data:`USAGE`,
            :data:`SESSION`, :data:`RESULT` or :data:`INFO`.
        text: what to show (for :data:`TEXT`, what the signal parser reads).
        end_of_message: the text completes a message: a partial last line is judged now.
        session_id: the agent's session id (:data:`SESSION`, :data:`RESULT`).
        model: the model named at start.
        usage: the latest message's usage (:data:`USAGE`) or the run's totals (:data:`RESULT`).
        context_tokens: tokens in the current context window, when known.
        context_window: the window those tokens fill.
        cost_usd: the run's cost (:data:`RESULT`).
        is_error: the agent reported an error result.
    """

    kind: str
    text: str = ""
    end_of_message: bool = True
    session_id: str | None = None
    model: str | None = None
    usage: Usage | None = None
    context_tokens: int | None = None
    context_window: int | None = None
    cost_usd: float | None = None
    is_error: bool = False


make_event = fast_factory(AgentEvent)
"""``AgentEvent`` by keyword, cheaply (the parsers' hot path)."""


@dataclass(frozen=True)
class LaunchRequest:
    """What a backend needs to build its launch.

    Attributes:
        run_dir: the run folder; ``system.md`` and ``user.md`` are already written there.
        root: the workspace root (the agent's working folder).
        story_id: the story's id.
        phase: the phase.
        story_path: the file the story's records go to, root-relative (its story file; an
            OpenSpec story's ``records/group-<N>.md``); None for a story known only by id.
        epic: the story's epic or change.
        resume_session: continue this session (multi-turn chat) instead of starting one.
        turn: the turn number in a chat session (0 for a plain run).
        attempt: the attempt number of this phase for this story.
        images: image files sent with the user message (absolute paths).
        protected_paths: files the agent may not write in this phase, root-relative with
            ``/`` separators; a backend whose client can refuse such writes up front asks it
            to (the run still checks and restores them afterwards, whatever the client did).
    """

    run_dir: Path
    root: Path
    story_id: str
    phase: str
    story_path: str | None = None
    epic: str = ""
    resume_session: str | None = None
    turn: int = 0
    attempt: int = 1
    images: tuple[Path, ...] = ()
    protected_paths: tuple[str, ...] = ()

    @property
    def system_file(self) -> Path:
        """``<run>/system.md``."""
        return self.run_dir / "system.md"

    @property
    def user_file(self) -> Path:
        """``<run>/user.md``."""
        return self.run_dir / "user.md"


@dataclass(frozen=True)
class LaunchSpec:
    """How to start the agent process.

    Attributes:
        scope: entered just before the process starts and left once it has ended, whatever
            the outcome (codex: a profile link that must not outlive the run).
        system_channel: how the system prompt reaches the agent, for ``meta.json``.
        warnings: problems the launch found that do not stop it.
    """

    argv: tuple[str, ...]
    cwd: Path
    env: Mapping[str, str] = field(default_factory=dict)
    stdin: bytes | None = None
    scope: Callable[[], AbstractContextManager[object]] | None = field(default=None, compare=False)
    system_channel: str = ""
    warnings: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, object]:
        """``meta.json``'s launch block: argv and the *names* of the variables set."""
        return {
            "argv": list(self.argv),
            "cwd": str(self.cwd),
            "env_names": sorted(self.env),
            "stdin_bytes": None if self.stdin is None else len(self.stdin),
            "system_channel": self.system_channel or None,
        }


class OutputParser(Protocol):
    """Stateful, one per run: turns each output line into events."""

    def parse(self, line: str) -> list[AgentEvent]:
        """Events for one stdout line (without its newline)."""
        ...


class Agent(Protocol):
    """An agent backend."""

    name: str
    stream_format: str
    """``jsonl`` (records ``stream.jsonl``) or ``text`` (records ``stream.log``)."""

    def launch(self, request: LaunchRequest) -> LaunchSpec:
        """The launch for one run (or one chat turn)."""
        ...

    def output_parser(self) -> OutputParser:
        """A fresh parser for one run's stdout."""
        ...


class PlainTextParser:
    """For plain-text agents: every stdout line is the agent's own text."""

    def parse(self, line: str) -> list[AgentEvent]:
        """One :data:`TEXT` event per line."""
        return [make_event(kind=TEXT, text=line)]


TOOL_PREVIEW_CHARS = 200
"""How much of a tool call's input or output the live stream shows, on one line."""


def tool_preview(value: Any) -> str:
    """A tool call's input or output (text, or JSON for anything else) as one short line."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    return one_line_preview(text, TOOL_PREVIEW_CHARS)


_SESSION_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,127}")


def is_session_id(value: str) -> bool:
    """True when ``value`` can be an agent's session id (a UUID, a thread id): letters,
    digits, ``-`` and ``_``, starting with a letter or digit. Session ids are read back from
    run records, files a repository can ship: one that starts with ``-`` would reach the
    agent's argv as a flag of the repository's choosing."""
    return _SESSION_ID.fullmatch(value) is not None


def check_session_id(value: str) -> str:
    """``value`` if it is a session id (:func:`is_session_id`).

    Raises:
        UsageError: it is not (exit 2).
    """
    if not is_session_id(value):
        raise UsageError(f"not a session id to resume: {value[:60]!r}")
    return value
