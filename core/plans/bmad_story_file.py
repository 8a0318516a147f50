"""A BMAD story file: what its first heading, ``Status:`` line and tasks say.

A file is a story's when its first heading is ``# Story <key>: <title>`` (or, for a file named
after a sprint-status entry, whatever its heading says); only the head of a file is
read until that heading shows it is one. Status words of older BMAD releases and hand-written
files are read as the canonical ones (:func:`~promptdeck.core.stories.model.read_status`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from ..lean_dataclass import dataclass
from ..project.textfiles import (
    DEFAULT_READ_LIMIT,
    HEAD_BYTES,
    TextProblem,
    read_text_file,
    read_text_head,
)
from ..stories.keys import normalize_key
from ..stories.model import STATUS_LINE_MAX, SkippedFile, Task
from .markdown import (
    Heading,
    TaskNestingError,
    first_heading,
    iter_headings,
    parse_task_list,
    section_lines,
)

DEFAULT_FILE_STATUS = "ready-for-dev"
"""Status of a story file with no ``Status:`` line and no sprint-status entry: BMAD's
sprint planning treats "the story file exists" as ready for development."""

_STORY_HEADING = re.compile(
    r"^Story\s+(?P<key>[A-Za-z0-9]+(?:[-._][A-Za-z0-9]+)+)"
    r"(?:\s*:\s*|\s+[-–—]\s+|\s*$)(?P<title>.*)$"
)
STORY_ENTRY = re.compile(r"^(?P<id>(?:\d+[A-Za-z]*|[A-Za-z]+)-\d+)(?:-(?P<slug>.+))?$")
"""A sprint-status entry naming a story: its id (``1-2``) and slug (``user-login``)."""
_STORYISH_NAME = re.compile(
    r"^(?:(?:story|sprint)[-_.]?)?(?:\d+[a-z]?|[a-z])[-._]\d+[a-z]?(?![a-z0-9])", re.IGNORECASE
)
_STATUS_LINE = re.compile(
    r"^\s*(?:[-*]\s+)?\**Status\**\s*:\s*\**\s*(?P<value>.*?)\s*$", re.IGNORECASE
)
_STATUS_HEADING = re.compile(r"^Status(?:\s*:\s*(?P<value>.*))?$", re.IGNORECASE)
# The next bold field on the same line ends a status: `**Status:** done **Epic:** 2.5 - …`
# (colon inside or outside the bold).
_NEXT_FIELD = re.compile(r"\s\*\*[^*\n]+?(?::\*\*|\*\*\s*:)")
# A first section that holds the story's fields (`## Story Info` with `- **Status:** Done`):
# its status line is the story's, where a later section's (`## Auto Run Result`) is not.
_INFO_HEADING = re.compile(
    r"^(?:story\s+)?(?:info(?:rmation)?|details|metadata|meta|overview|summary)\s*$",
    re.IGNORECASE,
)
# A status as hand-written files emphasise and annotate it: `**cancelled** (superseded — see
# the banner)`, `_done_`, `` `review` ``. The emphasis is Markdown, the parenthesis a note.
_EMPHASIS = "*_`"
_STATUS_NOTE = re.compile(r"^(?P<status>[^()]*?)\s*\((?P<note>.*)\)\s*$")
_TASKS_HEADING = re.compile(r"^Tasks\b", re.IGNORECASE)


@dataclass(frozen=True)
class StoryFile:
    """What a story file says about its story."""

    id: str
    key: str
    title: str
    raw_status: str | None
    tasks: tuple[Task, ...]
    path: str
    status_line: int | None = None
    status_note: str = ""
    """A note written after the status (``Status: cancelled (superseded by 1-2)``)."""
    heading: str = ""
    """The file's first heading as written (``Story 9.16: Sync - Context``): what tells a
    story from a companion that opens like one (:mod:`promptdeck.core.stories.companions`)."""


def _story_heading(heading: Heading | None) -> re.Match[str] | None:
    if heading is None or heading.level != 1:
        return None
    return _STORY_HEADING.match(heading.text)


def clean_status(value: str) -> tuple[str, str]:
    """A ``Status:`` value without Markdown emphasis, and its trailing parenthetical note:
    ``**cancelled** (superseded)`` → ``("cancelled", "superseded")``."""
    status, note = value.strip(), ""
    found = _STATUS_NOTE.match(status)
    if found is not None and found.group("status").strip(_EMPHASIS + " "):
        status, note = found.group("status"), found.group("note").strip()
    return status.strip().strip(_EMPHASIS).strip(), note


def _file_status(lines: list[str], headings: list[Heading]) -> tuple[str, int] | None:
    """The ``Status:`` value and its 1-based line: the first one before the first section or
    inside a first section of the story's fields (``## Story Info``: ``- **Status:** Done``),
    else the one in a ``## Status`` section. A frontmatter ``status:`` or a later ``## Auto
    Run Result`` status is not the story's. A value followed by another bold field on its
    line (``done **Epic:** 2.5``) ends before it."""
    sections = [h for h in headings if h.level >= 2]
    first_section = sections[0].line if sections else len(lines)
    if sections and _INFO_HEADING.match(sections[0].text):
        first_section = sections[1].line if len(sections) > 1 else len(lines)
    start = next((h.line for h in headings if h.level == 1), 0)
    for number in range(start, first_section):
        match = _STATUS_LINE.match(lines[number][:STATUS_LINE_MAX])
        if match and match.group("value"):
            return _NEXT_FIELD.split(match.group("value"), maxsplit=1)[0], number + 1
    for heading in headings:
        if heading.level < 2:
            continue
        match = _STATUS_HEADING.match(heading.text)
        if match is None:
            continue
        if match.group("value"):
            return match.group("value")[:STATUS_LINE_MAX], heading.line + 1
        for offset, line in enumerate(section_lines(lines, heading, headings)):
            if line.strip():
                line = line[:STATUS_LINE_MAX]
                value = _STATUS_LINE.match(line)
                return (value.group("value") if value else line.strip()), heading.line + 2 + offset
    return None


def parse_story_text(text: str, path: str, named_id: str | None = None) -> StoryFile | None:
    """Parse a story file's text; None when its first heading is not ``# Story <key>: …``.

    Args:
        text: the file's text.
        path: its root-relative path.
        named_id: the story id the file's name gives it (``<entry>.md`` of a sprint-status
            entry, or a name starting with its key): then a first heading of another shape
            is the story's title.
    """
    lines = text.splitlines()
    headings = list(iter_headings(lines))
    match = _story_heading(headings[0] if headings else None)
    if match is None:
        if named_id is None:
            return None
        first = headings[0].text if headings and headings[0].level == 1 else ""
        return _story_file(named_id, first, lines, headings, path, first)
    heading = headings[0].text
    return _story_file(match.group("key"), match.group("title"), lines, headings, path, heading)


def _story_file(
    story_id: str,
    title: str,
    lines: list[str],
    headings: list[Heading],
    path: str,
    first_heading_text: str = "",
) -> StoryFile:
    tasks: tuple[Task, ...] = ()
    for heading in headings:
        if heading.level == 2 and _TASKS_HEADING.match(heading.text):
            tasks = parse_task_list(section_lines(lines, heading, headings))
            break
    status = _file_status(lines, headings)
    value, note = clean_status(status[0]) if status else ("", "")
    return StoryFile(
        id=story_id,
        key=normalize_key(story_id),
        title=title.strip().strip("*_").strip(),
        raw_status=value or None,
        tasks=tasks,
        path=path,
        status_line=status[1] if status and value else None,
        status_note=note,
        heading=first_heading_text,
    )


def _complete_lines(text: str, complete: bool) -> list[str]:
    lines = text.splitlines()
    if not complete and lines and not text.endswith(("\n", "\r")):
        lines.pop()  # cut by the read limit
    return lines


def _leading_heading(text: str, complete: bool) -> Heading | None:
    """The first heading of a file's head, or None when more of the file is needed.

    Most files open with their heading on the first non-blank line; that case is answered
    without splitting the whole head into lines.
    """
    start = len(text) - len(text.lstrip())
    end = text.find("\n", start)
    first = text[start:] if end < 0 else text[start:end]
    if first.startswith("#") and (end >= 0 or complete):
        quick = first_heading([first])
        if quick is not None:
            return quick
    return first_heading(_complete_lines(text, complete))


def read_story_file(
    path: str | os.PathLike[str],
    rel: str,
    *,
    root: Path | None = None,
    limit: int = DEFAULT_READ_LIMIT,
    listed: bool = False,
) -> StoryFile | SkippedFile | None:
    """Read one candidate story file, through the guarded reader.

    Only the head of the file is read until its first heading shows it is a story.

    Args:
        path: the file.
        rel: its root-relative path, used in the result.
        root: the project root the file must resolve inside (None: not checked).
        limit: the most bytes read of a whole story file.
        listed: a folder listing showed a regular, non-symlink file in a folder inside the
            root (see :func:`~promptdeck.core.project.textfiles.read_file_bytes`).

    Returns:
        The parsed story; a :class:`SkippedFile` when the file is not usable text or is named
        like a story but has no story heading; None for other Markdown (context documents).
    """
    head = read_text_head(path, HEAD_BYTES, root=root, limit=limit, listed=listed)
    if isinstance(head, TextProblem):
        return SkippedFile(rel, str(head))
    text, complete = head
    heading = _leading_heading(text, complete)
    if heading is None and not complete:
        full = read_text_file(path, root=root, limit=limit, listed=listed)
        if isinstance(full, TextProblem):
            return SkippedFile(rel, str(full))
        text, complete = full, True
        heading = first_heading(text.splitlines())
    if _story_heading(heading) is None:
        if _STORYISH_NAME.match(os.path.basename(path)):
            found = f"first heading is '{heading.text}'" if heading else "no heading"
            return SkippedFile(rel, f"no-story-heading: {found}, expected '# Story <key>: <title>'")
        return None
    if not complete:
        full = read_text_file(path, root=root, limit=limit, listed=listed)
        if isinstance(full, TextProblem):
            return SkippedFile(rel, str(full))
        text = full
    try:
        return parse_story_text(text, rel)
    except TaskNestingError as exc:
        return SkippedFile(rel, f"unreadable: {exc}")


def named_story_file(
    path: str,
    rel: str,
    lead: str | None,
    entries_by_key: dict[str, str],
    root: Path | None = None,
    limit: int = DEFAULT_READ_LIMIT,
) -> StoryFile | None:
    """The story file of a sprint-status entry whose heading is not ``# Story <key>: …``.

    A file whose name starts with an entry's key (``lead``, read on key boundaries by the
    caller: ``1-2-user-login.md``, ``TD-15b-1-shim-imports.md``) is that story's file,
    whatever its heading says (``# Tech Debt Story TD-15b-1: …``, ``# iOS Debug Logger``):
    its name says so. Whether it is a companion instead is the caller's question.
    """
    if lead is None or lead not in entries_by_key:
        return None
    text = read_text_file(path, root=root, limit=limit)
    if isinstance(text, TextProblem):
        return None
    entry = STORY_ENTRY.match(entries_by_key[lead])
    story_id = entry.group("id") if entry and normalize_key(entry.group("id")) == lead else lead
    try:
        return parse_story_text(text, rel, story_id)
    except TaskNestingError:
        return None


_V4_NAME = re.compile(r"^(?P<epic>\d+)\.(?P<story>\d+[a-z]?)\.(?=[^/]*[A-Za-z])", re.IGNORECASE)
"""A BMAD v4 story file's name: ``<epic>.<story>.<slug>.md`` (``1.5.evidence-plan.story.md``),
its slug holding a letter (release notes such as ``1.2.0.md`` are no story)."""


def v4_named_story_file(
    path: str, rel: str, root: Path | None = None, limit: int = DEFAULT_READ_LIMIT
) -> StoryFile | None:
    """The story a v4 story file's name gives it, whatever its heading says (``# Story:
    Evidence Extraction`` names no key): in BMAD v4 the story files are the plan, named by
    ``devStoryLocation``'s convention. None when the name is no v4 story name."""
    found = _V4_NAME.match(os.path.basename(path))
    if found is None:
        return None
    text = read_text_file(path, root=root, limit=limit)
    if isinstance(text, TextProblem):
        return None
    try:
        return parse_story_text(text, rel, f"{found.group('epic')}.{found.group('story')}")
    except TaskNestingError:
        return None
