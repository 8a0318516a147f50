"""How byte and token counts read for a person: ``38.2 KiB``, ``9.6k``.

The app's meters and tables and the CLI's run confirmation say sizes the same way, so both
take them from here.
"""

from __future__ import annotations

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
