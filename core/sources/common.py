"""What every story source shares: its result type, its paths and its sort order."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from ..stories import SkippedFile, Story, UnreadableEntry


@dataclass(frozen=True)
class SourceResult:
    """What one story source found: its stories in display order, skipped files, warnings,
    entries it could not read and quick specs tied to no story."""

    stories: tuple[Story, ...] = ()
    skipped: tuple[SkippedFile, ...] = ()
    warnings: tuple[str, ...] = ()
    unreadable: tuple[UnreadableEntry, ...] = ()
    unattached: tuple[str, ...] = ()


def relpath(root: Path, path: Path) -> str:
    """``path`` relative to ``root`` with forward slashes, without resolving symlinks.

    Paths outside ``root`` (a configured folder such as ``../shared``) stay absolute.
    """
    try:
        return path.relative_to(root).as_posix()
    except ValueError:
        return path.as_posix()


def natural_key(key: str) -> tuple[tuple[int, int, str], ...]:
    """Sort key for a normalized story key: numbers by value, so ``1-10`` follows ``1-9``.

    Numeric parts sort before alphabetic ones (``1-1`` before ``a-1``); a number with a
    letter sorts right after the number (``1-1``, ``1-1a``, ``1-2``).
    """
    out: list[tuple[int, int, str]] = []
    for part in key.split("-"):
        match = _NUMBERED.match(part)
        out.append((0, int(match.group(1)), match.group(2)) if match else (1, 0, part))
    return tuple(out)


_NUMBERED = re.compile(r"^(\d+)([a-z]*)$")
