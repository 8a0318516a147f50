"""The token usage an agent reported for a run, read strictly from its recorded stream.

The agents' own parsers (:mod:`promptdeck.core.agents.claude`,
:mod:`promptdeck.core.agents.codex_stream`) read usage for the live panel, where a missing field may
count as 0. A bill may not: here every field the reconciliation prices must be present and a finite,
non-negative whole number (:func:`token_count`), else the usage is "unknown" with the reason — never
a figure guessed from what is there.

- Claude Code (``stream-json``): the ``result`` line's ``usage``: ``input_tokens``,
  ``cache_creation_input_tokens``, ``cache_read_input_tokens``, ``output_tokens``.
- Codex (``--json``): every ``turn.completed`` line's ``usage``: ``input_tokens`` (cached
  included), ``cached_input_tokens``, ``output_tokens``, summed over the run's turns.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

from ..lean_dataclass import dataclass
from ..project.textfiles import TextProblem, read_text

STREAM_MAX_BYTES = 64 * 1024 * 1024
"""A recorded stream larger than this is not read for its usage (the usage is unknown)."""

CLAUDE_FIELDS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)
CODEX_FIELDS = ("input_tokens", "cached_input_tokens", "output_tokens")


MAX_TOKEN_COUNT = 10**15
"""The largest count taken: far beyond any run, small enough that a count times a price is a
finite float (``10**400`` tokens would overflow every cost)."""


def token_count(value: object) -> int | None:
    """``value`` as a token count: a whole number from 0 to :data:`MAX_TOKEN_COUNT` (a JSON
    ``12.0`` is 12), else None. A bool is not a count."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value <= MAX_TOKEN_COUNT else None
    if isinstance(value, float) and math.isfinite(value) and value >= 0 and value.is_integer():
        return int(value) if value <= MAX_TOKEN_COUNT else None
    return None


@dataclass(frozen=True)
class ReportedUsage:
    """What the agent reported, split as providers bill it.

    Attributes:
        input_tokens: plain (uncached) input.
        cache_write_tokens: input written to the cache (Codex reports none: 0).
        cache_read_tokens: input read from the cache.
        output_tokens: output.
    """

    input_tokens: int
    cache_write_tokens: int
    cache_read_tokens: int
    output_tokens: int

    def to_dict(self) -> dict[str, int]:
        """The JSON shape in ``cost.json``."""
        return {
            "input_tokens": self.input_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "cache_read_tokens": self.cache_read_tokens,
            "output_tokens": self.output_tokens,
        }


def _fields(usage: object, names: tuple[str, ...], where: str) -> dict[str, int] | str:
    if not isinstance(usage, dict):
        return f"{where}: no usage object"
    counts: dict[str, int] = {}
    for name in names:
        count = token_count(usage.get(name))
        if count is None:
            state = "missing" if name not in usage else f"invalid ({usage.get(name)!r:.40})"
            return f"{where}: {name} is {state}"
        counts[name] = count
    return counts


def json_lines(text: str) -> list[dict[str, Any]]:
    """The JSON objects of a recorded stream, a line each; any other line is passed over."""
    events: list[dict[str, Any]] = []
    for line in text.splitlines():
        try:
            data = json.loads(line)
        except (ValueError, RecursionError):
            continue
        if isinstance(data, dict):
            events.append(data)
    return events


def claude_usage(events: list[dict[str, Any]]) -> ReportedUsage | str:
    """Claude Code's usage from its ``result`` line, or why it is unknown."""
    results = [e for e in events if e.get("type") == "result"]
    if not results:
        return "no result line in the stream"
    counts = _fields(results[-1].get("usage"), CLAUDE_FIELDS, "result usage")
    if isinstance(counts, str):
        return counts
    return ReportedUsage(
        counts["input_tokens"],
        counts["cache_creation_input_tokens"],
        counts["cache_read_input_tokens"],
        counts["output_tokens"],
    )


def codex_usage(events: list[dict[str, Any]]) -> ReportedUsage | str:
    """Codex's usage summed over its ``turn.completed`` lines, or why it is unknown."""
    turns = [e for e in events if e.get("type") == "turn.completed"]
    if not turns:
        return "no turn.completed line in the stream"
    plain = read = output = 0
    for turn in turns:
        counts = _fields(turn.get("usage"), CODEX_FIELDS, "turn.completed usage")
        if isinstance(counts, str):
            return counts
        if counts["cached_input_tokens"] > counts["input_tokens"]:
            return "turn.completed usage: cached_input_tokens exceeds input_tokens"
        plain += counts["input_tokens"] - counts["cached_input_tokens"]
        read += counts["cached_input_tokens"]
        output += counts["output_tokens"]
    return ReportedUsage(plain, 0, read, output)


def reported_usage(run_dir: Path, root: Path, agent: str) -> ReportedUsage | str:
    """The usage recorded in ``run_dir/stream.jsonl`` for ``agent`` (``codex`` reads Codex's
    events, every other agent Claude Code's, as the replay simulation writes them), or why
    it is unknown. The stream is read through the guarded reader."""
    text = read_text(run_dir / "stream.jsonl", root, limit=STREAM_MAX_BYTES)
    if isinstance(text, TextProblem):
        return f"stream.jsonl: {text}"
    events = json_lines(text)
    return codex_usage(events) if agent == "codex" else claude_usage(events)
