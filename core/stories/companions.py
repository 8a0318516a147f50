"""Companion files: files written about a story that are not the story.

BMAD and the tools around it leave files beside a story file whose names hold its key: the
story context (``<story-file-stem>.context.xml`` from BMAD v5's story-context workflow, or a
``…-context.md``), run reports (``bmad-dev-auto-result-2-2-….md``), validation reports, code
reviews, change proposals, epic retrospectives (``epic12-13-14-retro-….md``). Each one may
even open with a ``# Story <key>: …`` heading. None of them is the story's own file, and
none decides its status: :func:`companion_kind` names what such a file is, from its name and
(when read) its first heading; :func:`sibling_companion` names a file called after another
file beside it with a report's or review's word added (``X-report.md`` beside ``X.md``).
"""

from __future__ import annotations

import re
from collections.abc import Collection

from ..vocabulary import COMPANION_KINDS
from .keys import leading_key

__all__ = [
    "COMPANION_KINDS",
    "companion_kind",
    "context_stem",
    "says_context",
    "sibling_companion",
]

# The name's words: a story context ends its stem with `context` (`.context.xml`,
# `-context.md`, `_story_context.md`).
_CONTEXT_NAME = re.compile(r"[-._]context\.(?:md|xml)$", re.IGNORECASE)
_NAME_KINDS = (
    ("retro", re.compile(r"(?<![a-z])retro(?:spective)?(?![a-z])", re.IGNORECASE)),
    ("validation", re.compile(r"(?<![a-z])validat(?:ion|e)[-_.]report(?![a-z])", re.IGNORECASE)),
    (
        "report",
        re.compile(
            r"(?<![a-z])results?(?![a-z])|[-_.]report(?:[-_.][0-9][-_.0-9]*)?\.md$"
            r"|(?<![a-z])run[-_.]?log(?![a-z])",
            re.IGNORECASE,
        ),
    ),
    ("validation", re.compile(r"(?:^|[-_.])validat(?:ion|e)[-_]", re.IGNORECASE)),
    ("review", re.compile(r"(?<![a-z])code[-_.]?review(?![a-z])|[-_.]review\.md$", re.IGNORECASE)),
    ("proposal", re.compile(r"(?<![a-z])change[-_.]proposal(?![a-z])", re.IGNORECASE)),
)
# `results` followed by a word or the name's end (`-search-results-enhancement.md`,
# `-stop-reason-to-results.md`), where a run result's name goes on with a key or a date.
_SLUG_RESULTS = re.compile(r"(?<![a-z])results?(?=[-_.][a-z])", re.IGNORECASE)
# A first heading saying what the file is: `# Story 9.16: Sync — Context`, `# Story Context`.
_CONTEXT_HEADING = re.compile(r"\bstory\s+context\b|[-–—:]\s*context\s*$|^context\b", re.IGNORECASE)
_HEADING_KINDS = (
    ("retro", re.compile(r"^(?:epics?\s+\S+(?:\s+\S+)?\s+)?retro(?:spective)?\b", re.IGNORECASE)),
    ("validation", re.compile(r"^validation\s+report\b", re.IGNORECASE)),
    ("review", re.compile(r"^(?:senior\s+developer\s+review|code\s+review)\b", re.IGNORECASE)),
    ("proposal", re.compile(r"^(?:sprint\s+)?change\s+proposal\b", re.IGNORECASE)),
)
# Every name kind holds one of these words: most names hold none, and are answered by a
# few substring tests (discovery asks this of thousands of names).
_NAME_WORDS = ("context", "retro", "result", "report", "log", "validat", "review", "proposal")
_STORY_HEADING = re.compile(r"^Story\s+[A-Za-z0-9]+(?:[-._][A-Za-z0-9]+)+", re.IGNORECASE)
# A companion's last word (a date may follow): what :func:`sibling_companion` strips.
_SUFFIX = re.compile(
    r"[-_.](?P<word>code[-_.]?review|review|report|validation|results?)(?:[-_.][0-9][-_.0-9]*)?$"
)
_SUFFIX_KINDS = {
    "code": "review",
    "revi": "review",
    "repo": "report",
    "resu": "report",
    "vali": "validation",
}


def companion_kind(name: str, heading: str | None = None) -> str | None:
    """What a companion file is, or None when ``name`` (with ``heading``) is no companion.

    A context says so in its name (``….context.xml``, ``…-context.md``) or its heading
    (``# … - Context``, ``# Story Context``): it is a context whatever else it says. The
    other kinds come from the name's words (``retro``, ``-result-``, ``-report.md``,
    ``validation-report``, ``code-review``, ``change-proposal``), else from a heading that is
    no story heading (``# Code Review``, ``# Epic 12 Retrospective``). A file whose name
    starts with a story key and whose heading is that story's (``2-3-code-review.md`` headed
    ``# Story 2.3: Code review``) is a story about such a thing, not a companion; a key in
    the middle of a name (``bmad-dev-auto-result-2-2-….md``) never makes a file a story.

    Args:
        name: the file's name (no folder).
        heading: its first heading's text (without ``#``), None when not read.
    """
    if heading is None and not any(word in name.lower() for word in _NAME_WORDS):
        return None
    if _CONTEXT_NAME.search(name) or (heading and says_context(heading)):
        return "context"
    story_heading = heading is not None and _STORY_HEADING.match(heading.strip()) is not None
    kind = next((kind for kind, words in _NAME_KINDS if words.search(name)), None)
    if kind == "report" and _SLUG_RESULTS.search(name) and leading_key(name) is not None:
        # After the story's key, `results` is a word of its slug (`story-2.2-search-results-
        # enhancement.md`); a run result names its key after the word (`…-result-2-2-….md`).
        rest = _SLUG_RESULTS.sub("", name)
        kind = next((k for k, words in _NAME_KINDS if words.search(rest)), None)
    if kind is None and heading and not story_heading:
        kind = next((k for k, words in _HEADING_KINDS if words.match(heading.strip())), None)
    if kind is not None and story_heading and leading_key(name) is not None:
        return None
    return kind


def sibling_companion(name: str, stems: Collection[str]) -> str | None:
    """What ``name`` is when it is another file's name with a companion's suffix
    (``story-13.14-design-review-report.md`` beside ``story-13.14-design-review.md``,
    ``1-2-x-code-review.md`` beside ``1-2-x.md``): ``report``, ``review`` or ``validation``;
    None when no file of ``stems`` (lower-cased names without ``.md``) is named so.

    Such a file is about its sibling, whatever its heading says (``# Story 13.14 - Design
    Review Report``): a story's slug may end with ``review`` (``design-review``), but not
    with the name of another file beside it plus a report's word.
    """
    lower = name.lower()
    rest = lower[:-3] if lower.endswith(".md") else lower
    kind: str | None = None
    while (match := _SUFFIX.search(rest)) is not None:
        kind = kind or _SUFFIX_KINDS[match.group("word")[:4]]
        rest = rest[: match.start()]
        if rest in stems:
            return companion_kind(name) or kind
    return None


def says_context(heading: str) -> bool:
    """Whether a first heading calls its file a story's context (``Story 9.16: Sync -
    Context``, ``Story Context: 2.3``)."""
    return _CONTEXT_HEADING.search(heading.strip()) is not None


def context_stem(name: str) -> str | None:
    """The name a story context is written after: ``1-2-x`` for ``1-2-x.context.xml`` or
    ``1-2-x-context.md``; None when ``name`` is no context's name."""
    match = _CONTEXT_NAME.search(name)
    return name[: match.start()] if match is not None else None
