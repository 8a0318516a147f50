"""Completion signals: what an agent prints to say how a phase ended.

Two families (DESIGN.md → Reconciling the seeds): seed 002's lines (``IMPLEMENTATION
COMPLETE: 1-2``, ``REVIEW FAILED: 1-2 - reason`` …) and seed 003's ``<promise>COMPLETE</promise>``
/ ``<promise>FAILED: reason</promise>`` tags.

A signal counts only when it stands on a line of its own in what the agent itself says: the
line, stripped of surrounding whitespace and of a wrapping ``**`` / ``__`` emphasis, must be
exactly the signal. A signal quoted inside a sentence, wrapped in quotes or backticks, written
inside a fenced code block, or carrying a template placeholder (``{id}``, ``<reason>``) — the
way a prompt shows it — does not count. Which text is the agent's own (assistant text and final
result, never tool results or the echoed prompt) is the agent backend's call: it feeds only that
text to :class:`SignalParser`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

from ..lean_dataclass import dataclass
from .table import SIGNAL_SPECS, SignalSpec, signal_specs

# A cheap pre-filter: most lines of agent output carry none of these words.
_MAYBE = re.compile(r"COMPLETE|BLOCKED|PASSED|FAILED|<promise>")
# How a prompt writes a value to fill in: ``{id}``, ``<reason>``, ``[reason]``, ``story-id``.
_ID_PLACEHOLDER = re.compile(r"[{}<>\[\]|]|^(?:story|epic)-id$|^id$")
_REASON_PLACEHOLDER = re.compile(r"\{[^}]*\}|^<[^>]*>$|^\[[^\]]*\]$|^reason$", re.IGNORECASE)
_FENCE = re.compile(r"^\s*(```|~~~)")
_WRAPPERS = ("**", "__")


def signal_name(spec: SignalSpec) -> str:
    """A spec's display name: ``IMPLEMENTATION BLOCKED``, ``PROMISE FAILED`` …"""
    if spec.family == "promise":
        return "PROMISE " + spec.template.removeprefix("<promise>").split(":")[0].split("<")[0]
    return spec.template.split(":")[0]


_COMPILED = tuple((spec, signal_name(spec), spec.pattern) for spec in SIGNAL_SPECS)


@dataclass(frozen=True)
class Signal:
    """One signal the agent printed.

    Attributes:
        name: the display name (``IMPLEMENTATION COMPLETE``, ``PROMISE FAILED`` …).
        kind: the spec's stable name (``implementation-complete``).
        outcome: ``success``, ``failure`` or ``info`` (failure analysis).
        phase: the phase whose contract has it.
        line: the line as printed, stripped.
        story: the story id it names, when it names one.
        epic: the epic id (UAT, retro).
        reason: the failure reason, ``Fixed N issues``, or the analysis recommendation.
    """

    name: str
    kind: str
    outcome: str
    phase: str
    line: str
    story: str | None = None
    epic: str | None = None
    reason: str | None = None

    def to_dict(self) -> dict[str, str | None]:
        """The JSON shape used in ``signals.jsonl`` and ``--json`` outputs."""
        return {
            "name": self.name,
            "kind": self.kind,
            "outcome": self.outcome,
            "phase": self.phase,
            "line": self.line,
            "story": self.story,
            "epic": self.epic,
            "reason": self.reason,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, object]) -> Signal:
        """Rebuild a signal from :meth:`to_dict` output."""

        def opt(key: str) -> str | None:
            value = data.get(key)
            return value if isinstance(value, str) else None

        return cls(
            name=str(data.get("name", "")),
            kind=str(data.get("kind", "")),
            outcome=str(data.get("outcome", "")),
            phase=str(data.get("phase", "")),
            line=str(data.get("line", "")),
            story=opt("story"),
            epic=opt("epic"),
            reason=opt("reason"),
        )


def _unwrap(text: str) -> str:
    for wrapper in _WRAPPERS:
        if len(text) > 2 * len(wrapper) and text.startswith(wrapper) and text.endswith(wrapper):
            return text[len(wrapper) : -len(wrapper)].strip()
    return text


def match_line(line: str) -> Signal | None:
    """The signal ``line`` is, when the whole line is one; None otherwise.

    Not fence-aware: :class:`SignalParser` tracks code fences across lines.
    """
    if not _MAYBE.search(line):
        return None
    text = _unwrap(line.strip())
    for spec, name, regex in _COMPILED:
        found = regex.fullmatch(text)
        if found is None:
            continue
        groups = found.groupdict()
        ident = groups.get("id")
        if ident and _ID_PLACEHOLDER.search(ident):
            return None
        reason = groups.get("reason")
        if reason and _REASON_PLACEHOLDER.search(reason.strip()):
            return None
        if groups.get("count"):
            reason = f"Fixed {groups['count']} issues"
        if groups.get("recommendation"):
            reason = groups["recommendation"]
        epic_scoped = " Epic {id}" in spec.template
        return Signal(
            name=name,
            kind=spec.kind,
            outcome=spec.outcome,
            phase=spec.phase,
            line=text,
            story=None if epic_scoped else ident,
            epic=ident if epic_scoped else None,
            reason=reason.strip() if reason else None,
        )
    return None


class SignalParser:
    """Finds signals in text fed in arbitrary chunks.

    Text is split into lines as it arrives; a line is judged once it is complete (a newline
    arrived, or :meth:`flush` marks the end of a message). Any chunking of the same text yields
    the same signals. Lines inside a fenced code block never count.
    """

    def __init__(self) -> None:
        self._partial = ""
        self._in_fence = False
        self.signals: list[Signal] = []

    def feed(self, chunk: str) -> list[Signal]:
        """Add text; returns the signals completed by it."""
        if "\n" not in chunk:
            self._partial += chunk
            return []
        text = self._partial + chunk
        *lines, self._partial = text.split("\n")
        return self._judge(lines)

    def flush(self) -> list[Signal]:
        """End of a message or block: judge the pending partial line; reset fence state."""
        found: list[Signal] = []
        if self._partial:
            found = self._judge([self._partial])
            self._partial = ""
        self._in_fence = False
        return found

    def _judge(self, lines: Iterable[str]) -> list[Signal]:
        found: list[Signal] = []
        for line in lines:
            if ("`" in line or "~" in line) and _FENCE.match(line):
                self._in_fence = not self._in_fence
                continue
            if self._in_fence:
                continue
            signal = match_line(line)
            if signal is not None:
                found.append(signal)
        self.signals.extend(found)
        return found

    @property
    def last(self) -> Signal | None:
        """The signal that decides the outcome: the last one seen."""
        return self.signals[-1] if self.signals else None


def parse_text(text: str) -> list[Signal]:
    """Every signal in a complete text (one message)."""
    parser = SignalParser()
    parser.feed(text)
    parser.flush()
    return parser.signals


def deciding_signal(signals: Iterable[Signal], phase: str | None = None) -> Signal | None:
    """The last signal, restricted to ``phase``'s contract when a phase is given."""
    kinds = {spec.kind for spec in signal_specs(phase)} if phase else None
    chosen: Signal | None = None
    for signal in signals:
        if kinds is None or signal.kind in kinds:
            chosen = signal
    return chosen
