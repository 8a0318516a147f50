"""A story's status as written: BMAD's words, their older and v7 spellings, and the rest.

BMAD's stories move through ``backlog → ready-for-dev → in-progress → review → done``
(:data:`~.stories.STATUSES`). Older releases wrote ``drafted`` (now ready-for-dev) and
``contexted`` (now in-progress); BMAD's own sprint planning reads them that way. A v7 plan
adds ``draft``, ``in-review``, ``built``, ``blocked`` and ``dropped``; its board shows draft
as backlog, blocked as in-progress and in-review and built as review. Anything else is kept
verbatim and marked unknown — BMAD's own rule for such values is "ask, never guess", so an
unknown status is never read as backlog or done (``done-parcial`` is not done).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .stories import STATUSES

LEGACY_STATUSES = {"drafted": "ready-for-dev", "contexted": "in-progress"}
"""BMAD v6's older story statuses, read as its sprint planning reads them."""

PLAN_BOARD = {
    "draft": "backlog",
    "blocked": "in-progress",
    "in-review": "review",
    "built": "review",
}
"""A v7 plan's statuses as BMAD's board shows them (``ready-for-dev``, ``in-progress`` and
``done`` are the story statuses themselves)."""

_SYNONYMS = {
    # Hand-written and BMAD v4 story files: the same states in other words.
    "todo": "backlog",
    "approved": "ready-for-dev",
    "ready": "ready-for-dev",
    "inprogress": "in-progress",
    "ready-for-review": "review",
    "complete": "done",
    "completed": "done",
}
# Emphasis and code marks around the word, a trailing remark in parentheses or after a dash
# with spaces ("done (reviewed)", "Done - merged"), and leading marks such as ✅.
_MARKS = re.compile(r"[*_`]+")
_REMARK = re.compile(r"\s*(?:\(.*\)|\s[-–—]\s.*|<!--.*-->)\s*$")
_LEADING = re.compile(r"^[^A-Za-z0-9]+")


@dataclass(frozen=True)
class StatusReading:
    """What one written status means.

    Attributes:
        status: one of :data:`~.stories.STATUSES`, or the written value itself when unknown.
        known: False when the value is outside every known vocabulary.
        note: how the value was read when it is not a story status itself
            (``legacy 'contexted' read as in-progress``); empty otherwise.
    """

    status: str
    known: bool
    note: str = ""


def read_status(raw: str) -> StatusReading:
    """Read one written status (a sprint-status value, a story file's ``Status:`` line, a
    spec's or plan's ``status:``)."""
    written = raw.strip()
    cleaned = _LEADING.sub("", _REMARK.sub("", _MARKS.sub("", written)))
    word = re.sub(r"[^a-z]+", "-", cleaned.lower()).strip("-")
    if word in STATUSES:
        return StatusReading(word, True)
    if word in LEGACY_STATUSES:
        status = LEGACY_STATUSES[word]
        return StatusReading(status, True, f"legacy '{written}' read as {status}")
    if word in PLAN_BOARD:
        status = PLAN_BOARD[word]
        return StatusReading(status, True, f"plan status '{written}' shown as {status}")
    if word in _SYNONYMS:
        return StatusReading(_SYNONYMS[word], True)
    return StatusReading(written, False)
