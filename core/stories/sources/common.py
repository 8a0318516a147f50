"""What every story source shares: its result type, its paths and its sort order."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..model import SkippedFile, Story


@dataclass(frozen=True)
class SourceResult:
    """What one story source found: its stories in display order, skipped files, warnings."""

    stories: tuple[Story, ...] = ()
    skipped: tuple[SkippedFile, ...] = ()
    warnings: tuple[str, ...] = ()


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

    Numeric parts sort before alphabetic ones (``1-1`` before ``a-1``).
    """
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in key.split("-"))
