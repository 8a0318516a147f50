"""How byte and token counts read for a person: ``38.2 KiB``, ``9.6k``.

The app's meters and tables and the CLI's run confirmation say sizes the same way, so both
take them from here.
"""

from __future__ import annotations

import math
from typing import Any

from .lean_dataclass import dataclass

KIB = 1024
"""Bytes in a kibibyte: sizes are binary (KiB, MiB), as the thresholds are configured."""


def human_bytes(size: int) -> str:
    """``512 B``, ``38.2 KiB``, ``1.4 MiB`` (a negative size keeps its ``-``)."""
    magnitude = abs(size)
    if magnitude < KIB:
        return f"{size} B"
    if magnitude < KIB * KIB:
        return f"{size / KIB:.1f} KiB"
    return f"{size / (KIB * KIB):.1f} MiB"


def human_tokens(tokens: int | None) -> str:
    """``812``, ``9.6k``, ``1.2M``; ``…`` while not counted yet."""
    if tokens is None:
        return "…"
    magnitude = abs(tokens)
    if magnitude < 1000:
        return str(tokens)
    if magnitude < 1_000_000:
        return f"{tokens / 1000:.1f}k"
    return f"{tokens / 1_000_000:.1f}M"


MAX_PLAUSIBLE_COST_USD = 100_000.0
"""The most one run can plausibly cost; a reported cost above it is not believed."""
MAX_PLAUSIBLE_TOKENS = 100_000_000_000
"""The most tokens one count of one run can plausibly hold."""


def _number(value: object) -> float | None:
    """``value`` as a float when it is a JSON number (never a bool); an int too large for a
    float is infinite."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        return float(value)
    except OverflowError:
        return math.inf if value > 0 else -math.inf


def reported_cost(value: object) -> float | None:
    """A cost field of the agent's output as a float, unjudged (None when not a number): what
    the run record keeps; :func:`valid_cost` says whether it is believed."""
    return _number(value)


def valid_cost(value: object) -> float | None:
    """A cost an agent reported, when it is one: a finite, non-negative, plausible number of
    US dollars; None otherwise (shown as :func:`cost_label` says, left out of any sum)."""
    number = _number(value)
    if number is None or not math.isfinite(number) or not 0 <= number <= MAX_PLAUSIBLE_COST_USD:
        return None
    return number


def valid_tokens(value: object) -> int | None:
    """A token count an agent reported, when it is one: a non-negative, plausible integer."""
    if isinstance(value, bool) or not isinstance(value, int):
        return None
    return value if 0 <= value <= MAX_PLAUSIBLE_TOKENS else None


def shown_number(value: object) -> str:
    """A reported value as a short, printable text, however large: ``1e+308``, ``-5``,
    ``a 400-digit number``."""
    if isinstance(value, int) and not isinstance(value, bool):
        digits = len(str(abs(value))) if abs(value) < 10**4300 else 4300
        return str(value) if digits <= 15 else f"a {digits}-digit number"
    if isinstance(value, float):
        return repr(value)
    return type(value).__name__


def cost_label(value: object) -> str:
    """``$0.0123``; ``—`` when none was reported; ``invalid (1e+308)`` when the value is not a
    plausible cost."""
    if value is None:
        return "—"
    cost = valid_cost(value)
    return f"${cost:.4f}" if cost is not None else f"invalid ({shown_number(value)})"


def tokens_total(*counts: object) -> tuple[int, tuple[str, ...]]:
    """The sum of the plausible counts, and ``invalid (value)`` for each one left out."""
    total = 0
    invalid: list[str] = []
    for count in counts:
        tokens = valid_tokens(count)
        if tokens is None:
            invalid.append(f"invalid ({shown_number(count)})")
        else:
            total += tokens
    return total, tuple(invalid)


def context_share(tokens: object, window: object) -> float | None:
    """``tokens`` as a fraction of the context ``window``, when both are plausible counts and
    the window is not empty; None otherwise."""
    used, size = valid_tokens(tokens), valid_tokens(window)
    if used is None or not size:
        return None
    return used / size


SENT_LABEL = "sent to the agent"
"""What a prompt's size counts on every face: the bytes the agent receives, the system prompt
and the user message as composed (``system.md`` and ``user.md`` of its run, byte for byte)."""
UNREAD_LABEL = "on disk, not read"
"""What a file's size counts where the file is too large to read: its size on disk, never
sent (the injection's size, which the warning and error lines judge, counts it)."""


@dataclass(frozen=True)
class PromptSize:
    """One prompt's size, labelled the same on every face (``inspect``, ``compose --json``, the
    app's meter and copy menu): the bytes sent, and apart, any bytes on disk left unread.

    Attributes:
        system_bytes: the composed system prompt, UTF-8.
        user_bytes: the composed user message, UTF-8.
        unread_bytes: the size on disk of the files too large to read (0 when none).
    """

    system_bytes: int
    user_bytes: int
    unread_bytes: int = 0

    @property
    def sent_bytes(self) -> int:
        """The bytes the agent receives: system prompt and user message."""
        return self.system_bytes + self.user_bytes

    def describe(self) -> str:
        """``10,138 B sent to the agent (system prompt 10,115 B + user message 23 B, as
        composed)``, then ``; 174,592 B more on disk, not read`` when a file was too large."""
        text = (
            f"{self.sent_bytes:,} B {SENT_LABEL} (system prompt {self.system_bytes:,} B + "
            f"user message {self.user_bytes:,} B, as composed)"
        )
        if self.unread_bytes:
            text += f"; {self.unread_bytes:,} B more {UNREAD_LABEL}"
        return text

    def to_dict(self) -> dict[str, Any]:
        """The ``size`` of ``inspect --json`` and ``compose --json``."""
        return {
            "sent_bytes": self.sent_bytes,
            "system_bytes": self.system_bytes,
            "user_bytes": self.user_bytes,
            "unread_bytes": self.unread_bytes,
            "label": SENT_LABEL,
            "unread_label": UNREAD_LABEL,
            "text": self.describe(),
        }
