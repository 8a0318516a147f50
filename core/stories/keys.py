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


# A story key at the start of a file name: ``1-2``, ``22-3``, ``1a-2`` (an epic number, maybe
# with letters) or ``a-1``, ``ab-2`` (a short letter epic), then a separator and the story
# number, ended by a separator, a dot or the end of the name. Longer words (``epic-1``,
# ``notes-2``, ``report-2026``) are words of a name, not keys.
_LEADING_KEY = re.compile(r"^(?P<key>(?:\d+[a-z]*|[a-z]{1,3})[-._]\d+)(?![a-z0-9])", re.IGNORECASE)
# The prefixes of seed 000's patterns that come before a key: ``sprint-<key>…`` (a discovery
# note or a story file) and ``tech-spec-<key>…``.
_PREFIX = re.compile(r"^(?:(?P<sprint>sprint|story)|(?P<tech>tech[-_]?spec))[-._]", re.IGNORECASE)
_DISCOVERY = re.compile(r"discovery", re.IGNORECASE)
_TECH_SPEC = re.compile(r"tech[-_]?spec", re.IGNORECASE)


def leading_key(name: str) -> str | None:
    """The normalized story key a file name starts with (``5-4-wcag-2-1.md`` → ``5-4``).

    Seed 000's prefixes are looked through: ``sprint-1-2-discovery.md`` and
    ``tech-spec-1-2-x.md`` start with ``1-2``. A name that starts with none is None.
    """
    rest = name
    prefix = _PREFIX.match(rest)
    if prefix is not None:
        rest = rest[prefix.end() :]
    match = _LEADING_KEY.match(rest)
    return normalize_key(match.group("key")) if match else None


def artifact_category(name: str, key: str) -> str | None:
    """The category of the artifact ``name`` for story ``key``, or None when not its file.

    A name that starts with a story key (after seed 000's ``sprint-`` / ``story-`` /
    ``tech-spec-`` prefixes) belongs to that key alone: ``5-4-wcag-2-1-aa.md`` is story 5-4's
    and never story 2-1's. The category comes from the name's shape, not from a word anywhere
    in it: ``tech-spec-<key>…`` is a tech-spec, ``sprint-<key>-…discovery…`` a discovery note,
    and ``<key>-…`` (even ``22-3-…-agent-discovery.md``) a file of the story itself. Names that
    start with no key keep seed 000's patterns, matched on key boundaries: ``*{key}*discovery*``,
    ``*tech-spec*{key}*`` / ``*{key}*tech-spec*``, else ``*{key}*``.

    Returns:
        ``story``, ``discovery`` or ``tech-spec``; None when the file is not ``key``'s.
    """
    wanted = normalize_key(key)
    if not wanted:
        return None
    rest = name
    prefix = _PREFIX.match(rest)
    if prefix is not None:
        rest = rest[prefix.end() :]
    lead = _LEADING_KEY.match(rest)
    if lead is not None:
        if normalize_key(lead.group("key")) != wanted:
            return None
        if prefix is not None and prefix.group("tech"):
            return "tech-spec"
        if prefix is not None and prefix.group("sprint") and _DISCOVERY.search(rest[lead.end() :]):
            return "discovery"
        return "story"
    match = key_pattern(wanted).search(name)
    if match is None:
        return None
    if _DISCOVERY.search(name, match.end()):
        return "discovery"
    if _TECH_SPEC.search(name):
        return "tech-spec"
    return "story"
