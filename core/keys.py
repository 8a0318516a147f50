"""Story keys: one canonical form, and matching on key boundaries.

``1.2``, ``1-2`` and ``1_2`` are one key; matching is case-insensitive but on boundaries, so
``A-1`` matches ``sprint-a-1-discovery.md`` and never ``sprint-a-10-story.md`` (seed 000's
plain substring test does — a bug not copied here).
"""

from __future__ import annotations

import re
from functools import lru_cache

_SEPARATORS = re.compile(r"[-._\s]+")


def normalize_key(key: str) -> str:
    """Return the canonical form of a story key: lower case, parts joined by ``-``."""
    parts = [part for part in _SEPARATORS.split(key.strip().lower()) if part]
    return "-".join(parts)


@lru_cache(maxsize=1024)
def key_pattern(key: str) -> re.Pattern[str]:
    """A regex that finds ``key`` in a file name on key boundaries, case-insensitively.

    A boundary is the start or end of the name or any character that is not a letter or a
    digit, so ``1-1`` does not match ``11-1-x.md`` or ``1-10-x.md``.
    """
    parts = [re.escape(part) for part in normalize_key(key).split("-") if part]
    if not parts:
        raise ValueError(f"empty story key: {key!r}")
    body = r"[-._]".join(parts)
    return re.compile(rf"(?<![a-z0-9]){body}(?![a-z0-9])", re.IGNORECASE)


def name_matches_key(name: str, key: str) -> bool:
    """True when the file name ``name`` contains ``key`` on key boundaries."""
    return key_pattern(key).search(name) is not None
