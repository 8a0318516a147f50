"""What a capture holds: the request, its parts, the text that arrived twice, and a summary of
the parts the app's meters show (the client's overhead next to promptdeck's own bytes).

Part kinds (:data:`PART_KINDS`):

- ``client``: text the client wrote itself — its system prompt (``client system``), its tool
  schemas (``tools``) and what it wraps around the user turn (``client context``: environment
  notes, reminders, the wrappers of the rules files);
- ``rules``: a rules file the client loaded itself (``CLAUDE.md``, ``AGENTS.md``…), named by
  its path in the project;
- ``promptdeck``: one of promptdeck's eight layers (``Layer-0A Instructions``…) and the blank
  lines between them (``layer joiners``);
- ``user``: the phase's task, promptdeck's user turn;
- ``envelope``: the rest of the JSON body (model, settings, keys, quoting and escapes).
"""

from __future__ import annotations

import json
from dataclasses import field
from datetime import UTC, datetime
from typing import Any

from ..lean_dataclass import dataclass
from ..units import context_share
from .loopback import CapturedRequest

PART_KINDS = ("client", "rules", "promptdeck", "user", "envelope")
"""The kinds of part, in the order a capture lists them."""
OVERHEAD_KINDS = frozenset({"client", "rules", "envelope"})
"""What the client adds to promptdeck's prompt: its overhead."""


@dataclass(frozen=True)
class RequestPart:
    """One part of the captured request, with its size.

    Attributes:
        name: ``client system``, ``tools``, ``client context``, a rules file's path,
            ``Layer-0A Instructions`` … ``Layer-6 ApplyPolicy``, ``layer joiners``,
            ``user turn`` or ``envelope``.
        kind: one of :data:`PART_KINDS`.
        text: the part's text as the model reads it (tools: their JSON; envelope: empty).
        bytes: the part's size in the request body (text as UTF-8; the envelope holds what
            JSON quoting adds).
        tokens: its tokens with promptdeck's encoding (an estimate for another model's).
        note: what else to know (a rules file the client cut: how much of it was sent).
        loaded_because: why the client loaded a rules file (the user's memory, a project
            rule, a folder of Codex's chain); empty for other parts.
    """

    name: str
    kind: str
    text: str
    bytes: int
    tokens: int
    note: str = ""
    loaded_because: str = ""

    def to_dict(self, window: int) -> dict[str, Any]:
        """``name``, ``kind``, ``bytes``, ``tokens``, ``share`` of ``window`` and ``note``."""
        return {
            "name": self.name,
            "kind": self.kind,
            "bytes": self.bytes,
            "tokens": self.tokens,
            "share": context_share(self.tokens, window),
            "note": self.note,
            "loaded_because": self.loaded_because,
        }


@dataclass(frozen=True)
class DuplicateText:
    """Paragraphs that arrive twice: in ``first`` and again in ``second``.

    Attributes:
        first: the part they arrive in first.
        second: the part that sends them again.
        paragraphs: how many paragraphs (normalised: whitespace collapsed) repeat.
        bytes: the bytes of the repeats in ``second`` (what sending them once would save).
    """

    first: str
    second: str
    paragraphs: int
    bytes: int

    def to_dict(self) -> dict[str, Any]:
        """The pair of parts and the size of what repeats."""
        return {
            "first": self.first,
            "second": self.second,
            "paragraphs": self.paragraphs,
            "bytes": self.bytes,
        }

    def line(self) -> str:
        """One line for the text view."""
        noun = "paragraph arrives" if self.paragraphs == 1 else "paragraphs arrive"
        return (
            f"{self.paragraphs} {noun} twice ({self.bytes:,} bytes): in {self.first} "
            f"and again in {self.second}"
        )


@dataclass(frozen=True)
class Capture:
    """What the client sent for one story and phase.

    Attributes:
        client: ``claude`` or ``codex``.
        client_version: the version the client reported (``2.1.197``).
        story_id: the story composed.
        phase: the phase composed.
        model: the model the request names.
        window: that model's context window in tokens
            (:func:`~promptdeck.core.client_loads.model_window`).
        request: the main request, exact bytes.
        parts: the request taken apart; their bytes sum to ``request.size``.
        duplicates: text arriving twice, per pair of parts.
        requests: how many requests the client made in all (side requests included).
        captured_at: when, in seconds since the epoch.
        notes: what this capture left out that a run would send (the project's client
            settings of a project not trusted), one line each.
    """

    client: str
    client_version: str
    story_id: str
    phase: str
    model: str
    window: int
    request: CapturedRequest
    parts: tuple[RequestPart, ...] = ()
    duplicates: tuple[DuplicateText, ...] = ()
    requests: int = 1
    captured_at: float = 0.0
    notes: tuple[str, ...] = ()

    @property
    def tokens(self) -> int:
        """The request's tokens: its parts' sum (the envelope counts none)."""
        return sum(part.tokens for part in self.parts)

    def part(self, name: str) -> RequestPart | None:
        """The part called ``name``, if the request has one."""
        return next((part for part in self.parts if part.name == name), None)

    def origin(self, installed: str | None = None) -> str:
        """Which capture this is: the client version and when, and whether that is the
        ``installed`` version (when given)."""
        moment = datetime.fromtimestamp(self.captured_at, UTC).strftime("%Y-%m-%d %H:%M UTC")
        said = f"{self.client} {self.client_version or '(version unknown)'}, captured {moment}"
        if installed is None or installed == self.client_version:
            return said
        return f"{said}; the installed {self.client} is {installed}"

    def to_dict(self) -> dict[str, Any]:
        """The capture as JSON (``capture --json``)."""
        return {
            "client": self.client,
            "client_version": self.client_version,
            "story": self.story_id,
            "phase": self.phase,
            "model": self.model,
            "window": self.window,
            "path": self.request.path,
            "request_bytes": self.request.size,
            "request_tokens": self.tokens,
            "share": context_share(self.tokens, self.window),
            "cut": self.request.cut,
            "requests": self.requests,
            "captured_at": self.captured_at,
            "parts": [part.to_dict(self.window) for part in self.parts],
            "duplicates": [duplicate.to_dict() for duplicate in self.duplicates],
            "notes": list(self.notes),
        }


@dataclass(frozen=True)
class KindTotal:
    """The parts of one kind, summed."""

    kind: str
    bytes: int
    tokens: int
    share: float | None


@dataclass(frozen=True)
class CaptureSummary:
    """A capture in the few figures a meter shows.

    Attributes:
        client: the client.
        client_version: its version at capture time.
        model: the model the request named.
        window: its context window in tokens.
        request_bytes: the request body's size.
        request_tokens: its tokens (the parts' sum).
        overhead_bytes: what the client adds to promptdeck's prompt (its system text, tools,
            context, the rules files it loads, the envelope).
        overhead_tokens: the same in tokens.
        duplicate_bytes: bytes that arrive a second time.
        kinds: each kind of part, summed, in :data:`PART_KINDS` order.
    """

    client: str
    client_version: str
    model: str
    window: int
    request_bytes: int
    request_tokens: int
    overhead_bytes: int
    overhead_tokens: int
    duplicate_bytes: int
    kinds: tuple[KindTotal, ...] = field(default=())

    @property
    def share(self) -> float | None:
        """The request's tokens as a share of the window."""
        return context_share(self.request_tokens, self.window)

    @property
    def overhead_share(self) -> float | None:
        """The client's overhead as a share of the window."""
        return context_share(self.overhead_tokens, self.window)


def capture_summary(capture: Capture) -> CaptureSummary:
    """The figures of ``capture`` a meter shows: totals per kind, the client's overhead."""
    kinds = []
    for kind in PART_KINDS:
        parts = [part for part in capture.parts if part.kind == kind]
        size = sum(part.bytes for part in parts)
        tokens = sum(part.tokens for part in parts)
        kinds.append(KindTotal(kind, size, tokens, context_share(tokens, capture.window)))
    overhead = [total for total in kinds if total.kind in OVERHEAD_KINDS]
    return CaptureSummary(
        client=capture.client,
        client_version=capture.client_version,
        model=capture.model,
        window=capture.window,
        request_bytes=capture.request.size,
        request_tokens=capture.tokens,
        overhead_bytes=sum(total.bytes for total in overhead),
        overhead_tokens=sum(total.tokens for total in overhead),
        duplicate_bytes=sum(duplicate.bytes for duplicate in capture.duplicates),
        kinds=tuple(kinds),
    )


def compact_json(value: Any) -> str:
    """``value`` as compact JSON (the size of the content, whatever spacing the client used)."""
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
