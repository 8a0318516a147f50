"""A phase's flight record: every model request it made, what each added, what each paid.

A :class:`TurnList` holds the phase's top-level requests in order; a subagent's requests sit
under the request whose tool call started it (:class:`Subagent`). A usage count the client did
not report, or reported as something other than a whole number, is None ("unknown" in JSON)
and is never summed in.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import field
from typing import Any

from ..lean_dataclass import dataclass

UNKNOWN = "unknown"
"""How a count the client did not report is written."""

USAGE_FIELDS = ("input_tokens", "cache_read_tokens", "cache_write_tokens", "output_tokens")
"""A request's usage, split as providers bill it (input is the plain, uncached part)."""


def _count(value: int | None) -> int | str:
    return UNKNOWN if value is None else value


def _read_count(value: object) -> int | None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        return None
    return value


@dataclass(frozen=True)
class Addition:
    """One thing a request carried that the previous one did not: a tool's result.

    Attributes:
        tool: the tool that produced it (``Read``, ``Bash``, ``shell``…; ``?`` when the call
            is not in the record).
        source: the file read or the command run, as the call named it ("" when none).
        bytes: the result's size in UTF-8 bytes.
        tool_use_id: the call's id.
        sha256: for a file read, the hash of the file's text as the result carried it (line
            numbers taken off), to tell a read of a file promptdeck had injected unchanged.
    """

    tool: str
    source: str
    bytes: int
    tool_use_id: str = ""
    sha256: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape."""
        return {
            "tool": self.tool,
            "source": self.source,
            "bytes": self.bytes,
            "tool_use_id": self.tool_use_id,
            "sha256": self.sha256,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Addition:
        """Read back :meth:`to_dict`."""
        return cls(
            str(data.get("tool", "?")),
            str(data.get("source", "")),
            _read_count(data.get("bytes")) or 0,
            str(data.get("tool_use_id", "")),
            str(data.get("sha256", "")),
        )


@dataclass(frozen=True)
class ToolCall:
    """A tool call a request's answer made.

    Attributes:
        id: the call's id.
        tool: the tool's name.
        target: the file, command or pattern it named ("" when none).
    """

    id: str
    tool: str
    target: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape."""
        return {"id": self.id, "tool": self.tool, "target": self.target}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ToolCall:
        """Read back :meth:`to_dict`."""
        return cls(str(data.get("id", "")), str(data.get("tool", "?")), str(data.get("target", "")))


@dataclass(frozen=True)
class Request:
    """One model request and what it paid.

    Attributes:
        index: its place in its list, from 1.
        id: the client's id for the answer (``msg_…``), "" when none.
        model: the model that answered, "" when not named.
        input_tokens, cache_read_tokens, cache_write_tokens, output_tokens: the usage the
            client reported; None where it is unknown.
        at: when it was answered (epoch seconds), from the transcript; None when unknown.
        added: what this request carried that the previous one in its list did not.
        tool_calls: the tool calls its answer made.
        subagents: the subagents its tool calls started.
        notes: anything unusual about it, one line each.
    """

    index: int
    id: str = ""
    model: str = ""
    input_tokens: int | None = None
    cache_read_tokens: int | None = None
    cache_write_tokens: int | None = None
    output_tokens: int | None = None
    at: float | None = None
    added: tuple[Addition, ...] = ()
    tool_calls: tuple[ToolCall, ...] = ()
    subagents: tuple[Subagent, ...] = ()
    notes: tuple[str, ...] = ()

    @property
    def context_tokens(self) -> int | None:
        """Input + cache read + cache write: the prompt the model saw; None when one is unknown."""
        parts = (self.input_tokens, self.cache_read_tokens, self.cache_write_tokens)
        return None if any(p is None for p in parts) else sum(p for p in parts if p is not None)

    @property
    def known(self) -> bool:
        """Whether every usage count is known."""
        return self.context_tokens is not None and self.output_tokens is not None

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape (``show --turns --json``)."""
        context = self.context_tokens
        return {
            "index": self.index,
            "id": self.id,
            "model": self.model,
            "usage": {name: _count(getattr(self, name)) for name in USAGE_FIELDS},
            "context_tokens": _count(context),
            "at": self.at,
            "added": [a.to_dict() for a in self.added],
            "tool_calls": [c.to_dict() for c in self.tool_calls],
            "subagents": [s.to_dict() for s in self.subagents],
            "notes": list(self.notes),
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Request:
        """Read back :meth:`to_dict`."""
        usage = data.get("usage")
        usage = usage if isinstance(usage, Mapping) else {}
        at = data.get("at")
        return cls(
            index=_read_count(data.get("index")) or 0,
            id=str(data.get("id", "")),
            model=str(data.get("model", "")),
            **{name: _read_count(usage.get(name)) for name in USAGE_FIELDS},
            at=float(at) if isinstance(at, int | float) and not isinstance(at, bool) else None,
            added=tuple(Addition.from_dict(a) for a in _rows(data.get("added"))),
            tool_calls=tuple(ToolCall.from_dict(c) for c in _rows(data.get("tool_calls"))),
            subagents=tuple(Subagent.from_dict(s) for s in _rows(data.get("subagents"))),
            notes=tuple(str(n) for n in data.get("notes") or () if isinstance(n, str)),
        )


@dataclass(frozen=True)
class Subagent:
    """A subagent a tool call started, with its own requests.

    Attributes:
        tool_use_id: the call that started it.
        prompt_bytes: the prompt it was given, in UTF-8 bytes (None when not in the record).
        description: the call's short description.
        requests: its own requests, in order.
    """

    tool_use_id: str
    prompt_bytes: int | None
    description: str = ""
    requests: tuple[Request, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape."""
        return {
            "tool_use_id": self.tool_use_id,
            "prompt_bytes": _count(self.prompt_bytes),
            "description": self.description,
            "requests": [r.to_dict() for r in self.requests],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Subagent:
        """Read back :meth:`to_dict`."""
        return cls(
            str(data.get("tool_use_id", "")),
            _read_count(data.get("prompt_bytes")),
            str(data.get("description", "")),
            tuple(Request.from_dict(r) for r in _rows(data.get("requests"))),
        )


def _rows(value: object) -> list[Mapping[str, Any]]:
    return [v for v in value if isinstance(v, Mapping)] if isinstance(value, list) else []


@dataclass(frozen=True)
class TurnList:
    """Every request of a phase, built from its recorded stream (and the client's transcript).

    Attributes:
        agent: ``claude`` or ``codex``.
        format: the stream's format and the client's version where it says it.
        sources: what it was built from: ``stream``, and ``transcript`` when one was joined.
        requests: the top-level requests in order (subagents' nested under them).
        notes: what the reader met: a transcript left out and why, a line skipped, a subagent
            whose call matched nothing.
        reported: the whole run's usage the client reported at its end (``result`` line), by
            :data:`USAGE_FIELDS`; empty when none.
    """

    agent: str
    format: str
    sources: tuple[str, ...] = ("stream",)
    requests: tuple[Request, ...] = ()
    notes: tuple[str, ...] = ()
    reported: Mapping[str, int | None] = field(default_factory=dict)

    def walk(self) -> Iterator[tuple[int, Request]]:
        """Every request, a subagent's right after the request that started it, with its depth
        (0 top level)."""

        def down(requests: tuple[Request, ...], depth: int) -> Iterator[tuple[int, Request]]:
            for request in requests:
                yield depth, request
                for sub in request.subagents:
                    yield from down(sub.requests, depth + 1)

        return down(self.requests, 0)

    @property
    def request_count(self) -> int:
        """Every request, subagents' included."""
        return sum(1 for _ in self.walk())

    @property
    def peak_context(self) -> int | None:
        """The largest known prompt of any request; None when none is known."""
        known = [r.context_tokens for _, r in self.walk() if r.context_tokens is not None]
        return max(known) if known else None

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape kept in the run folder and printed by ``show --turns --json``."""
        return {
            "agent": self.agent,
            "format": self.format,
            "sources": list(self.sources),
            "request_count": self.request_count,
            "peak_context_tokens": _count(self.peak_context),
            "reported": {name: _count(value) for name, value in self.reported.items()},
            "notes": list(self.notes),
            "requests": [r.to_dict() for r in self.requests],
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> TurnList:
        """Read back :meth:`to_dict`."""
        reported = data.get("reported")
        reported = reported if isinstance(reported, Mapping) else {}
        sources = data.get("sources")
        return cls(
            agent=str(data.get("agent", "")),
            format=str(data.get("format", "")),
            sources=tuple(str(s) for s in sources) if isinstance(sources, list) else ("stream",),
            requests=tuple(Request.from_dict(r) for r in _rows(data.get("requests"))),
            notes=tuple(str(n) for n in data.get("notes") or () if isinstance(n, str)),
            reported={str(k): _read_count(v) for k, v in reported.items()},
        )
